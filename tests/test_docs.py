"""Every example of the README and of docs/ runs as written: the console lines
(``$ rram ...``, in order, in one folder per document) and the Python blocks."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCUMENTS = [README, *sorted((ROOT / "docs").rglob("*.md"))]
#: Longest a document may be (lines): the README is where a newcomer starts.
README_LINES = 200


def blocks(path: Path, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", path.read_text(), flags=re.S)


def console_lines(path: Path) -> list[str]:
    return [ln[2:] for b in blocks(path, "console") for ln in b.splitlines()
            if ln.startswith("$ ")]


def test_the_readme_is_short_and_has_the_two_setup_commands():
    assert README.read_text().count("\n") <= README_LINES
    sh = blocks(README, "sh")[0]
    cmds = [line.split("#")[0].strip() for line in sh.splitlines() if line.strip()]
    assert cmds == ["make demo", "make test"]


def test_the_readme_links_every_document_and_every_link_resolves():
    text = README.read_text()
    for doc in ("model", "ngspice", "calibration", "monte-carlo", "arrays", "engine",
                "architecture", "benchmarks", "torch"):
        assert f"docs/{doc}.md" in text, doc
    for path in DOCUMENTS:
        for target in re.findall(r"\]\(([^)#:]+?)(?:#[^)]*)?\)", path.read_text()):
            assert (path.parent / target).exists(), f"{path.name}: {target}"


@pytest.mark.parametrize("path", [p for p in DOCUMENTS if console_lines(p)],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_console_examples_run(path, tmp_path):
    (tmp_path / "fitting").symlink_to(ROOT / "fitting")  # the committed fits, read only
    for line in console_lines(path):
        argv = shlex.split(line)
        assert argv[0] == "rram", line
        r = subprocess.run([sys.executable, "-m", "rram.cli", *argv[1:]], cwd=tmp_path,
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"{line}\n{r.stdout}\n{r.stderr}"


@pytest.mark.parametrize("path", [p for p in DOCUMENTS if blocks(p, "python")],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_python_examples_run(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for block in blocks(path, "python"):
        exec(compile(block, str(path), "exec"), {"__name__": "docs"})


def test_the_three_command_calibration_of_a_new_device_parses():
    """fitting/README.md's three commands name real commands and options (`make fit`
    runs the same steps on the TUD device, and the fit tests run them)."""
    from rram.cli import main

    text = (ROOT / "fitting" / "README.md").read_text()
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
