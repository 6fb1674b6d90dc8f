"""A small PTX reader: kernel entries, their instructions, labels, registers read and written.

Scope: the PTX that nvcc/NVRTC emit (and hand-written PTX in the same style). Each ``.entry`` body is
read statement by statement; labels, directives and scope braces are recorded but are not instructions.
Anything the reader does not understand (an unknown opcode, an unterminated statement, a branch to a
label that does not exist) raises :class:`PtxParseError` naming the line: it never guesses.

Kernel names: nvcc gives C++ names Itanium mangling unless the kernel is ``extern "C"``.
:meth:`PtxModule.entry` accepts the exact entry name, or the plain function name, which it matches
against the unqualified name inside each mangled entry (``_Z6matmulPKfS0_Pfi`` -> ``matmul``,
``_ZN2ns4stepEPf`` -> ``step``; also ``ns::step``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kgpubench.errors import PtxParseError, UnknownNameError

__all__ = [
    "KNOWN_OPCODES",
    "Instruction",
    "PtxEntry",
    "PtxModule",
    "PtxParseError",
    "demangle_name",
    "parse_ptx",
]


# Base opcodes (the part before the first '.') of the PTX ISA up to 9.0.
KNOWN_OPCODES = frozenset("""
    abs activemask add addc alloca and applypriority atom bar barrier bfe bfi bfind bmsk bra brev brkpt brx call
    clusterlaunchcontrol clz cnot copysign cos cp createpolicy cvt cvta discard div dp2a dp4a elect ex2 exit fence
    fma fns getctarank griddepcontrol isspacep istypep ld ldmatrix ldu lg2 lop3 mad mad24 madc mapa match max
    mbarrier membar min mma mov movmatrix mul mul24 multimem nanosleep neg not or pmevent popc prefetch prefetchu
    prmt rcp red redux rem ret rsqrt sad selp set setmaxnreg setp shf shfl shl shr sin slct sqrt st stackrestore
    stacksave stmatrix sub subc suld suq sured sust szext tanh tcgen05 tensormap testp tex tld4 trap txq vabsdiff
    vabsdiff2 vabsdiff4 vadd vadd2 vadd4 vavrg2 vavrg4 vmad vmax vmax2 vmax4 vmin vmin2 vmin4 vote vset vset2 vset4
    vshl vshr vsub vsub2 vsub4 wgmma wmma xor
""".split())

# Opcodes that never write a register through their first operand.
_NO_DEST = frozenset("""
    bar barrier membar fence bra brx ret exit trap brkpt prefetch prefetchu pmevent nanosleep discard applypriority
    griddepcontrol setmaxnreg st red sust sured stmatrix cp stackrestore
""".split())

_LABEL = re.compile(r"\s*([A-Za-z_$%][\w$]*)\s*:(?!:)")
_LABELS_ONLY = re.compile(r"(\s*[A-Za-z_$%][\w$]*\s*:(?!:))+\s*")
_GUARD = re.compile(r"@(!?)\s*(%?[A-Za-z_$][\w$]*)\s+")
_OPCODE = re.compile(r"([A-Za-z_][\w]*(?:\.[\w:]+)*)")
_REG = re.compile(r"%[A-Za-z_$][\w$]*")
_IDENT = re.compile(r"(?<![\w$%.])[A-Za-z_$][\w$]*")
_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$][\w$]*)\s*\(")
_LINE_DIRECTIVE = re.compile(r"(\s*[A-Za-z_$%][\w$]*\s*:(?!:))*\s*\.(loc|file)\b")
_DECL_RANGE = re.compile(r"^([%A-Za-z_$][\w$]*)<\d+>$")


@dataclass(frozen=True)
class Instruction:
    """One PTX instruction of an entry body.

    ``index`` is the position in the entry (0-based, ``ret``/``exit`` included); ``line`` the 1-based
    line in the PTX text; ``writes``/``reads`` the registers written and read (a guard predicate and the
    registers inside an address ``[...]`` are reads; a vector ``{...}`` or pair ``%r|%p`` destination writes
    each register named, ``_`` writes nothing); ``loc`` the ``(file, line)`` of the last ``.loc`` before it.
    """

    index: int
    line: int
    text: str
    opcode: str
    guard: str | None
    operands: tuple[str, ...]
    writes: tuple[str, ...]
    reads: tuple[str, ...]
    loc: tuple[int, int] | None = None

    @property
    def parts(self) -> tuple[str, ...]:
        """The opcode split at dots (``ld.global.v4.f32`` -> ``('ld', 'global', 'v4', 'f32')``)."""
        return tuple(self.opcode.split("."))

    @property
    def base(self) -> str:
        """The opcode before its first dot (``ld``)."""
        return self.opcode.split(".", 1)[0]

    @property
    def counted(self) -> bool:
        """Whether the instruction counts (``ret`` and ``exit`` do not, per seed 000)."""
        return self.base not in ("ret", "exit")


@dataclass
class PtxEntry:
    """A kernel entry: its instructions, labels (label -> index of the next instruction) and more."""

    name: str
    line: int
    instructions: list[Instruction]
    labels: dict[str, int]
    branch_targets: dict[str, tuple[str, ...]] = field(default_factory=dict)
    files: dict[int, str] = field(default_factory=dict)

    @property
    def plain_name(self) -> str:
        """The unqualified function name (demangled when the entry name is mangled)."""
        return demangle_name(self.name)[-1]


@dataclass
class PtxModule:
    """The kernel entries of a PTX text, in order of appearance."""

    entries: dict[str, PtxEntry]
    target: str | None = None
    version: str | None = None

    def entry(self, kernel: str) -> PtxEntry:
        """Return the entry for ``kernel`` (exact, plain or ``ns::name`` form; see the module doc).

        Raises
        ------
        UnknownNameError
            No entry matches, or several do (template instances, overloads): the message lists them.
        """
        if kernel in self.entries:
            return self.entries[kernel]
        wanted = tuple(kernel.split("::"))
        hits = [e for e in self.entries.values() if demangle_name(e.name)[-len(wanted):] == wanted]
        if len(hits) == 1:
            return hits[0]
        listing = ", ".join(f"{n} ({'::'.join(demangle_name(n))})" if demangle_name(n) != (n,) else n
                            for n in self.entries) or "(none)"
        if not hits:
            raise UnknownNameError(f"no kernel entry named {kernel!r} in the PTX; the entries are: {listing}. "
                                   "Pass one of these names (the plain name or the mangled one).")
        raise UnknownNameError(f"kernel name {kernel!r} matches {len(hits)} entries "
                               f"({', '.join(e.name for e in hits)}); pass the mangled entry name.")


def demangle_name(name: str) -> tuple[str, ...]:
    """Return the qualified-name components of an Itanium-mangled name (``(name,)`` if not mangled).

    Only the leading name is decoded (enough to match kernels by name): ``_Z6matmulPKf`` -> ``('matmul',)``,
    ``_ZN2ns4stepEPf`` -> ``('ns', 'step')``, ``_Z6kernelILi4EEvPf`` -> ``('kernel',)``.
    """
    if not name.startswith("_Z"):
        return (name,)
    pos = 2
    if name.startswith("L", pos):
        pos += 1
    nested = name.startswith("N", pos)
    pos += 1 if nested else 0
    parts: list[str] = []
    while pos < len(name):
        match = re.match(r"\d+", name[pos:])
        if not match:
            break
        length = int(match.group())
        pos += len(match.group())
        parts.append(name[pos:pos + length])
        pos += length
        if not nested:
            break
        if name.startswith("I", pos):
            pos = _skip_template_args(name, pos)
        if name.startswith("E", pos):
            break
    return tuple(parts) if parts else (name,)


def _skip_template_args(name: str, pos: int) -> int:
    depth = 0
    while pos < len(name):
        ch = name[pos]
        if ch == "I":
            depth += 1
        elif ch == "E":
            depth -= 1
            if depth == 0:
                return pos + 1
        pos += 1
    return pos


def parse_ptx(text: str) -> PtxModule:
    """Parse a PTX text into its kernel entries.

    Parameters
    ----------
    text : str
        The PTX module as nvcc writes it.

    Returns
    -------
    PtxModule

    Raises
    ------
    PtxParseError
        Something the reader does not understand, with the line number.
    """
    clean = _strip_comments(text)
    files = {int(m.group(1)): m.group(2) for m in re.finditer(r'\.file\s+(\d+)\s+"([^"]*)"', clean)}
    target = re.search(r"\.target\s+([\w,\s]+?)\s*$", clean, re.MULTILINE)
    version = re.search(r"\.version\s+([\d.]+)", clean)
    entries: dict[str, PtxEntry] = {}
    for match in _ENTRY.finditer(clean):
        name = match.group(1)
        open_brace = _find_body(clean, match.end())
        if open_brace < 0:
            continue  # a declaration without body
        close = _matching_brace(clean, open_brace)
        start_line = clean.count("\n", 0, open_brace) + 1
        entry = _parse_body(name, clean[open_brace + 1:close], start_line, clean.count("\n", 0, match.start()) + 1)
        entry.files = files
        entries[name] = entry
    return PtxModule(entries=entries, target=target.group(1).strip() if target else None,
                     version=version.group(1) if version else None)


def _strip_comments(text: str) -> str:
    """Blank out // and /* */ comments (keeping newlines and string literals)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = text.find('"', i + 1)
            j = n - 1 if j < 0 else j
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _find_body(text: str, pos: int) -> int:
    depth = 1
    while pos < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[pos], 0)
        pos += 1
    while pos < len(text):
        if text[pos] == "{":
            return pos
        if text[pos] == ";":
            return -1
        pos += 1
    return -1


def _matching_brace(text: str, open_pos: int) -> int:
    depth = 0
    for pos in range(open_pos, len(text)):
        if text[pos] == "{":
            depth += 1
        elif text[pos] == "}":
            depth -= 1
            if depth == 0:
                return pos
    line = text.count("\n", 0, open_pos) + 1
    raise PtxParseError(f"PTX line {line}: the entry body opened here is never closed with '}}'; "
                        "expected a complete PTX module (was the file truncated?).")


def _split_statements(body: str, first_line: int):
    """Yield (line, statement) for each ';'-terminated statement; scope braces are dropped."""
    buf: list[str] = []
    depth = 0
    line = first_line
    start_line = None
    for ch in body:
        if ch == "\n":
            if start_line is not None and depth == 0 and _LINE_DIRECTIVE.match("".join(buf)):
                yield start_line, "".join(buf)  # .loc / .file end at the end of the line, without ';'
                buf, start_line = [], None
            line += 1
        if ch in "{}" and depth == 0:
            current = "".join(buf)
            if not current.strip() or _LABELS_ONLY.fullmatch(current):
                if current.strip():
                    yield start_line, current
                buf, start_line = [], None
                continue
        if ch == ";" and depth == 0:
            yield start_line, "".join(buf)
            buf, start_line = [], None
            continue
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        if start_line is None and not ch.isspace():
            start_line = line
        buf.append(ch)
    rest = "".join(buf)
    if rest.strip() and not _LABELS_ONLY.fullmatch(rest):
        raise PtxParseError(f"PTX line {start_line}: statement {rest.strip()[:60]!r} has no terminating ';'.")
    if rest.strip():
        yield start_line, rest


def _parse_body(name: str, body: str, first_line: int, entry_line: int) -> PtxEntry:
    instructions: list[Instruction] = []
    labels: dict[str, int] = {}
    targets: dict[str, tuple[str, ...]] = {}
    declared: set[str] = set()
    loc: tuple[int, int] | None = None
    for line, stmt in _split_statements(body, first_line):
        stmt = stmt.strip()
        pending: list[str] = []
        while (m := _LABEL.match(stmt)) is not None:
            pending.append(m.group(1))
            stmt = stmt[m.end():].strip()
        if stmt.startswith(".branchtargets"):
            for lab in pending:
                targets[lab] = tuple(t.strip() for t in stmt[len(".branchtargets"):].split(",") if t.strip())
            continue
        for lab in pending:
            if lab in labels:
                raise PtxParseError(f"PTX line {line}: label {lab!r} defined twice in entry {name!r}.")
            labels[lab] = len(instructions)
        if not stmt:
            continue
        if stmt.startswith("."):
            loc = _directive(stmt, declared, loc)
            continue
        instructions.append(_instruction(len(instructions), line, stmt, declared, loc, name))
    for ins in instructions:
        if ins.base == "bra":
            target = ins.operands[-1] if ins.operands else ""
            if target not in labels:
                raise PtxParseError(f"PTX line {ins.line}: branch to {target!r}, which is not a label of entry "
                                    f"{name!r}.")
    return PtxEntry(name=name, line=entry_line, instructions=instructions, labels=labels, branch_targets=targets)


def _directive(stmt: str, declared: set[str], loc):
    words = stmt.split()
    if words[0] == ".loc" and len(words) >= 3:
        try:
            return int(words[1]), int(words[2])
        except ValueError:
            return loc
    if words[0] == ".reg":
        for item in " ".join(words[1:]).split(","):
            token = item.split()[-1] if item.split() else ""
            token = token.split("[")[0]
            if token and not _DECL_RANGE.match(token) and not token.startswith("%") and not token.startswith("."):
                declared.add(token)
    return loc


def _split_operands(text: str) -> list[str]:
    parts, buf, depth = [], [], 0
    for ch in text:
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(buf).strip())
            buf = []
        else:
            buf.append(ch)
    if "".join(buf).strip():
        parts.append("".join(buf).strip())
    return parts


def _registers(operand: str, declared: set[str]) -> list[str]:
    regs = _REG.findall(operand)
    if declared:
        regs += [m for m in _IDENT.findall(operand) if m in declared]
    return regs


def _instruction(index: int, line: int, stmt: str, declared: set[str], loc, entry: str) -> Instruction:
    guard = None
    m = _GUARD.match(stmt)
    if m:
        guard = m.group(1) + m.group(2)
        stmt_body = stmt[m.end():]
    else:
        stmt_body = stmt
    op = _OPCODE.match(stmt_body)
    if not op:
        raise PtxParseError(f"PTX line {line}: cannot read an opcode in {stmt!r} (entry {entry!r}).")
    opcode = op.group(1)
    base = opcode.split(".", 1)[0]
    if base not in KNOWN_OPCODES:
        raise PtxParseError(f"PTX line {line}: unknown instruction {opcode!r} in {stmt.strip()!r} (entry "
                            f"{entry!r}); the reader knows the PTX ISA opcodes up to 9.0. Extend "
                            "kgpubench.features.ptx.KNOWN_OPCODES and the classes in isa.py if it is valid PTX.")
    operands = tuple(_split_operands(stmt_body[op.end():]))
    writes: list[str] = []
    reads: list[str] = []
    if guard:
        reads.extend(_registers(guard.lstrip("!"), declared))
    has_dest = base not in _NO_DEST or (base in ("bar", "barrier") and ".red" in opcode)
    for pos, operand in enumerate(operands):
        if base == "call":
            is_dest = pos == 0 and operand.startswith("(") and len(operands) >= 2
        else:
            is_dest = pos == 0 and has_dest and not operand.startswith("[")
        (writes if is_dest else reads).extend(_registers(operand, declared))
    return Instruction(index=index, line=line, text=" ".join(stmt.split()), opcode=opcode, guard=guard,
                       operands=operands, writes=tuple(dict.fromkeys(writes)), reads=tuple(dict.fromkeys(reads)),
                       loc=loc)
