"""What one loop does not show: smoothing artefacts, and hundreds of cycles."""

from __future__ import annotations

import numpy as np

from ..card import Card
from ..engine.run import Options, simulate
from ..engine.stimulus import dc_loops
from ..metrics import METRICS, did_not_switch, loop_metrics
from .common import Phenomenon, card_or_default, loops, phase_mask, set_sign


def no_artefacts(card: Card | None = None, options: Options | None = None,
                 max_rise: float = 0.01, max_shift: float = 0.03,
                 rate: float = 1.0) -> Phenomenon:
    """No feature of the curves comes from a smoothing width.

    * After the RESET current peak of a slow (``rate`` V/s) DC loop, |I| never rises by
      more than ``max_rise`` from one 2 mV sample to the next (a blend that opens and
      closes would);
    * halving or doubling any one smoothing width (the parameters whose role is
      ``smoothing``) moves V_set, V_reset, R_LRS and R_HRS by at most ``max_shift``.
    """
    card = card_or_default(card)
    res = loops(card, options, cycles=2, rate=rate)
    a = res.device_arrays(0)
    rises = []
    for c in range(2):
        reset = phase_mask(res, 0, a["time_s"], c, "reset")
        i = np.abs(a["current_A"][reset])
        k = int(np.argmax(i))
        after = i[k:]
        rises.append(float(np.max(after[1:] / after[:-1]) - 1.0) if after.size > 1 else 0.0)
    widths = card.model.with_role("smoothing")
    trials = [card] + [card.replace(**{w: card[w] * f}) for w in widths for f in (0.5, 2.0)]
    s = set_sign(card)
    sweep = simulate("compliance", dc_loops(v_set=2.0 * s, v_reset=-2.0 * s, cycles=2),
                     cards=trials, options=options)
    sweep.raise_on_failure()
    m = loop_metrics(sweep)
    table = m.pivot(index="device", columns="cycle", values=list(METRICS))
    base = table.loc[0]
    shift = (table.drop(index=0) / base - 1.0).abs().max(axis=1).to_numpy()
    per_width = {f"{w} x{f:g}": float(shift[2 * k + j]) for k, w in enumerate(widths)
                 for j, f in enumerate((0.5, 2.0))}
    return Phenomenon(
        "no_artefacts",
        {"rate_V_per_s": rate, "largest_rise_after_reset_peak": rises,
         "largest_shift_per_width": per_width},
        {f"|I| never rises > {max_rise:.0%} per sample after the RESET peak":
         bool(max(rises) <= max_rise),
         f"halving or doubling a smoothing width moves no metric > {max_shift:.0%}":
         bool(max(per_width.values()) <= max_shift)},
        {"result": res},
    )


def endurance(card: Card | None = None, options: Options | None = None, spec=None,
              devices: int = 100, cycles: int = 100, seed: int = 1, protocol=None,
              max_failed: float = 0.01, max_drift: float = 0.10,
              min_rank_correlation: float = 0.3, early: tuple[int, int] = (10, 30),
              late: tuple[int, int] = (80, 100)) -> Phenomenon:
    """A Monte Carlo of ``devices`` × ``cycles`` SET/RESET cycles (Python engine).

    No absorbing state: at most ``max_failed`` of the cycles fail to SET (the resistance
    does not fall 2×) and no device fails two cycles in a row; no drift: the medians of
    R_LRS and R_HRS over the ``late`` cycles lie within ``max_drift`` of those over the
    ``early`` ones; the HRS is the gap: R_HRS and the next |V_set| rank-correlate.
    ``options`` is accepted for a uniform interface (the Monte Carlo uses the engine's
    defaults)."""
    from scipy.stats import spearmanr

    from ..experiment import DCLoop
    from ..mc.run import MonteCarlo, run_devices
    from ..variation import default_variation

    card = card_or_default(card)
    s = set_sign(card)
    protocol = protocol or DCLoop(v_set=2.0 * s, v_reset=-2.0 * s)
    mc = MonteCarlo(card=card, spec=spec or default_variation(), devices=devices,
                    cycles=cycles, seed=seed, protocol=protocol)
    df = run_devices(mc, range(devices))
    ok = df["converged"].to_numpy()
    failed = did_not_switch(df["reason"]) | ~ok
    longest = 0  # the longest run of consecutive failed cycles of any device
    for _, g in df.assign(failed=failed).groupby("device"):
        run = 0
        for f in g.sort_values("cycle")["failed"].to_numpy():
            run = run + 1 if f else 0
            longest = max(longest, run)
    lo, hi = late[0], min(late[1], cycles)

    def median(col, a, b):
        sel = (df["cycle"] >= a) & (df["cycle"] < b) & ok
        return float(np.median(df.loc[sel, col]))

    drift = {col: median(col, lo, hi) / median(col, *early) - 1.0
             for col in ("r_lrs_ohm", "r_hrs_ohm")}
    s_df = df.sort_values(["device", "cycle"])
    v_next = s_df.groupby("device")["v_set_V"].shift(-1).abs()
    pair = np.isfinite(v_next) & np.isfinite(s_df["r_hrs_ohm"])
    rho = float(spearmanr(s_df["r_hrs_ohm"][pair], v_next[pair]).statistic)
    return Phenomenon(
        "endurance",
        {"devices": devices, "cycles": cycles, "failed_set_share": float(failed.mean()),
         "longest_failure_run": longest,
         "median_drift_late_vs_early": drift, "spearman_r_hrs_next_v_set": rho,
         "not_converged": int((~ok).sum())},
        {f"<= {max_failed:.0%} of cycles fail to SET": bool(failed.mean() <= max_failed),
         "no device fails two cycles in a row": bool(longest < 2),
         f"medians of R_LRS and R_HRS drift <= {max_drift:.0%}":
         bool(all(abs(v) <= max_drift for v in drift.values())),
         f"Spearman(R_HRS, next |V_set|) >= {min_rank_correlation:g}":
         bool(rho >= min_rank_correlation)},
        {"table": df},
    )
