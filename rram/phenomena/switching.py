"""SET and RESET: abruptness, what sets R_LRS and R_HRS, the Joule-assisted RESET,
overshoot."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..card import Card, formed_card
from ..engine.run import Options, SimResult, simulate
from ..engine.static import read_resistance
from ..engine.stimulus import dc_loops, pulse_train
from ..experiment import DCLoop
from ..metrics import first_crossing, loop_metrics
from .common import (
    Phenomenon,
    card_or_default,
    local_slopes,
    log_slope,
    loops,
    phase_mask,
    set_sign,
)


def abrupt_set(card: Card | None = None, icc: float = 100e-6, cycles: int = 3,
               options: Options | None = None, max_mv: float = 50.0, v_set: float = 2.0,
               v_reset: float = 2.0, rate: float = 1e3) -> Phenomenon:
    """Current from 10 % to 90 % of the compliance on the SET up-ramp, per cycle."""
    card = card_or_default(card)
    res = loops(card, options, icc_set=icc, cycles=cycles, v_set=v_set, v_reset=v_reset,
                rate=rate)
    a = res.device_arrays(0)
    widths, v10s = [], []
    for c in range(cycles):
        up = phase_mask(res, 0, a["time_s"], c, "set", segment=0)
        v, i = np.abs(a["v_applied_V"][up]), np.abs(a["current_A"][up])
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
    card = card_or_default(card)
    res = loops(card, options, cycles=cycles)
    a = res.device_arrays(0)
    spans, worst, peaks = [], [], []
    for c in range(cycles):
        down = phase_mask(res, 0, a["time_s"], c, "reset", segment=0)
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


#: Compliances of the LRS and Joule-RESET experiments (A).
COMPLIANCES = (10e-6, 20e-6, 50e-6, 100e-6, 200e-6, 500e-6, 1e-3)


#: Loops per step of the compliance staircase: a CF left wide by a higher compliance
#: thins by ``kwr`` per unit of each RESET's opening (0.5–0.7 nm a loop), and R_LRS has
#: settled within 1 % after 15 loops on the default and the fitted TUD cards (measured).
STAIRCASE_LOOPS = 20


def _compliance_series(card: Card, iccs: np.ndarray, v_set: float, options: Options | None
                       ) -> tuple[list[tuple[SimResult, int, int]], pd.DataFrame]:
    """Per compliance, where its steady loop is (result, device, cycle) and its metrics.

    Measured as an engineer measures a cycled device: one device taken down the
    compliances from the highest, :data:`STAIRCASE_LOOPS` loops at each at the card's
    own protocol (rate and RESET voltage of ``meta["fit"]["protocol"]``, else 1 kV/s to
    2 V), each step starting from the state the last one left; the last loop's metrics,
    with ``last_loop_change`` (its R_LRS against the loop before).  A fitted card's own
    state is the CF of its fitted compliance, which two loops at a lower compliance only
    partly rebuild."""
    s = set_sign(card)
    protocol = DCLoop.from_meta(card.meta)
    results, rows = {}, {}
    for k in np.argsort(iccs)[::-1]:
        res = simulate("compliance", dc_loops(s * v_set, -s * abs(protocol.v_reset),
                                              protocol.rate, STAIRCASE_LOOPS,
                                              icc_set=float(iccs[k])),
                       cards=card, options=options)
        res.raise_on_failure()
        m = loop_metrics(res)
        r_lrs = m["r_lrs_ohm"].to_numpy()
        # how settled the step is: the last loop's R_LRS against the one before
        results[k], rows[k] = res, m.iloc[-1].copy()
        rows[k]["last_loop_change"] = abs(r_lrs[-1] / r_lrs[-2] - 1.0)
        a = res.device_arrays(0)
        card = formed_card(card, float(a["gap_nm"][-1]) * 1e-9,
                           float(a["width_nm"][-1]) * 1e-9)
    order = range(len(iccs))
    return [(results[k], 0, STAIRCASE_LOOPS - 1) for k in order], \
        pd.DataFrame([rows[k] for k in order]).reset_index(drop=True)


def lrs_vs_compliance(card: Card | None = None, iccs: Sequence[float] = COMPLIANCES,
                      options: Options | None = None, v_set: float = 2.5,
                      slope_range: tuple[float, float] = (-1.3, -0.6)) -> Phenomenon:
    """R_LRS read at +0.1 V after a SET at each compliance (steady loop down a staircase
    of compliances: :func:`_compliance_series`), with the local log-log slope between
    neighbouring compliances; the compliance must be reached within |V| <= ``v_set``."""
    card = card_or_default(card)
    iccs_a = np.asarray(iccs, float)
    runs, m = _compliance_series(card, iccs_a, v_set, options)
    r = m["r_lrs_ohm"].to_numpy()
    slopes = local_slopes(iccs_a, r)
    reached = m["i_peak_A"].to_numpy() / iccs_a
    figures = {"compliance_A": iccs_a.tolist(), "r_lrs_ohm": r.tolist(),
               "local_slopes": slopes.tolist(), "log_slope": log_slope(iccs_a, r),
               "peak_over_compliance": reached.tolist(), "v_set_max_V": v_set}
    change = m["last_loop_change"].to_numpy(float)
    figures["last_loop_change"] = change.tolist()
    checks = {"R_LRS falls with compliance": bool(np.all(np.diff(r) < 0)),
              f"every local slope in [{slope_range[0]}, {slope_range[1]}]":
              bool(np.all((slopes >= slope_range[0]) & (slopes <= slope_range[1]))),
              f"the compliance is reached within |V| <= {v_set:g} V":
              bool(np.all(reached >= 0.9)),
              "R_LRS settled at every step (last two loops within 1 %)":
              bool(np.all(change <= 0.01))}
    return Phenomenon("lrs_vs_compliance", figures, checks, {"metrics": m, "runs": runs})


def joule_reset(card: Card | None = None, iccs: Sequence[float] = COMPLIANCES[1:],
                options: Options | None = None,
                ratio_range: tuple[float, float] = (0.6, 1.6),
                onset_range: tuple[float, float] = (0.4, 1.2), min_temperature: float = 400.0,
                hot_from: float = 100e-6) -> Phenomenon:
    """The RESET current tracks the SET compliance (Ielmini, Nardi, Cagli, IEEE TED 58,
    3246, 2011): I_reset/I_cc, the RESET onset |V| and the CF temperature at the RESET
    current peak, for each compliance (steady loop down a staircase of compliances:
    :func:`_compliance_series`)."""
    card = card_or_default(card)
    iccs_a = np.asarray(iccs, float)
    runs, m = _compliance_series(card, iccs_a, 2.5, options)
    ratio = m["i_reset_A"].to_numpy() / iccs_a
    onset = np.abs(m["v_reset_V"].to_numpy())
    t_peak = []
    for res, d, cycle in runs:
        a = res.device_arrays(d)
        down = phase_mask(res, d, a["time_s"], cycle, "reset", segment=0)
        k = int(np.argmax(np.abs(a["current_A"][down])))
        t_peak.append(float(a["temperature_K"][down][k]))
    t_peak_a = np.array(t_peak)
    hot = iccs_a >= hot_from
    return Phenomenon(
        "joule_reset",
        {"compliance_A": iccs_a.tolist(), "i_reset_over_icc": ratio.tolist(),
         "reset_onset_V": onset.tolist(), "t_at_reset_peak_K": t_peak_a.tolist()},
        {f"I_reset/I_cc in [{ratio_range[0]}, {ratio_range[1]}]":
         bool(np.all((ratio >= ratio_range[0]) & (ratio <= ratio_range[1]))),
         f"RESET onset |V| in [{onset_range[0]}, {onset_range[1]}] V":
         bool(np.all((onset >= onset_range[0]) & (onset <= onset_range[1]))),
         f"T at the RESET peak >= {min_temperature:g} K for I_cc >= {hot_from * 1e6:g} µA":
         bool(np.all(t_peak_a[hot] >= min_temperature))},
        {"metrics": m},
    )


#: RESET amplitudes of the HRS experiments (|V|).
RESET_VOLTAGES = tuple(np.round(np.arange(1.0, 3.01, 0.25), 2))


def _hrs_checks(v: np.ndarray, r: np.ndarray, gap: np.ndarray, l0_nm: float,
                min_slope: float, max_gap: float) -> tuple[dict, dict]:
    step = round(0.5 / float(v[1] - v[0]))  # points per 0.5 V
    slopes = np.log10(r[step:] / r[:-step]) / (v[step:] - v[:-step])
    figures = {"r_hrs_ohm": r.tolist(), "gap_end_nm": gap.tolist(),
               "decades_per_volt_over_0.5V": slopes.tolist(),
               "gap_over_l0_max": float(gap.max() / l0_nm)}
    checks = {"R_HRS rises monotonically with |V_reset,max|": bool(np.all(np.diff(r) > 0)),
              f">= {min_slope:g} decades per volt over every 0.5 V":
              bool(np.all(slopes >= min_slope)),
              f"the gap stays below {max_gap:g} l0": bool(np.all(gap < max_gap * l0_nm))}
    return figures, checks


def hrs_vs_reset_voltage(card: Card | None = None, v_resets: Sequence[float] = RESET_VOLTAGES,
                         options: Options | None = None, min_slope: float = 0.3,
                         max_gap: float = 0.8) -> Phenomenon:
    """R_HRS read at +0.1 V after RESET sweeps to each |V_reset,max| (1R DC loops at the
    card's own rate, SET voltage and compliance, ``meta["fit"]["protocol"]``, else 1 kV/s
    to 2 V at 100 µA; steady cycle), and the gap each RESET leaves."""
    card = card_or_default(card)
    vr = np.asarray(v_resets, float)
    s = set_sign(card)
    protocol = DCLoop.from_meta(card.meta)
    res = simulate("compliance", [dc_loops(s * abs(protocol.v_set), -s * v, protocol.rate, 2,
                                           icc_set=protocol.icc_set) for v in vr],
                   cards=card, options=options)
    res.raise_on_failure()
    m = loop_metrics(res)
    m1 = m[m["cycle"] == 1]
    r = m1["r_hrs_ohm"].to_numpy()
    reset_end = [np.flatnonzero((np.array(st.phases) == "reset") & (st.cycles == 1))[-1]
                 for st in res.stimuli]
    gap = np.array([res.events["gap_end"][d, k] for d, k in enumerate(reset_end)])
    figures, checks = _hrs_checks(vr, r, gap, card["l0"] * 1e9, min_slope, max_gap)
    return Phenomenon("hrs_vs_reset_voltage",
                      {"v_reset_V": vr.tolist(), **figures,
                       "v_set_next_V": m1["v_set_V"].tolist()},
                      checks, {"metrics": m})


def hrs_vs_source_line(card: Card | None = None, v_sls: Sequence[float] = RESET_VOLTAGES,
                       options: Options | None = None, v_wl_set: float = 1.28,
                       v_wl_reset: float = 4.5, width: float = 1e-6,
                       min_slope: float = 0.3, max_gap: float = 0.8) -> Phenomenon:
    """R_HRS of a 1T1R cell after one RESET pulse of each source-line voltage.

    The cell is SET by a 2 V, 80 ns bit-line pulse at V_WL = ``v_wl_set`` (the v2.0
    bench, I_cc ≈ 100 µA), then RESET from that state by a ``width`` pulse on the source
    line with the word line at ``v_wl_reset`` (high, so the transistor passes the
    source-line voltage: a source follower limits the cell to V_WL − V_T).  The engine's
    1T1R circuit grounds the source, so the RESET is simulated with every voltage
    shifted by −V_SL: bit line at −V_SL, gate at V_WL − V_SL (the same circuit).
    """
    card = card_or_default(card)
    s = set_sign(card)
    st = pulse_train([2.0 * s], width=80e-9, rise=10e-9, gap=100e-9, v_gate=v_wl_set,
                     dt=0.5e-9)
    res = simulate("1t1r", st, cards=card, options=options)
    res.raise_on_failure()
    a = res.device_arrays(0)
    lrs = card.replace(x0=max(float(a["gap_nm"][-1]), 0.0) * 1e-9,
                       w0=float(a["width_nm"][-1]) * 1e-9)
    v = np.asarray(v_sls, float)
    pulses = [pulse_train([-s * x], width=width, rise=10e-9, gap=100e-9,
                          v_gate=v_wl_reset - x, dt=width / 500) for x in v]
    res = simulate("1t1r", pulses, cards=lrs, options=options)
    res.raise_on_failure()
    gap = np.array([res.device_arrays(d)["gap_nm"][-1] for d in range(v.size)])
    width_end = np.array([res.device_arrays(d)["width_nm"][-1] for d in range(v.size)])
    r = read_resistance([lrs] * v.size, gap, width_end)
    r_lrs = float(read_resistance([lrs], lrs["x0"] * 1e9, lrs["w0"] * 1e9)[0])
    figures, checks = _hrs_checks(v, r, gap, card["l0"] * 1e9, min_slope, max_gap)
    return Phenomenon("hrs_vs_source_line",
                      {"v_source_line_V": v.tolist(), "v_word_line_V": v_wl_reset,
                       "pulse_width_s": width, "r_lrs_ohm": r_lrs, **figures},
                      checks, {"result": res})


def overshoot(card: Card | None = None,
              cds: Sequence[float] = (1e-15, 10e-15, 100e-15, 1e-12),
              v_pulse: float = 2.0, width: float = 80e-9, edge: float = 10e-9,
              v_gate: float = 1.28, options: Options | None = None,
              min_peak_ratio_100ff: float = 2.0) -> Phenomenon:
    """1T1R SET pulse with a capacitance on the drain node: peak current and R_LRS."""
    card = card_or_default(card)
    st = pulse_train([v_pulse * set_sign(card)], width=width, rise=edge, gap=100e-9,
                     v_gate=v_gate, dt=edge / 200)
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


def reset_temperature(card: Card | None = None, options: Options | None = None,
                      max_jump: float = 0.03) -> Phenomenon:
    """CF temperature during the RESET of the default loop, and its continuity: no jump
    between 2 mV samples larger than ``max_jump`` of the rise."""
    card = card_or_default(card)
    res = loops(card, options)
    a = res.device_arrays(0)
    reset = phase_mask(res, 0, a["time_s"], 0, "reset")
    temp = a["temperature_K"][reset]
    rise = float(temp.max() - card["tamb"])
    jump = float(np.max(np.abs(np.diff(temp))))
    k = int(np.argmax(temp))
    return Phenomenon(
        "reset_temperature",
        {"max_rise_K": rise, "at_V": float(a["v_applied_V"][reset][k]),
         "largest_step_between_2mV_samples_K": jump},
        {f"continuous (no jump > {max_jump:.0%} of the rise between 2 mV samples)":
         bool(jump <= max_jump * rise)},
        {"result": res},
    )
