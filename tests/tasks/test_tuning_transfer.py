"""tuning-transfer: leave-one-device-out scores of the three strategies on a hand-built table."""

from __future__ import annotations

from kgpubench.schema import get_table
from kgpubench.tasks.tuning import evaluate, score, split_rows
from kgpubench.testing import valid_row

X = [{"name": "VW", "value": 1.0}, {"name": "WGS", "value": 64.0}]
Y = [{"name": "VW", "value": 2.0}, {"name": "WGS", "value": 64.0}]
Z = [{"name": "VW", "value": 4.0}, {"name": "WGS", "value": 128.0}]


def _row(kind, vendor, arch, device, params, device_type="GPU"):
    return valid_row("tunings", gpu_name=device or f"default {kind}", kernel="Xaxpy", precision="Single", kind=kind,
                     tuned_on_device=kind == "device", device_type=device_type, vendor=vendor, architecture=arch,
                     device=device, params=params)


def _table():
    return get_table("tunings").from_rows([
        _row("device", "NVIDIA", "SM7.5", "A", X), _row("device", "NVIDIA", "SM7.5", "B", X),
        _row("device", "NVIDIA", "SM8.6", "C", Y), _row("device", "AMD", "gfx90a", "D", Z),
        _row("architecture_default", "NVIDIA", "SM7.5", None, X), _row("vendor_type_default", "NVIDIA", None, None, Y),
        _row("global_default", None, None, None, Z, device_type="All"),
    ])


def test_scores_are_the_hand_computed_ones():
    out = evaluate(_table())
    assert out["folds"] == 4 and out["test_entries"] == 4 and out["shared_architecture_entries"] == 2
    s = out["strategies"]
    # fallback: A, B -> architecture default X; C -> NVIDIA GPU default Y; D (AMD) -> global default Z: all exact
    assert s["clblast-fallback"]["exact_micro"] == 1.0
    # majority: A, B -> X (tie of X, Y, Z broken by canonical JSON; then X twice); C -> X (half of Y right);
    # D -> X (nothing of Z right)
    assert s["majority"]["exact_micro"] == 0.5
    assert s["majority"]["param_agreement_micro"] == (1 + 1 + 0.5 + 0) / 4
    # nearest: A <-> B (same architecture); C: A and B tie (SM distance 1.1) -> X; D: no AMD peer, all tie -> X
    assert s["nearest-device"]["exact_micro"] == 0.5
    assert s["nearest-device"]["exact_shared_architecture"] == 1.0
    assert s["majority"]["exact_by_kernel"] == {"Xaxpy": 0.5}


def test_score_and_split_rows():
    cfg = (("VW", 1), ("WGS", 64))
    assert score(cfg, (("VW", 1), ("WGS", 32))) == (0.0, 0.5)
    assert score(cfg, cfg) == (1.0, 1.0)
    assert score(cfg, None) == (0.0, 0.0)
    folds = sorted(f for _, f in split_rows(_table()))
    assert folds == ["AMD/D", "NVIDIA/A", "NVIDIA/B", "NVIDIA/C"]


def test_committed_results_name_the_committed_split():
    import hashlib
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    result = json.loads((root / "leaderboard/results/tuning-transfer/by-device.json").read_text())
    split = (root / "splits/tuning-transfer/by-device.csv").read_bytes()
    assert result["split_sha256"] == hashlib.sha256(split).hexdigest()
    assert result["folds"] == 161 and result["test_entries"] == 8774 == split.count(b"\n") - 1
