"""Features of a kernel's CUDA source: alpha (seed 000), effective lines, branch statements.

Statements. The kernel body (comments, string literals and preprocessor lines removed) is cut into
statements at ``;`` and at braces; the parenthesised head of ``if``/``while``/``switch`` is a
statement of its own, and a ``for`` head gives up to three (init, condition, step).

* A **global-memory statement** (off-chip) dereferences a global pointer: a pointer parameter of the
  kernel, a file-scope ``__device__`` variable, or a local pointer initialised from one (``p[i]``,
  ``*p``, ``p->x``), or calls ``__ldg``; or reads a texture/surface (``tex1Dfetch``, ``tex2D``...).
* An **on-chip statement** is any other statement that does something (computes, assigns, calls,
  ``__syncthreads()``); pure declarations without initialiser, ``return``, ``break``, ``continue``
  and ``else``/``do`` are neither.
* **alpha** = on-chip statements / global-memory statements, each statement counted once (the seed's
  definition); with no global-memory statement the denominator is taken as 1.
* **effective lines**: lines of the body holding code other than braces.
* **branch statements**: ``if``, ``for``, ``while``, ``case``/``default`` labels, ``goto`` and each
  ternary ``?``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kgpubench.errors import UnknownNameError

__all__ = ["SourceFeatures", "kernel_body", "source_features", "strip_source"]

_TEXTURE = re.compile(r"\b(tex1Dfetch|tex1D|tex2D|tex3D|tex1DLayered|tex2DLayered|texCubemap\w*|tex2Dgather|"
                      r"surf[123]D\w*|surfCubemap\w*)\s*[<(]")
_KEYWORD_HEAD = re.compile(r"\b(if|while|switch|for)\s*\(")
_NEITHER = re.compile(r"^(return|break|continue|else|do|goto\s+\w+|case\b.*|default)\s*:?$")
_DECL_ONLY = re.compile(r"^(?:(?:const|volatile|static|register|unsigned|signed|__shared__|extern|struct|"
                        r"__restrict__)\s+)*[A-Za-z_][\w:<>]*\s*[\*&\s]*[A-Za-z_]\w*(\s*\[[^\]]*\])*"
                        r"(\s*,\s*\**\s*[A-Za-z_]\w*(\s*\[[^\]]*\])*)*$")


@dataclass(frozen=True)
class SourceFeatures:
    """Source-level features of one kernel (see the module doc for the definitions)."""

    alpha: float
    onchip_statements: int
    global_statements: int
    shared_statements: int
    constant_statements: int
    texture_statements: int
    statements: int
    source_lines: int
    branch_statements: int


def strip_source(text: str) -> str:
    """Blank comments, string/char literals and preprocessor lines, keeping line breaks."""
    out: list[str] = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        ch = text[i]
        if line_start and ch == "#":
            j = i
            while True:  # a directive with backslash continuations
                k = text.find("\n", j)
                if k < 0:
                    k = n
                if k > 0 and text[k - 1] == "\\" and k < n:
                    out.append("\n")
                    j = k + 1
                    continue
                break
            i = k
            continue
        if ch in " \t" and line_start:
            out.append(ch)
            i += 1
            continue
        line_start = ch == "\n"
        if text.startswith("//", i):
            k = text.find("\n", i)
            i = n if k < 0 else k
        elif text.startswith("/*", i):
            k = text.find("*/", i + 2)
            k = n if k < 0 else k + 2
            out.append("\n" * text.count("\n", i, k))
            i = k
        elif ch in "\"'":
            k = i + 1
            while k < n and text[k] != ch:
                k += 2 if text[k] == "\\" else 1
            out.append(ch + ch)
            i = k + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _match(text: str, pos: int, open_ch: str, close_ch: str) -> int:
    depth = 0
    for k in range(pos, len(text)):
        if text[k] == open_ch:
            depth += 1
        elif text[k] == close_ch:
            depth -= 1
            if depth == 0:
                return k
    return -1


def kernel_body(source: str, kernel: str) -> tuple[str, str, int]:
    """Find ``__global__`` function ``kernel`` in ``source``: return (parameters, body, body start line).

    ``source`` must already be stripped with :func:`strip_source`.

    Raises
    ------
    UnknownNameError
        No ``__global__`` function of that name has a body; the message lists the kernels found.
    """
    plain = kernel.split("::")[-1]
    found: list[str] = []
    for m in re.finditer(r"\b__global__\b", source):
        head_end = m.end()
        call = re.compile(r"([A-Za-z_]\w*)\s*\(")
        pos = head_end
        while (c := call.search(source, pos)) is not None:
            between = source[head_end:c.start()]
            if any(ch in between for ch in ";{}"):
                break
            close = _match(source, c.end() - 1, "(", ")")
            if c.group(1) == "__launch_bounds__":
                pos = close + 1
                continue
            found.append(c.group(1))
            rest = source[close + 1:]
            brace = re.match(r"\s*\{", rest)
            if c.group(1) == plain and brace:
                open_pos = close + 1 + brace.end() - 1
                end = _match(source, open_pos, "{", "}")
                line = source.count("\n", 0, open_pos) + 1
                return source[c.end():close], source[open_pos + 1:end], line
            break
    raise UnknownNameError(f"no __global__ function {kernel!r} with a body in the CUDA source; kernels found: "
                           f"{', '.join(sorted(set(found))) or '(none)'}.")


def _file_scope_names(source: str, qualifier: str) -> set[str]:
    names = set()
    for m in re.finditer(rf"\b{qualifier}\b([^;{{}}()]*?)\b([A-Za-z_]\w*)\s*(\[[^;]*)?(=[^;]*)?;", source):
        names.add(m.group(2))
    return names


def _pointer_params(params: str) -> set[str]:
    names = set()
    depth, buf, parts = 0, [], []
    for ch in params:
        depth += {"(": 1, "<": 1, ")": -1, ">": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    parts.append("".join(buf))
    for part in parts:
        ids = re.findall(r"[A-Za-z_]\w*", part)
        if "*" in part and ids:
            names.add(ids[-1])
    return names


def _statements(body: str) -> list[str]:
    out: list[str] = []
    pos = 0
    buf: list[str] = []
    while pos < len(body):
        m = _KEYWORD_HEAD.match(body, pos) if (pos == 0 or not (body[pos - 1].isalnum() or body[pos - 1] == "_")) \
            else None
        if m:
            close = _match(body, m.end() - 1, "(", ")")
            head = body[m.end():close]
            out.append("".join(buf))
            buf = []
            out.extend(head.split(";") if m.group(1) == "for" else [head])
            pos = close + 1
            continue
        ch = body[pos]
        if ch in ";{}":
            out.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
        pos += 1
    out.append("".join(buf))
    return [" ".join(s.split()) for s in out if s.strip()]


def _aliases(body: str, names: set[str]) -> set[str]:
    """Local pointers initialised from one of ``names`` (``float *p = a + i;``)."""
    result = set(names)
    for m in re.finditer(r"\*\s*(?:const\s+|__restrict__\s+)*([A-Za-z_]\w*)\s*=\s*([^;]*);", body):
        if any(re.search(rf"\b{re.escape(n)}\b", m.group(2)) for n in result):
            result.add(m.group(1))
    return result


def _derefs(stmt: str, names: set[str]) -> bool:
    for n in names:
        e = re.escape(n)
        if re.search(rf"\b{e}\s*(\[|->)", stmt) or re.search(rf"(^|[^\w)\]\s])\s*\*\s*\(?\s*{e}\b", stmt):
            return True
    return False


def source_features(source: str, kernel: str) -> SourceFeatures:
    """Compute :class:`SourceFeatures` of ``kernel`` in the CUDA ``source`` text.

    Parameters
    ----------
    source : str
        The whole ``.cu`` text (unstripped).
    kernel : str
        The kernel's function name.
    """
    text = strip_source(source)
    params, body, _ = kernel_body(text, kernel)
    device = _file_scope_names(text, "__device__")
    constant = _file_scope_names(text, "__constant__")
    shared = _file_scope_names(text, "__shared__") | {m.group(1) for m in re.finditer(
        r"__shared__[^;]*?\b([A-Za-z_]\w*)\s*(\[[^;]*)?;", body)}
    global_ptrs = _aliases(body, _pointer_params(params) | device)
    shared_ptrs = _aliases(body, shared)
    counts = {"onchip": 0, "global": 0, "shared": 0, "constant": 0, "texture": 0}
    stmts = _statements(body)
    for stmt in stmts:
        is_texture = bool(_TEXTURE.search(stmt))
        is_global = is_texture or "__ldg" in stmt or _derefs(stmt, global_ptrs)
        counts["texture"] += is_texture
        counts["shared"] += _derefs(stmt, shared_ptrs) and not _DECL_ONLY.match(stmt)
        counts["constant"] += any(re.search(rf"\b{re.escape(c)}\b", stmt) for c in constant)
        if is_global:
            counts["global"] += 1
        elif not (_NEITHER.match(stmt) or _DECL_ONLY.match(stmt)):
            counts["onchip"] += 1
    lines = sum(1 for ln in body.split("\n") if ln.strip().strip("{}").strip())
    branches = len(re.findall(r"\b(if|for|while|case|default|goto)\b", body)) + body.count("?")
    return SourceFeatures(alpha=counts["onchip"] / max(1, counts["global"]), onchip_statements=counts["onchip"],
                          global_statements=counts["global"], shared_statements=counts["shared"],
                          constant_statements=counts["constant"], texture_statements=counts["texture"],
                          statements=len(stmts), source_lines=lines, branch_statements=branches)
