"""Hand-written PTX: counts, loops, trip-count weighting and dpc worked out by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgpubench.errors import UnknownNameError
from kgpubench.features import PtxParseError, TripCountError, extract_features, parse_ptx
from kgpubench.features.cfg import build_cfg, dpc
from kgpubench.features.ptx import demangle_name

DATA = Path(__file__).parent / "data"
NEST = (DATA / "nest.ptx").read_text()


@pytest.fixture(autouse=True)
def _no_toolchain(monkeypatch, tmp_path):
    # Hand-written PTX needs no compiler: hide ptxas so that no figure comes from it.
    monkeypatch.setenv("KGPUBENCH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr("kgpubench.features.toolchain._candidate_dirs", list)


def nest(**kw):
    return extract_features(None, "nest", ptx=NEST, arch="sm_80", sizes={"n": 64}, **kw)


def test_loops_are_found_and_named():
    cfg = build_cfg(parse_ptx(NEST).entry("nest"))
    outer, inner = cfg.loops
    assert (outer.id, outer.label, outer.depth, outer.parent) == ("L1", "$OUTER", 1, None)
    assert (inner.id, inner.label, inner.depth, inner.parent) == ("L2", "$INNER", 2, "L1")
    assert inner.blocks < outer.blocks


def test_trip_count_weighting_by_hand():
    # Outside loops: instructions 1-4 and 17 (weight 1); outer only: 5, 13-16 (weight 8);
    # inner: 6-12 (weight 8 * 64/4 = 128).
    f = nest(trip_counts={"L1": 8, "$INNER": "n / 4"})
    assert f.l == 5 + 5 * 8 + 7 * 128 == 941
    assert f.lmr == 128          # the v4 load
    assert f.lshw == 128         # st.shared
    assert f.ls == 8             # bar.sync
    assert f.lmw == 1            # the final st.global
    assert f.lc == 4 + 4 * 8 + 5 * 128
    assert f.ldpu == 0 and f.lsfu == 0 and f.lshr == 0
    assert f.l == f.lc + f.lshr + f.lshw + f.lmr + f.lmw + f.ls + f.ldpu + f.lsfu
    assert f.global_bytes_read == 16 * 128 and f.global_bytes_written == 4
    assert f.flops == 3 * 128    # add (1) + fma (2) per inner iteration
    assert f.mix["branch"] == 128 + 8
    assert f.static_instructions == 17
    assert f.nreg is None and f.occupancy is None  # no ptxas here


def test_dpc_by_hand():
    # U[i] - i for the 17 instructions (ret excluded): 1->3, 2->11, 3->6, 4->14, 5->9 (st.shared reads
    # %r3 as address), 6->7 (vector destination), 7->8, 8->9, 9 store: 0, 10->11, 11->12 (guard),
    # 12 bra: 0, 13 bar: 0, 14->15, 15->16, 16: 0, 17: 0.
    expected = (1 / 2 + 1 / 9 + 1 / 3 + 1 / 10 + 1 / 4 + 1 + 1 + 1 + 1 + 1 + 1 + 1) / 17
    assert dpc(parse_ptx(NEST).entry("nest").instructions) == pytest.approx(expected)
    assert nest(static_counts=True).dpc == pytest.approx(0.48791, abs=1e-5)


def test_static_counts_and_trip_count_errors():
    assert nest(static_counts=True).l == 17
    assert nest(trip_counts={"L2": 2}, static_counts=True).l == 5 + 5 + 7 * 2
    with pytest.raises(TripCountError, match=r"no trip count for loop L2 \(\$INNER, depth 2 in L1\)"):
        nest(trip_counts={"L1": 8})
    with pytest.raises(TripCountError, match="'L3', which names no loop"):
        nest(trip_counts={"L1": 8, "L2": 1, "L3": 1})
    with pytest.raises(TripCountError, match="two trip counts given for loop L1"):
        nest(trip_counts={"L1": 8, "$OUTER": 8, "L2": 1})
    with pytest.raises(TripCountError, match="names no loop"):
        nest(trip_counts={"line:3": 8, "L2": 1})  # no .loc: no line names
    with pytest.raises(TripCountError, match="expected a finite number >= 0"):
        nest(trip_counts={"L1": "n - 100", "L2": 1})


def test_line_names_and_ambiguity():
    # Two loops whose back edges carry the same source line (as an unrolled loop and its remainder).
    text = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry twin()
{
    .reg .pred %p<3>;
    .reg .b32 %r<3>;
    mov.u32 %r1, 0;
$A:
    .loc 1 7 3
    add.s32 %r1, %r1, 4;
    setp.lt.s32 %p1, %r1, 100;
    @%p1 bra $A;
$B:
    add.s32 %r1, %r1, 1;
    .loc 1 7 3
    setp.lt.s32 %p2, %r1, 103;
    @%p2 bra $B;
$C:
    .loc 1 9 3
    add.s32 %r2, %r1, 1;
    bra.uni $C;
}
"""
    kw = {"ptx": text, "arch": "sm_80"}
    with pytest.raises(TripCountError, match="'line:7' fits loops L1, L2"):
        extract_features(None, "twin", trip_counts={"line:7": 3, "L3": 1}, **kw)
    f = extract_features(None, "twin", trip_counts={"L1": 25, "L2": 3, "line:9": 10}, **kw)
    assert f.l == 1 + 3 * 25 + 3 * 3 + 2 * 10


def test_entry_names_mangled_and_unknown():
    assert demangle_name("_Z6matmulPKfS0_Pfi") == ("matmul",)
    assert demangle_name("_ZN2ns4stepEPf") == ("ns", "step")
    assert demangle_name("_Z6kernelILi4EEvPf") == ("kernel",)
    assert demangle_name("plain") == ("plain",)
    text = NEST.replace("nest(", "_ZN2ns4nestEPfi(").replace("nest_param", "p")
    module = parse_ptx(text)
    assert module.entry("nest").name == "_ZN2ns4nestEPfi"
    assert module.entry("ns::nest").name == "_ZN2ns4nestEPfi"
    with pytest.raises(UnknownNameError, match=r"entries are: _ZN2ns4nestEPfi \(ns::nest\)"):
        module.entry("nope")


def test_unknown_opcode_and_label_fail_with_the_line():
    text = NEST.replace("add.s32 \t%r3, %r3, 1;", "frobnicate.s32 \t%r3, %r3, 1;")
    with pytest.raises(PtxParseError, match=r"PTX line 30: unknown instruction 'frobnicate.s32'"):
        parse_ptx(text)
    text = NEST.replace("bra \t$INNER;", "bra \t$NOWHERE;")
    with pytest.raises(PtxParseError, match=r"PTX line 32: branch to '\$NOWHERE', which is not a label"):
        parse_ptx(text)


def test_statement_without_semicolon_is_an_error():
    with pytest.raises(PtxParseError, match="no terminating ';'"):
        parse_ptx(".version 8.0\n.visible .entry k()\n{\n mov.u32 %r1, 0\n}\n")
