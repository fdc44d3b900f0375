"""The experiments that define RRAM, run on a card with the Python engine.

Each function runs one experiment and returns a :class:`Phenomenon`: the measured
figures (``figures``), the pass/fail verdicts against the acceptance thresholds
(``checks``) and the raw data for plots (``data``).  ``make demo`` and the tests call the
same functions, so the numbers in the summary are the numbers the tests assert.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .analysis import first_crossing, log_slope, loop_metrics
from .card import default_card
from .engine.run import Options, SimResult, simulate
from .engine.static import read_resistance, solve_static
from .engine.stimulus import constant_stress, dc_loops, pulse_train
from .params import Card

YEAR = 365.25 * 24 * 3600.0


@dataclass
class Phenomenon:
    name: str
    figures: dict[str, Any]
    checks: dict[str, bool]
    data: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def passed(self) -> bool:
        return all(self.checks.values())


def _loops(card: Card, options: Options | None, **kw) -> SimResult:
    res = simulate("compliance", dc_loops(**kw), cards=card, options=options)
    res.raise_on_failure()
    return res


def abrupt_set(card: Card | None = None, icc: float = 100e-6, cycles: int = 3,
               options: Options | None = None, max_mv: float = 50.0) -> Phenomenon:
    """Current from 10 % to 90 % of the compliance on the SET up-ramp, per cycle."""
    card = card or default_card()
    res = _loops(card, options, icc_set=icc, cycles=cycles)
    a = res.device_arrays(0)
    st = res.stimuli[0]
    seg = st.segment_of(a["time_s"])
    widths, v10s = [], []
    for c in range(cycles):
        up = seg == 4 * c
        v, i = a["v_applied_V"][up], np.abs(a["current_A"][up])
        v10, v90 = first_crossing(v, i, 0.1 * icc), first_crossing(v, i, 0.9 * icc)
        widths.append(1e3 * (v90 - v10))
        v10s.append(v10)
    widths_a = np.array(widths)
    return Phenomenon(
        "abrupt_set",
        {"compliance_A": icc, "v10_V": v10s, "rise_10_90_mV": widths},
        {f"10-90 % rise <= {max_mv:g} mV in every cycle":
         bool(np.all(np.isfinite(widths_a)) and np.all(widths_a <= max_mv))},
        {"result": res},
    )


def gradual_reset(card: Card | None = None, cycles: int = 3, options: Options | None = None,
                  min_span_mv: float = 300.0, max_step_loss: float = 0.5) -> Phenomenon:
    """RESET current from its peak down to half of it, and the worst 10 mV step."""
    card = card or default_card()
    res = _loops(card, options, cycles=cycles)
    a = res.device_arrays(0)
    st = res.stimuli[0]
    seg = st.segment_of(a["time_s"])
    spans, worst, peaks = [], [], []
    for c in range(cycles):
        down = seg == 4 * c + 2
        v, i = np.abs(a["v_applied_V"][down]), np.abs(a["current_A"][down])
        k = int(np.argmax(i))
        v_after, i_after = v[k:], i[k:]
        v_half = first_crossing(v_after, -i_after, -0.5 * i[k])
        spans.append(1e3 * (v_half - v[k]) if np.isfinite(v_half) else 1e3 * (v[-1] - v[k]))
        # Current kept over every 10 mV of the decay (samples every 2 mV).
        grid = np.arange(v[k], v[-1] - 0.01, 0.002)
        ig = np.interp(grid, v_after, i_after)
        ratio = np.interp(grid + 0.01, v_after, i_after) / ig
        worst.append(float(ratio.min()) if ratio.size else 1.0)
        peaks.append(float(v[k]))
    return Phenomenon(
        "gradual_reset",
        {"peak_at_V": peaks, "decay_to_half_mV": spans, "worst_10mV_kept": worst},
        {f"decay over >= {min_span_mv:g} mV": bool(np.min(spans) >= min_span_mv),
         f"no 10 mV step loses more than {max_step_loss:.0%}":
         bool(np.min(worst) >= 1.0 - max_step_loss)},
        {"result": res},
    )


def lrs_vs_compliance(card: Card | None = None,
                      iccs: Sequence[float] = (20e-6, 50e-6, 100e-6, 200e-6, 500e-6),
                      options: Options | None = None,
                      slope_range: tuple[float, float] = (-1.4, -0.6)) -> Phenomenon:
    """R_LRS read at +0.1 V after a SET at each compliance (one fresh device each)."""
    card = card or default_card()
    iccs_a = np.asarray(iccs, float)
    res = simulate("compliance", [dc_loops(icc_set=i) for i in iccs_a], cards=card,
                   options=options)
    res.raise_on_failure()
    m = loop_metrics(res)
    r = m["r_lrs_ohm"].to_numpy()
    slope = log_slope(iccs_a, r)
    return Phenomenon(
        "lrs_vs_compliance",
        {"compliance_A": iccs_a.tolist(), "r_lrs_ohm": r.tolist(), "log_slope": slope},
        {"R_LRS falls with compliance": bool(np.all(np.diff(r) < 0)),
         f"slope in [{slope_range[0]}, {slope_range[1]}]":
         bool(slope_range[0] <= slope <= slope_range[1])},
        {"metrics": m},
    )


def hrs_vs_reset_voltage(card: Card | None = None,
                         v_resets: Sequence[float] = (-1.0, -1.2, -1.4, -1.6, -1.8, -2.0),
                         options: Options | None = None, min_ratio: float = 10.0
                         ) -> Phenomenon:
    """R_HRS read at +0.1 V after RESET sweeps to each maximum voltage."""
    card = card or default_card()
    vr = np.asarray(v_resets, float)
    res = simulate("compliance", [dc_loops(v_reset=v) for v in vr], cards=card,
                   options=options)
    res.raise_on_failure()
    m = loop_metrics(res)
    r = m["r_hrs_ohm"].to_numpy()
    ratio = float(r[-1] / r[0])
    return Phenomenon(
        "hrs_vs_reset_voltage",
        {"v_reset_V": vr.tolist(), "r_hrs_ohm": r.tolist(), "ratio": ratio},
        {"R_HRS rises monotonically with |v_reset|": bool(np.all(np.diff(r) > 0)),
         f"rise >= {min_ratio:g}x over the range": bool(ratio >= min_ratio)},
        {"metrics": m},
    )


def overshoot(card: Card | None = None,
              cds: Sequence[float] = (1e-15, 10e-15, 100e-15, 1e-12),
              v_pulse: float = 2.0, width: float = 80e-9, edge: float = 10e-9,
              v_gate: float = 1.28, options: Options | None = None,
              min_peak_ratio_100ff: float = 2.0) -> Phenomenon:
    """1T1R SET pulse with a capacitance on the drain node: peak current and R_LRS."""
    card = card or default_card()
    st = pulse_train([v_pulse], width=width, rise=edge, gap=100e-9, v_gate=v_gate,
                     dt=edge / 200)
    res = simulate("1t1r", st, cards=card, n_devices=len(cds),
                   circuit_params={"cd": list(cds)}, options=options)
    res.raise_on_failure()
    kp, wl, vto = (res.circuit_params[0, k] for k in (3, 4, 5))
    icc = 0.5 * kp * wl * max(v_gate - vto, 0.0) ** 2
    peaks, r_lrs = [], []
    for d in range(len(cds)):
        a = res.device_arrays(d)
        peaks.append(float(np.max(np.abs(a["current_A"]))) / icc)
        r_lrs.append(float(read_resistance([card], a["gap_nm"][-1], a["width_nm"][-1])[0]))
    cds_a = np.asarray(cds)
    k100 = int(np.argmin(np.abs(cds_a - 100e-15)))
    return Phenomenon(
        "overshoot",
        {"cd_F": list(cds), "compliance_A": icc, "peak_over_compliance": peaks,
         "r_lrs_ohm": r_lrs},
        {f"peak >= {min_peak_ratio_100ff:g}x compliance at 100 fF":
         bool(peaks[k100] >= min_peak_ratio_100ff),
         "larger C raises the peak": bool(np.all(np.diff(peaks) >= -1e-3)),
         "larger C lowers R_LRS": bool(r_lrs[-1] < r_lrs[0] and r_lrs[k100] < r_lrs[0])},
        {"result": res},
    )


def read_disturb(card: Card | None = None,
                 voltages: Sequence[float] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6),
                 horizon: float = 1e11, options: Options | None = None,
                 min_years_at_0v1: float = 10.0) -> Phenomenon:
    """Time for the HRS (after the default DC loop) to halve under a constant read voltage.

    The run stops when the current has doubled (R halved at that voltage); a device that
    survives ``horizon`` seconds is reported as > horizon.
    """
    card = card or default_card()
    loop = _loops(card, options)
    a = loop.device_arrays(0)
    x, w = a["gap_nm"][-1], a["width_nm"][-1]
    hrs = card.replace(x0=x * 1e-9, w0=w * 1e-9)
    v = np.asarray(voltages, float)
    i0 = solve_static([hrs] * v.size, x, w, v)["current_A"]
    res = simulate("resistor", [constant_stress(vi, horizon) for vi in v], cards=hrs,
                   options=options, stop_current=2.0 * i0)
    res.raise_on_failure()
    t_half = res.stop_times
    survived = ~np.isfinite(t_half)
    t_rep = np.where(survived, np.inf, t_half)
    fit = np.isfinite(t_rep)
    slope = (float(np.polyfit(v[fit], np.log10(t_rep[fit]), 1)[0])
             if fit.sum() >= 2 else float("nan"))
    return Phenomenon(
        "read_disturb",
        {"hrs_gap_nm": float(x), "hrs_width_nm": float(w), "voltage_V": v.tolist(),
         "t_half_s": [float(t) for t in t_rep], "decades_per_volt": -slope},
        {f"HRS survives > {min_years_at_0v1:g} years at 0.1 V":
         bool(t_rep[np.argmin(np.abs(v - 0.1))] > min_years_at_0v1 * YEAR),
         "halving time falls with voltage": bool(np.all(np.diff(t_rep) < 0)),
         "exponential in voltage (log-linear fit, R^2 > 0.95)":
         bool(_r2(v[fit], np.log10(t_rep[fit])) > 0.95)},
        {"result": res},
    )


def _r2(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 3:
        return float("nan")
    p = np.polyfit(x, y, 1)
    resid = y - np.polyval(p, x)
    return float(1.0 - resid.var() / y.var())


def reset_temperature(card: Card | None = None, options: Options | None = None,
                      max_jump_k: float = 5.0) -> Phenomenon:
    """CF temperature rise during the RESET of the default loop, and its continuity."""
    card = card or default_card()
    res = _loops(card, options)
    a = res.device_arrays(0)
    st = res.stimuli[0]
    seg = st.segment_of(a["time_s"])
    reset = (seg == 2) | (seg == 3)
    temp = a["temperature_K"][reset]
    rise = float(temp.max() - card["tamb"])
    jump = float(np.max(np.abs(np.diff(temp))))
    k = int(np.argmax(temp))
    return Phenomenon(
        "reset_temperature",
        {"max_rise_K": rise, "at_V": float(a["v_applied_V"][reset][k]),
         "largest_step_between_2mV_samples_K": jump},
        {f"continuous (no jump > {max_jump_k:g} K between 2 mV samples)":
         bool(jump <= max_jump_k)},
        {"result": res},
    )


ALL = (abrupt_set, gradual_reset, lrs_vs_compliance, hrs_vs_reset_voltage, overshoot,
       read_disturb, reset_temperature)


def run_all(card: Card | None = None, options: Options | None = None) -> list[Phenomenon]:
    return [f(card, options=options) for f in ALL]
