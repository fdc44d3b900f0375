"""The README's examples run as written (console blocks and Python blocks)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_the_two_setup_commands():
    sh = _blocks("sh")[0]
    cmds = [line.split("#")[0].strip() for line in sh.splitlines() if line.strip()]
    assert cmds == ["make demo", "make test"]


def test_console_examples_run(tmp_path):
    lines = [ln[2:] for b in _blocks("console") for ln in b.splitlines() if ln.startswith("$ ")]
    assert lines, "no console examples found"
    for line in lines:
        argv = shlex.split(line)
        assert argv[0] == "rram"
        r = subprocess.run([sys.executable, "-m", "rram.cli", *argv[1:]], cwd=tmp_path,
                           capture_output=True, text=True)
        assert r.returncode == 0, f"{line}\n{r.stdout}\n{r.stderr}"


def test_python_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for block in _blocks("python"):
        exec(compile(block, str(README), "exec"), {"__name__": "readme"})
