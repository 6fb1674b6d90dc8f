"""Safe evaluation of trip-count expressions such as ``"n / 16"`` or ``"ceil(log2(n))"``.

The expression is parsed with :mod:`ast` and only numbers, names bound in ``env``, the operators
``+ - * / // % **`` (unary ``+``/``-`` too) and the functions ``min``, ``max``, ``ceil``, ``floor``,
``log2``, ``sqrt`` and ``abs`` are allowed. Anything else (attribute access, calls of other names,
subscripts, lambdas...) is rejected with :class:`ExpressionError`; nothing is ever passed to ``eval``.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Mapping

from kgpubench.errors import ExpressionError

__all__ = ["ExpressionError", "evaluate", "names_in"]


_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCS = {
    "min": min,
    "max": max,
    "ceil": math.ceil,
    "floor": math.floor,
    "log2": math.log2,
    "sqrt": math.sqrt,
    "abs": abs,
}


def evaluate(expression: str | float, env: Mapping[str, float] | None = None,
             *, what: str = "expression") -> float:
    """Evaluate an arithmetic ``expression`` with the names in ``env``.

    Parameters
    ----------
    expression : str or number
        A number, or an arithmetic expression over the names in ``env``.
    env : mapping of str to number, optional
        Values of the names the expression may use (sizes, ``grid_x``, ``nt``...).
    what : str
        How to name the expression in error messages (e.g. ``"trip count of loop L2"``).

    Returns
    -------
    float
        The value.

    Raises
    ------
    ExpressionError
        Syntax error, unknown name, forbidden construct, or arithmetic error (division by zero).
    """
    if isinstance(expression, bool):
        raise ExpressionError(f"{what}: got the boolean {expression!r}; expected a number or an expression.")
    if isinstance(expression, (int, float)):
        return float(expression)
    env = dict(env or {})
    text = str(expression).strip()
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"{what}: cannot parse {text!r} ({exc.msg}); expected an arithmetic "
                              "expression such as 'n / 16'.") from None
    try:
        return float(_eval(tree.body, env, what, text))
    except (ZeroDivisionError, OverflowError, ValueError) as exc:
        if isinstance(exc, ExpressionError):
            raise
        raise ExpressionError(f"{what}: evaluating {text!r} with {env} failed ({exc}).") from None


def names_in(expression: str | float) -> set[str]:
    """Return the variable names an expression uses (function names excluded)."""
    if isinstance(expression, (int, float)):
        return set()
    try:
        tree = ast.parse(str(expression).strip(), mode="eval")
    except SyntaxError:
        return set()
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in called}


def _eval(node: ast.AST, env: dict, what: str, text: str):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            known = ", ".join(sorted(env)) or "(none)"
            raise ExpressionError(f"{what}: unknown name {node.id!r} in {text!r}; known names: {known}. "
                                  "Pass it as a size (--size NAME=VALUE) or use a launch name.")
        return env[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left, env, what, text), _eval(node.right, env, what, text))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand, env, what, text))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS \
            and not node.keywords:
        args = [_eval(a, env, what, text) for a in node.args]
        return _FUNCS[node.func.id](*args)
    raise ExpressionError(f"{what}: {ast.unparse(node)!r} is not allowed in {text!r}; allowed: numbers, "
                          f"names, + - * / // % **, and {', '.join(sorted(_FUNCS))}.")
