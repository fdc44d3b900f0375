"""One deck in batch ngspice, as the benchmarks run them: its output and the wall time."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path


def batch(text: str, workdir: Path) -> tuple[str, float]:
    """``ngspice -b`` on ``text`` (written to ``workdir``/deck.cir, run there): standard
    output and error together, and the wall time (s)."""
    deck = workdir / "deck.cir"
    deck.write_text(text)
    t0 = time.perf_counter()
    proc = subprocess.run(["ngspice", "-b", str(deck)], capture_output=True, text=True,
                          cwd=workdir, timeout=3600)
    return proc.stdout + proc.stderr, time.perf_counter() - t0
