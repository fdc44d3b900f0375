"""The benchmarks' Markdown tables, ``docs/benchmarks/<name>.md``, written by the benchmarks.

A benchmark run with ``--markdown`` calls :func:`write` with its ``__file__``, a title, what
it measured (a sentence without its full stop) and its tables (cells formatted by the
caller).  The file names the command that produced it; apart from its provenance line
(date, commit, package version, machine) it depends only on the caller's input.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "benchmarks"

#: One table: a heading (may be empty), the column names (with units), the rows.
Table = tuple[str, Sequence[str], Sequence[Sequence[object]]]


def add_option(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--markdown", action="store_true",
                    help="also write the table(s) to docs/benchmarks/<name>.md")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


def committed(commit: str, path: str) -> str:
    """The text of the repository's ``path`` as ``commit`` has it (a baseline's
    rendering, measured beside today's)."""
    return _git("show", f"{commit}:{path}") + "\n"


def _commit() -> str:
    try:
        head = _git("rev-parse", "--short", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return "unknown commit"
    return head + (" + local changes" if dirty else "")


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def provenance() -> str:
    import rram  # here, not at the top: bench_engine's --baseline children import this file

    date = datetime.datetime.now(datetime.UTC).date().isoformat()
    return (f"Measured {date} (UTC) at commit {_commit()}, rram {rram.__version__}, on "
            f"{_cpu()} ({os.cpu_count()} cores), Python {platform.python_version()}, "
            f"{platform.platform()}.")


def _row(cells: Sequence[object]) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def write(script: str, title: str, what: str, tables: Sequence[Table]) -> Path:
    """Write ``docs/benchmarks/<script's name without bench_>.md`` atomically; its path."""
    from rram.io import write_text_atomic

    name = Path(script).stem.removeprefix("bench_")
    command = shlex.join(["python", f"benchmarks/{Path(script).name}", *sys.argv[1:]])
    lines = [f"# {title}", "", f"{what}, measured by `{command}`.", "", provenance()]
    for heading, columns, rows in tables:
        lines += ["", *([f"## {heading}", ""] if heading else [])]
        lines += [_row(columns), _row(["---"] * len(columns)), *map(_row, rows)]
    DOCS.mkdir(parents=True, exist_ok=True)
    # a temporary file in DOCS, then os.replace: a reader never sees half a table
    return write_text_atomic(DOCS / f"{name}.md", "\n".join(lines) + "\n")
