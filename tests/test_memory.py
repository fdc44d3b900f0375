"""Issue 35: every size option at its advertised maximum, under a 4 GB address-space
limit, is refused at once with an estimate, or runs within the limit.

The options are found from the command line itself (every integer option with an upper
bound whose name says it sizes the work, :data:`SIZES`), so an option added later is
covered.  A run that has neither failed nor ended after :data:`WATCH` seconds is taken
to run within the limit (what no longer fits fails at its first allocation) and is
stopped with Ctrl-C, which must end it in one line.  The runs are niced: they only show
that they hold, and must not slow the tests beside them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import click
import pytest
from test_bad_inputs import _files

from rram.cli import main

LIMIT = 4 * 1024**3
WATCH = 6.0
#: The options that size the work (the others count iterations: --rounds, --starts...).
SIZES = {"rows", "cols", "segments", "devices", "cycles", "burn_in", "chunk", "workers",
         "samples", "vectors", "count", "refine_devices"}
#: What each command needs besides its size options to start.
BASE = {
    ("sweep",): ["--out", "s.csv"],
    ("mc",): ["--devices", "2", "--cycles", "1", "--seed", "1", "--out", "m.parquet"],
    ("fit",): ["iv.csv", "reset.csv", "--out", "o.json"],
    ("fit-cycles",): ["iv.csv", "reset.csv", "--card", "c.json", "--out", "o.csv"],
    ("fit-variation",): ["dist.csv", "--out", "o.json"],
    ("array", "read"): ["--out", "r.csv"],
    ("array", "netlist"): ["--out", "a.cir"],
    ("array", "vmm"): ["--out", "v.csv"],
    ("array", "margin"): [],
    ("array", "write"): ["--out", "w.csv"],
    ("array", "disturb"): ["--out", "d.csv"],
}
#: What an option needs beside it to act.
WITH = {("array", "vmm", "--samples"): ["--variation", "default"],
        ("array", "vmm", "--workers"): ["--variation", "default", "--samples", "4"]}
ESTIMATES = ("needs about", "writes about", "runs at most")


def _commands(group: click.Group = main, prefix: tuple[str, ...] = ()):
    for name, cmd in sorted(group.commands.items()):
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*prefix, name))
        else:
            yield (*prefix, name), cmd


def _cases():
    for words, cmd in _commands():
        for p in cmd.params:
            if isinstance(p.type, click.IntRange) and p.type.max is not None \
                    and p.name in SIZES:
                yield words, p.opts[0], p.type.max


CASES = list(_cases())


def test_every_command_with_a_size_option_can_start():
    assert {w for w, _, _ in CASES} <= set(BASE)
    assert len(CASES) >= 20


def _limit() -> None:
    import resource

    os.setsid()
    os.nice(10)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


@pytest.mark.slow
@pytest.mark.parametrize("words, option, top", CASES,
                         ids=[f"{'-'.join(w)}{o}" for w, o, _ in CASES])
def test_a_size_at_its_maximum_is_refused_at_once_or_fits(words, option, top, tmp_path):
    for name, content in _files().items():
        path = tmp_path / name
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    base = BASE[words]
    if option in base:  # mc's --devices and --cycles: replace the small value
        i = base.index(option)
        base = base[:i] + base[i + 2:]
    extra = WITH.get((*words, option), [])
    argv = [sys.executable, "-m", "rram.cli", *words, *base, *extra, option, str(top)]
    run = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, preexec_fn=_limit)
    t0 = time.monotonic()
    try:
        _, err = run.communicate(timeout=WATCH)
        ran = time.monotonic() - t0
        lines = err.strip().splitlines()
        if run.returncode == 0:
            print(f"finished in {ran:.1f} s")
            return  # it fitted and finished
        assert run.returncode == 2, err[-3000:]
        assert len(lines) == 1 and lines[0].startswith("Error: "), err[-3000:]
        assert any(e in lines[0] for e in ESTIMATES), lines[0]
        print(f"refused in {ran:.1f} s: {lines[0]}")
    except subprocess.TimeoutExpired:  # still running within the limit: stop it
        os.killpg(run.pid, signal.SIGINT)
        try:
            _, err = run.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            run.communicate()
            pytest.fail(f"{' '.join(words)} {option} {top}: Ctrl-C did not stop it")
        lines = err.strip().splitlines()
        assert "Traceback" not in err and "MemoryError" not in err
        if run.returncode == -signal.SIGINT:  # it ended as the signal came: no handler
            return
        assert run.returncode == 130, err[-3000:]
        assert lines and lines[-1].startswith("Error: interrupted"), err[-3000:]
        print(f"ran {WATCH:g} s within the limit, stopped: {lines[-1]}")
