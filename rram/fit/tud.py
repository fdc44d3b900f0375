"""The TUD H16248L_M12 per-cycle summary as a distribution CSV (``fit-variation`` input).

    python -m rram.fit.tud SUMMARY.txt OUT.csv
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..io import write_atomic
from .data import load_tud_summary, summary_to_distribution


def convert(summary: str | Path, out: str | Path) -> Path:
    frame = summary_to_distribution(load_tud_summary(summary), device="H16248L_M12")
    return write_atomic(out, lambda p: frame.to_csv(p, index=False, float_format="%.6g"))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(convert(sys.argv[1], sys.argv[2]))
