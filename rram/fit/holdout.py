"""Held-out validation: cycles the fit never saw, and the errors the fitted model makes
on them beside its training errors.

The held-out cycles are chosen without randomness, so a fit and its validation repeat
exactly: ``--holdout 0.1`` holds out every 10th cycle (in cycle order); ``--holdout
600:699`` a range; ``--holdout 3,17,42`` a list.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..card import Card
from ..errors import InputError
from .loop import MeasuredLoop, simulate_loops, trace_metrics

#: A switching voltage within this of the data counts as reproduced (V).
VOLTAGE_TOLERANCE = 0.1


def parse_cycle_range(text: str, what: str) -> tuple[int, int]:
    """``A:B`` with A <= B (cycle numbers), for ``--cycles`` and ``--holdout``."""
    m = re.fullmatch(r"\s*(\d+)\s*:\s*(\d+)\s*", text)
    if not m or int(m.group(1)) > int(m.group(2)):
        raise InputError(f"{what} {text!r}: expected A:B with A <= B (e.g. 400:500)")
    return int(m.group(1)), int(m.group(2))


#: The smallest held-out fraction (every 10^6-th cycle): 1/F of a smaller one overflows.
MIN_FRACTION = 1e-6


@dataclass(frozen=True)
class Holdout:
    """Which cycles to hold out: a ``fraction`` of them (every 1/fraction-th), or the
    listed ``cycles``."""

    fraction: float | None = None
    cycles: tuple[int, ...] = ()
    text: str = ""  # as the user gave it (recorded with the results)

    @classmethod
    def parse(cls, text: str, what: str = "--holdout") -> Holdout:
        text = text.strip()
        if ":" in text:
            a, b = parse_cycle_range(text, what)
            return cls(cycles=tuple(range(a, b + 1)), text=text)
        if re.fullmatch(r"\d+(\s*,\s*\d+)*", text):
            return cls(cycles=tuple(int(c) for c in text.split(",")), text=text)
        try:
            f = float(text)
        except ValueError:
            f = math.nan
        if not MIN_FRACTION <= f <= 0.5:
            raise InputError(f"{what} {text!r}: give a fraction in [{MIN_FRACTION:g}, 0.5] "
                             "(e.g. 0.1), a cycle range A:B or a list of cycles 3,17,42")
        return cls(fraction=f, text=text)

    def split(self, cycles: Sequence[int]) -> tuple[list[int], list[int]]:
        """(training, held-out) cycles of ``cycles``; both non-empty."""
        ordered = sorted(set(int(c) for c in cycles))
        if self.fraction is not None:
            step = max(2, round(1 / self.fraction))
            held = ordered[step - 1::step]
        else:
            listed = set(self.cycles)
            held = [c for c in ordered if c in listed]
        held_set = set(held)
        train = [c for c in ordered if c not in held_set]
        if not held or not train:
            raise InputError(f"--holdout leaves {len(train)} training and {len(held)} "
                             f"held-out cycles of the {len(ordered)} in the data: both "
                             "must be non-empty")
        return train, held


def loop_errors(loops: Sequence[MeasuredLoop], card: Card) -> pd.DataFrame:
    """Per loop: the card's RMS log-current error (decades) and its V_set, V_reset,
    R_LRS and R_HRS errors against the measured ones."""
    from .objective import loop_rms

    rows = []
    for loop in loops:
        cur = simulate_loops(loop, [card]).current[0]
        data, model = trace_metrics(loop), trace_metrics(loop, cur)
        rows.append({"cycle": loop.cycle, "rms_dec": loop_rms(loop, cur),
                     "v_set_error_V": model["v_set_V"] - data["v_set_V"],
                     "v_reset_error_V": model["v_reset_V"] - data["v_reset_V"],
                     "r_lrs_error": model["r_lrs_ohm"] / data["r_lrs_ohm"] - 1,
                     "r_hrs_error": model["r_hrs_ohm"] / data["r_hrs_ohm"] - 1})
    return pd.DataFrame(rows)


def summarise(errors: pd.DataFrame) -> dict[str, float]:
    """Median and worst RMS, and the share of loops whose V_set and V_reset are both
    within :data:`VOLTAGE_TOLERANCE` (a loop whose model does not switch counts as
    missed)."""
    within = (np.abs(errors["v_set_error_V"]) <= VOLTAGE_TOLERANCE) \
        & (np.abs(errors["v_reset_error_V"]) <= VOLTAGE_TOLERANCE)
    return {"loops": len(errors), "median_rms_dec": float(errors["rms_dec"].median()),
            "worst_rms_dec": float(errors["rms_dec"].max()),
            "voltages_within_0.1V": int(within.sum())}


def report_lines(training: pd.DataFrame, held: pd.DataFrame) -> list[str]:
    lines = [f"{'':10s} {'loops':>5s} {'median RMS':>10s} {'worst RMS':>9s} "
             f"{'V_set, V_reset within 0.1 V':>28s}"]
    for label, frame in (("training", training), ("held out", held)):
        s = summarise(frame)
        lines.append(f"{label:10s} {s['loops']:5d} {s['median_rms_dec']:10.3f} "
                     f"{s['worst_rms_dec']:9.3f} {s['voltages_within_0.1V']:>19d} of "
                     f"{s['loops']}")
    return lines


def split_distribution(frame: pd.DataFrame, rule: Holdout) -> tuple[pd.DataFrame,
                                                                   pd.DataFrame]:
    """(training, held-out) rows of a distribution table (``rram.fit.data.
    load_distribution``), split by cycle; every device keeps its training cycles."""
    _train, held = rule.split(frame["cycle"].to_numpy(int))
    keep = frame["cycle"].isin(held)
    out = frame[~keep].copy(), frame[keep].copy()
    for part in out:
        part.attrs = dict(frame.attrs)
    return out


def distribution_errors(targets: dict[str, object], model: pd.DataFrame) -> pd.DataFrame:
    """Per data set (``targets``: label -> :class:`rram.fit.variation.Target`) and
    metric: the model's median error (relative for resistances, volts for voltages),
    spread ratio (model / data; ln-σ of R, σ of V) and KS distance to the data."""
    from scipy.stats import ks_2samp

    from ..metrics import LOG_METRICS
    from .variation import stats_of

    rows = []
    for label, target in targets.items():
        data = target.stats()
        for m in target.metrics:
            b = model[m].to_numpy(float)
            b = b[np.isfinite(b)]
            s = stats_of({m: b})[m]
            a = target.values[m][np.isfinite(target.values[m])]
            d = data[m]
            median_error = s["median"] / d["median"] - 1 if m in LOG_METRICS \
                else s["median"] - d["median"]
            rows.append({"data": label, "metric": m, "n": int(a.size),
                         "median_error": median_error,
                         "spread_ratio": s["spread"] / d["spread"],
                         "ks": float(ks_2samp(a, b).statistic)})
    return pd.DataFrame(rows)


def distribution_lines(errors: pd.DataFrame) -> list[str]:
    lines = [f"{'data':9s} {'metric':10s} {'n':>5s} {'median error':>13s} "
             f"{'spread model/data':>17s} {'KS':>6s}"]
    for r in errors.itertuples():
        med = f"{100 * r.median_error:+.1f} %" if r.metric.startswith("r_") \
            else f"{1e3 * r.median_error:+.0f} mV"
        lines.append(f"{r.data:9s} {r.metric:10s} {r.n:5d} {med:>13s} "
                     f"{r.spread_ratio:17.3f} {r.ks:6.3f}")
    return lines
