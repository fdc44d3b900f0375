"""The architecture contract: layers without upward imports, packages without import
cycles (``[tool.importlinter]`` in pyproject.toml), and small hand-written modules."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rram"
#: Lines above which a hand-written module must be split (generated kernels excepted).
MAX_LINES = 500


def test_the_import_contracts_hold():
    """No module imports a layer above its own, and no package holds an import cycle
    (import-linter reads every import, those inside functions too)."""
    from importlinter.cli import lint_imports

    assert lint_imports(config_filename=str(PACKAGE.parent / "pyproject.toml"),
                        no_cache=True) == 0


def test_the_contract_names_every_module_and_refuses_an_upward_import(tmp_path):
    """The contract is exhaustive, and it can fail: a copy of the package with one
    upward import (the expression IR importing the engine) breaks it."""
    import shutil
    import subprocess
    import sys

    copy = tmp_path / "rram"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    core = copy / "expr" / "core.py"
    core.write_text(core.read_text() + "\nfrom ..engine import run  # noqa\n")
    shutil.copy(PACKAGE.parent / "pyproject.toml", tmp_path / "pyproject.toml")
    proc = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports; "
                           "raise SystemExit(lint_imports(no_cache=True))"],
                          cwd=tmp_path, env={"PYTHONPATH": str(tmp_path), "PATH": ""},
                          capture_output=True, text=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "rram.expr is not allowed to import rram.engine" in proc.stdout


def test_no_hand_written_module_is_over_500_lines():
    """Generated modules (their first line says GENERATED) are excepted."""
    long = {}
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        if "GENERATED" in text.split("\n", 1)[0]:
            continue
        lines = text.count("\n")
        if lines > MAX_LINES:
            long[str(path.relative_to(PACKAGE))] = lines
    assert not long, f"modules over {MAX_LINES} lines: {long}"
