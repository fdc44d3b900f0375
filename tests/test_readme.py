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


def test_the_three_command_calibration_of_a_new_device_parses():
    """fitting/README.md's three commands name real commands and options (`make fit`
    runs the same steps on the TUD device, and the fit tests run them)."""
    from rram.cli import main

    text = (README.parent / "fitting" / "README.md").read_text()
    block = re.search(r"## A new device in three commands.*?```console\n(.*?)```", text,
                      flags=re.S).group(1)
    lines = [ln[2:] for ln in block.splitlines() if ln.startswith("$ ")]
    assert [shlex.split(ln)[1] for ln in lines] == ["fit", "fit-variation", "export"]
    for line in lines:
        argv = shlex.split(line)[1:]
        command = main.commands[argv[0]]
        ctx = command.make_context(argv[0], argv[1:], resilient_parsing=True)
        unknown = [a for a in argv[1:] if a.startswith("--")
                   and not any(a in p.opts for p in command.params)]
        assert not unknown and ctx.params, (line, unknown)
