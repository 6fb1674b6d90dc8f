"""Basic blocks, control-flow graph, natural loops and block weights of a PTX entry; and dpc.

Loop naming (how callers give trip counts)
------------------------------------------
Every natural loop (the blocks of one or more back edges to the same header) gets three names; a
trip-count mapping may use any one of them:

* ``"L1"``, ``"L2"``, ...: ordinal in the order of the loop headers in the PTX text (the first loop
  whose header appears in the entry body is ``L1``; an inner loop's header comes after its outer
  loop's header, so a simple nest is ``L1`` outer, ``L2`` inner).
* the header label as it appears in the PTX, e.g. ``"$L__BB0_2"``.
* ``"line:N"``: the CUDA source line of the loop's back-edge branch (from ``.loc``; nvcc puts the
  ``for``/``while`` line there when compiled with ``-lineinfo``, which :mod:`toolchain` always
  passes). When several loops share the line (an unrolled loop and its remainder) the name is
  ambiguous and rejected; use ``L<k>`` then.

A loop's trip count is the number of times its body runs per entry into the loop; every block of
the loop (header included) is weighted by it, and a block inside nested loops by the product of
their trip counts. Blocks not reachable from the entry weigh 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgpubench.features.ptx import Instruction, PtxEntry, PtxParseError

__all__ = ["Block", "ControlFlow", "Loop", "build_cfg", "dpc"]


@dataclass(frozen=True)
class Block:
    """Basic block ``[start, end)`` of instruction indices, with successor block ids."""

    id: int
    start: int
    end: int
    labels: tuple[str, ...]
    succs: tuple[int, ...]


@dataclass(frozen=True)
class Loop:
    """A natural loop: ``id`` is ``"L<k>"``; ``line`` is the source line of its back-edge branch."""

    id: str
    header: int
    label: str | None
    blocks: frozenset[int]
    depth: int
    parent: str | None
    line: int | None
    ptx_line: int

    @property
    def names(self) -> tuple[str, ...]:
        """Every name a trip-count mapping may use for this loop."""
        names = [self.id]
        if self.label:
            names.append(self.label)
        if self.line is not None:
            names.append(f"line:{self.line}")
        return tuple(names)


@dataclass
class ControlFlow:
    """Blocks, loops, and the blocks reachable from the entry."""

    blocks: list[Block]
    loops: list[Loop]
    reachable: frozenset[int]

    def loops_of(self, block: int) -> list[Loop]:
        """The loops containing ``block``, outermost first."""
        return [lp for lp in self.loops if block in lp.blocks]


def _terminates(ins: Instruction) -> bool:
    return ins.base in ("bra", "brx", "ret", "exit")


def _targets(ins: Instruction, entry: PtxEntry) -> list[str]:
    if ins.base == "bra":
        return [ins.operands[-1]]
    if ins.base == "brx":
        table = ins.operands[-1] if ins.operands else ""
        if table not in entry.branch_targets:
            raise PtxParseError(f"PTX line {ins.line}: brx.idx uses {table!r}, which is not a .branchtargets "
                                f"list of entry {entry.name!r}.")
        return list(entry.branch_targets[table])
    return []


def build_cfg(entry: PtxEntry) -> ControlFlow:
    """Split ``entry`` into basic blocks, link them, and find its natural loops.

    Raises
    ------
    PtxParseError
        A branch to an unknown label, or irreducible control flow (a cycle with two entries), which
        has no natural loop to carry a trip count.
    """
    ins = entry.instructions
    n = len(ins)
    leaders = {0, n} | set(entry.labels.values())
    leaders |= {i + 1 for i, x in enumerate(ins) if _terminates(x)}
    starts = sorted(s for s in leaders if s <= n)
    by_index: dict[int, list[str]] = {}
    for label, idx in entry.labels.items():
        by_index.setdefault(idx, []).append(label)
    block_of = {start: k for k, start in enumerate(starts)}
    blocks: list[Block] = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else n
        succs: list[int] = []
        last = ins[end - 1] if end > start else None
        if last is not None and _terminates(last):
            for target in _targets(last, entry):
                if target not in entry.labels:
                    raise PtxParseError(f"PTX line {last.line}: branch to unknown label {target!r}.")
                succs.append(block_of[entry.labels[target]])
            if last.guard is not None and end in block_of:
                succs.append(block_of[end])
        elif end in block_of and end != start:
            succs.append(block_of[end])
        blocks.append(Block(k, start, end, tuple(by_index.get(start, ())), tuple(dict.fromkeys(succs))))
    reachable, order = _dfs(blocks)
    loops = _natural_loops(blocks, reachable, order, entry)
    return ControlFlow(blocks=blocks, loops=loops, reachable=frozenset(reachable))


def _dfs(blocks: list[Block]) -> tuple[set[int], list[int]]:
    """Return reachable blocks and their reverse post-order (iterative DFS from block 0)."""
    seen: set[int] = set()
    post: list[int] = []
    stack: list[tuple[int, int]] = [(0, 0)]
    seen.add(0)
    while stack:
        node, k = stack.pop()
        succs = blocks[node].succs
        if k < len(succs):
            stack.append((node, k + 1))
            nxt = succs[k]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, 0))
        else:
            post.append(node)
    return seen, post[::-1]


def _dominators(blocks: list[Block], order: list[int]) -> dict[int, set[int]]:
    preds: dict[int, list[int]] = {b: [] for b in order}
    for b in order:
        for s in blocks[b].succs:
            preds[s].append(b)
    everything = set(order)
    dom = {b: set(everything) for b in order}
    dom[order[0]] = {order[0]}
    changed = True
    while changed:
        changed = False
        for b in order[1:]:
            ps = [dom[p] for p in preds[b]]
            new = set.intersection(*ps) | {b} if ps else {b}
            if new != dom[b]:
                dom[b], changed = new, True
    return dom


def _natural_loops(blocks, reachable, order, entry) -> list[Loop]:
    dom = _dominators(blocks, order)
    rpo = {b: k for k, b in enumerate(order)}
    latches: dict[int, list[int]] = {}
    for b in order:
        for s in blocks[b].succs:
            if rpo[s] <= rpo[b]:  # retreating edge
                if s not in dom[b]:
                    line = entry.instructions[blocks[b].end - 1].line if blocks[b].end > blocks[b].start else 0
                    raise PtxParseError(f"PTX line {line}: irreducible control flow in entry {entry.name!r} (a "
                                        "cycle entered at two places); trip counts need natural loops.")
                latches.setdefault(s, []).append(b)
    preds: dict[int, list[int]] = {b: [] for b in order}
    for b in order:
        for s in blocks[b].succs:
            preds[s].append(b)
    found = []
    for header in sorted(latches, key=lambda h: blocks[h].start):
        body = {header}
        work = [u for u in latches[header] if u != header]
        body.update(work)
        while work:
            node = work.pop()
            for p in preds[node]:
                if p not in body:
                    body.add(p)
                    work.append(p)
        found.append((header, frozenset(body)))
    loops: list[Loop] = []
    for k, (header, body) in enumerate(found):
        outer = [j for j, (_, other) in enumerate(found) if j != k and body < other]
        parent = min(outer, key=lambda j: len(found[j][1])) if outer else None
        latch_lines = {_loc_line(entry, blocks[u]) for u in latches[header]} - {None}
        label = blocks[header].labels[0] if blocks[header].labels else None
        ptx_line = entry.instructions[blocks[header].start].line if blocks[header].end > blocks[header].start \
            else 0
        loops.append(Loop(id=f"L{k + 1}", header=header, label=label, blocks=body, depth=len(outer) + 1,
                          parent=f"L{parent + 1}" if parent is not None else None,
                          line=min(latch_lines) if len(latch_lines) == 1 else None, ptx_line=ptx_line))
    return loops


def _loc_line(entry: PtxEntry, block: Block) -> int | None:
    if block.end <= block.start:
        return None
    loc = entry.instructions[block.end - 1].loc
    return loc[1] if loc and loc[1] > 0 else None


def dpc(instructions: list[Instruction]) -> float:
    """Degree of data dependency (seed 000) over the counted instructions, in text order.

    Number the counted instructions 1..k (``ret``/``exit`` excluded). For instruction ``i`` that writes
    registers, ``U[i]`` is the first later instruction reading any register ``i`` writes (guard
    predicates and address registers are reads; the later instruction need not be the one whose value
    it reads, exactly as the seed defines it); ``dpc = (1/k) * sum_i 1/(U[i] - i)``, with 0 for an
    instruction whose result is never read or that writes no register. ``k = 0`` gives 0.
    """
    seq = [x for x in instructions if x.counted]
    k = len(seq)
    if k == 0:
        return 0.0
    next_read: dict[str, int] = {}
    total = 0.0
    for i in range(k - 1, -1, -1):
        ins = seq[i]
        uses = [next_read[r] for r in ins.writes if r in next_read]
        if uses:
            total += 1.0 / (min(uses) - i)
        for r in ins.reads:
            next_read[r] = i
    return total / k
