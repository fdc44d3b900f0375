"""Issue 35: every command's path options, pointed at each other in every way a user
can, are refused before anything is written.

The options are found by their role (:mod:`rram.cli.common`: inputs, referenced files,
outputs, output folders, and the companion files an output derives), so a command or an
option added later is covered without editing this file."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from rram.cli import main
from rram.cli.common import (
    InputPath,
    OutputFolder,
    OutputPath,
    ReferencedPath,
    VariationArg,
)

#: What each command needs besides its paths to get as far as the path check.
EXTRA = {"netlist": ["dc-loop"], "export": ["--format", "spice"]}
READ = (InputPath, VariationArg, ReferencedPath)
WRITE = (OutputPath, OutputFolder)


def _commands(group: click.Group = main, prefix: tuple[str, ...] = ()):
    for name, cmd in sorted(group.commands.items()):
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*prefix, name))
        else:
            yield (*prefix, name), cmd


def _paths(cmd: click.Command) -> list[click.Parameter]:
    return [p for p in cmd.params if isinstance(p.type, READ + WRITE)]


def _companions(p: click.Parameter) -> tuple[str, ...]:
    return (*p.type.companions, *p.type.companion_folders) if isinstance(p.type, WRITE) \
        else ()


def _cases():
    """(id, command words, {param: value}, the files to create, the symlinks)."""
    for words, cmd in _commands():
        params = _paths(cmd)
        for o in (p for p in params if isinstance(p.type, WRITE)):
            for p in params:
                if p is o:
                    continue
                base = f"{'-'.join(words)}:{o.name}~{p.name}"
                made = [p.name] if isinstance(p.type, READ) else []
                yield f"{base}:same", words, {o.name: "t.x", p.name: "t.x"}, made, {}
                yield (f"{base}:link", words, {o.name: "link.x", p.name: "t.x"}, made,
                       {"link.x": "t.x"})
                for suffix in _companions(o):
                    yield (f"{base}:{suffix}", words, {o.name: "t.x", p.name: f"t.x{suffix}"},
                           made, {})
                for suffix in _companions(p):
                    yield (f"{base}:their{suffix}", words,
                           {o.name: f"t.x{suffix}", p.name: "t.x"}, made, {})


CASES = list(_cases())


def _argv(words, cmd: click.Command, chosen: dict[str, str]) -> list[str]:
    """The command line: the chosen paths, a distinct existing file for every other
    input, and every other required output on a distinct new path."""
    positional, options = list(EXTRA.get(words[-1], [])), []
    for p in cmd.params:
        if not isinstance(p.type, READ + WRITE):
            continue
        value = chosen.get(p.name)
        if value is None and isinstance(p.type, READ) and p.required:
            value = f"in_{p.name}"
        if value is None and p.required:
            value = f"out_{p.name}"
        if value is None:
            continue
        if isinstance(p, click.Argument):
            positional.append(value)
        else:
            options += [p.opts[0], value]
    return [*words, *positional, *options]


def _snapshot(folder: Path) -> dict[str, str]:
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = str(p.relative_to(folder))
        out[rel] = (f"link:{os.readlink(p)}" if p.is_symlink() else
                    hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir")
    return out


def test_every_command_with_an_output_is_covered():
    covered = {c[1] for c in CASES}
    with_outputs = {w for w, cmd in _commands()
                    if any(isinstance(p.type, WRITE) for p in cmd.params)
                    and len(_paths(cmd)) > 1}
    assert with_outputs and covered == with_outputs
    assert len(CASES) > 100


@pytest.mark.parametrize("case, words, chosen, made, links", CASES,
                         ids=[c[0] for c in CASES])
def test_a_path_pointed_at_another_is_refused_and_changes_nothing(
        case, words, chosen, made, links, tmp_path, monkeypatch):
    cmd = dict(_commands())[words]
    monkeypatch.chdir(tmp_path)
    argv = _argv(words, cmd, chosen)
    for p in cmd.params:  # every input exists: a regular file with some content
        if isinstance(p.type, READ) and (p.name in made or p.name not in chosen):
            value = chosen.get(p.name, f"in_{p.name}")
            Path(value).write_text("{}\n")
    for link, target in links.items():
        os.symlink(target, link)
    before = _snapshot(tmp_path)
    result = CliRunner().invoke(main, argv)
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, (argv, result.output, result.exception)
    assert len(lines) == 1 and lines[0].startswith("Error: "), (argv, result.stderr)
    assert _snapshot(tmp_path) == before
