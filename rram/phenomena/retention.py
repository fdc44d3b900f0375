"""States under a constant voltage: read disturb, read immunity in both polarities,
half-select disturb; and states in a bake (retention at high temperature)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..card import Card
from ..constants import CELSIUS_ZERO, KB_EV
from ..engine.run import Options, simulate
from ..engine.static import read_resistance, solve_static
from ..engine.stimulus import constant_stress
from ..states import standard_states as _states
from .common import YEAR, Phenomenon, card_or_default, first_crossing_time, set_sign


def _hold(card: Card, state: dict) -> Card:
    return card.replace(x0=state["gap_nm"] * 1e-9, w0=state["width_nm"] * 1e-9)


def read_disturb(card: Card | None = None,
                 voltages: Sequence[float] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6),
                 horizon: float = 1e11, options: Options | None = None,
                 min_years_at_0v1: float = 10.0) -> Phenomenon:
    """Time for the HRS (after the default DC loop) to halve under a constant read voltage
    of the SET polarity.

    The run stops when the current has doubled (R halved at that voltage); a device that
    survives ``horizon`` seconds is reported as > horizon.
    """
    card = card_or_default(card)
    _, hrs_state, _ = _states(card, options)
    hrs = _hold(card, hrs_state)
    v = np.asarray(voltages, float) * set_sign(card)
    x, w = hrs_state["gap_nm"], hrs_state["width_nm"]
    i0 = np.abs(solve_static([hrs] * v.size, x, w, v)["current_A"])
    res = simulate("resistor", [constant_stress(vi, horizon) for vi in v], cards=hrs,
                   options=options, stop_current=2.0 * i0)
    res.raise_on_failure()
    t_half = res.stop_times
    t_rep = np.where(~np.isfinite(t_half), np.inf, t_half)
    fit = np.isfinite(t_rep)
    slope = (float(np.polyfit(np.abs(v[fit]), np.log10(t_rep[fit]), 1)[0])
             if fit.sum() >= 2 else float("nan"))
    return Phenomenon(
        "read_disturb",
        {"hrs_gap_nm": x, "hrs_width_nm": w, "voltage_V": np.abs(v).tolist(),
         "t_half_s": [float(t) for t in t_rep], "decades_per_volt": -slope},
        {f"HRS survives > {min_years_at_0v1:g} years at 0.1 V":
         bool(t_rep[0] > min_years_at_0v1 * YEAR),
         "halving time falls with voltage": bool(np.all(np.diff(t_rep) < 0)),
         "exponential in voltage (log-linear fit, R^2 > 0.95)":
         bool(_r2(np.abs(v[fit]), np.log10(t_rep[fit])) > 0.95)},
        {"result": res},
    )


def _r2(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 3:
        return float("nan")
    p = np.polyfit(x, y, 1)
    resid = y - np.polyval(p, x)
    return float(1.0 - resid.var() / y.var())


def read_immunity(card: Card | None = None, v_read: float = 0.2, years: float = 10.0,
                  options: Options | None = None, factor: float = 2.0,
                  disturb_window: tuple[float, float] = (1e2, 1e9),
                  horizon: float = 3e9) -> Phenomenon:
    """Reads of either polarity leave both states alone; half-selection disturbs them.

    The LRS and HRS of the default loop's steady cycle are held at ±``v_read`` for
    ``years``: R (V/I at the stress) must stay within ``factor``.  Half-select disturb:
    the HRS at half of V_set (SET polarity) and the LRS at half of |V_reset| (RESET
    polarity), the cycle's switching voltages, must change R by ``factor`` within
    ``disturb_window`` seconds: disturb exists, finite and measurable, as V/2 schemes
    need it to be characterised.
    """
    card = card_or_default(card)
    lrs, hrs, m = _states(card, options)
    s = set_sign(card)
    cases = [("LRS", lrs, +v_read), ("LRS", lrs, -v_read), ("HRS", hrs, +v_read),
             ("HRS", hrs, -v_read), ("HRS half-select", hrs, 0.5 * abs(m["v_set_V"])),
             ("LRS half-select", lrs, -0.5 * abs(m["v_reset_V"]))]
    cards = [_hold(card, state) for _, state, _ in cases]
    volts = np.array([s * v for *_, v in cases])
    i0 = np.abs(solve_static(cards, [st["gap_nm"] for _, st, _ in cases],
                             [st["width_nm"] for _, st, _ in cases], volts)["current_A"])
    # a run ends once R has fallen by the factor (the current has risen by it): beyond,
    # an unlimited SET runs the CF into the cell's walls, which tells nothing more
    res = simulate("resistor", [constant_stress(v, horizon, samples_per_decade=20)
                                for v in volts], cards=cards, options=options,
                   stop_current=1.01 * factor * i0)
    res.raise_on_failure()
    t_change, r_end = [], []
    for d in range(len(cases)):
        a = res.device_arrays(d)
        t, i = a["time_s"], np.abs(a["current_A"])
        hold = t >= 10 * res.stimuli[d].times[1]  # after the ramp to the stress voltage
        ratio = i[hold][0] / i[hold]  # R(t)/R(start)
        t_stop = res.stop_times[d]
        t_change.append(min(first_crossing_time(t[hold], ratio, factor),
                            t_stop if np.isfinite(t_stop) else np.inf))
        r_end.append(float(np.interp(np.log(years * YEAR), np.log(t[hold]), ratio))
                     if t[hold][-1] >= years * YEAR else 1.0 / factor)
    t_change_a, r_end_a = np.array(t_change), np.array(r_end)
    reads, half = slice(0, 4), slice(4, 6)
    r0 = read_resistance([card] * 2, [lrs["gap_nm"], hrs["gap_nm"]],
                         [lrs["width_nm"], hrs["width_nm"]])
    return Phenomenon(
        "read_immunity",
        {"cases": [f"{name} at {v:+.3g} V" for name, _, v in cases],
         "r_lrs_ohm": float(r0[0]), "r_hrs_ohm": float(r0[1]),
         "r_after_10_years_over_r0": r_end_a[reads].tolist(),
         "time_to_change_2x_s": t_change_a.tolist()},
        {f"both states within {factor:g}x for {years:g} years at ±{v_read:g} V":
         bool(np.all(t_change_a[reads] > years * YEAR)),
         f"half-select changes R {factor:g}x within {disturb_window[0]:g}-"
         f"{disturb_window[1]:g} s":
         bool(np.all((t_change_a[half] >= disturb_window[0])
                     & (t_change_a[half] <= disturb_window[1])))},
        {"result": res, "cases": cases},
    )


def bake_retention(card: Card | None = None,
                   temperatures_c: Sequence[float] = (85.0, 125.0, 150.0),
                   factor: float = 2.0, max_horizon: float = 1e17,
                   options: Options | None = None, years_at_85c: float = 10.0,
                   tolerance_ev: float = 0.01) -> Phenomenon:
    """The LRS and HRS of the default loop baked at zero bias at each temperature (°C):
    the time for R, read at +0.1 V at the card's ambient, to change by ``factor``, and
    the activation energy of an Arrhenius fit of those times against 1/kT.

    The only process at zero bias is vacancy diffusion (``rram.equations.retention``),
    so the fitted energy must be its barrier E_d = ``edif`` + ``dea`` (within
    ``tolerance_ev``); both
    states must last ``years_at_85c`` at 85 °C."""
    card = card_or_default(card)
    lrs, hrs, _ = _states(card, options)
    temps_k = np.asarray(temperatures_c, float) + CELSIUS_ZERO
    runs = [(name, state, t) for name, state in (("LRS", lrs), ("HRS", hrs))
            for t in temps_k]
    cards = [_hold(card, state).replace(tamb=t) for _, state, t in runs]
    r0 = read_resistance([card] * len(runs), [st["gap_nm"] for _, st, _ in runs],
                         [st["width_nm"] for _, st, _ in runs])
    found = np.full(len(runs), np.inf)
    results = []
    # decade by decade: a bake run far past the 2x point ends with both states parked at
    # their bounds, where the integrator's steps stall; the crossing comes well before
    for horizon in np.geomspace(1e2, max_horizon, round(np.log10(max_horizon)) - 1):
        todo = [d for d in range(len(runs)) if not np.isfinite(found[d])]
        if not todo:
            break
        res = simulate("resistor", [constant_stress(0.0, horizon, samples_per_decade=20)]
                       * len(todo), cards=[cards[d] for d in todo], options=options)
        res.raise_on_failure()
        results.append(res)
        for j, d in enumerate(todo):
            a = res.device_arrays(j)
            r = read_resistance([card] * len(a["time_s"]), a["gap_nm"], a["width_nm"])
            found[d] = first_crossing_time(a["time_s"], r / r0[d], factor)
    times = {}
    for (name, _, _), t_fail in zip(runs, found, strict=True):
        times.setdefault(name, []).append(float(t_fail))
    e_dif = card["edif"] + card["dea"]
    figures = {"temperature_C": [float(t) for t in temperatures_c], "e_dif_eV": e_dif}
    checks = {}
    for name, t_fail in times.items():
        t_fail = np.asarray(t_fail)
        finite = np.isfinite(t_fail)
        energy = (float(np.polyfit(1.0 / (KB_EV * temps_k[finite]), np.log(t_fail[finite]),
                                   1)[0]) if finite.sum() >= 2 else float("nan"))
        figures[f"{name.lower()}_time_to_{factor:g}x_s"] = [float(t) for t in t_fail]
        figures[f"{name.lower()}_activation_energy_eV"] = energy
        checks[f"{name} follows Arrhenius with E = edif + dea +- {tolerance_ev:g} eV"] = bool(
            abs(energy - e_dif) <= tolerance_ev)
        at_85 = np.interp(1.0 / (85.0 + CELSIUS_ZERO), 1.0 / temps_k[::-1],
                          np.log(t_fail[::-1])) if finite.all() else float("inf")
        checks[f"{name} lasts {years_at_85c:g} years at 85 C"] = bool(
            np.exp(at_85) > years_at_85c * YEAR)
    return Phenomenon("bake_retention", figures, checks, {"results": results})
