"""SET-failure episodes from a record (:mod:`rram.episodes`): their share and length from
the record's runs of failed SETs, their step from the card.

* **Runs.**  Per device, in cycle order, a run is a stretch of consecutive cycles whose
  SET did not switch (the ``reason`` column's ``no_set``, as the Monte Carlo writes it).
* **Share.**  The fitted spec already fails some SETs (a barrier drawn high in the
  tail of its distribution); episodes make up the rest: ``(f − f₀)/(1 − f₀)`` of the
  cycles, with f the record's share of failed SETs and f₀ the spec's.
* **Length.**  The record's mean run length (cycles).
* **Step.**  The raise of the barrier at which the spec's median device (every entry at
  its centre, no mode), cycled, fails its SET at the protocol (its V_set reaches the
  SET amplitude, extrapolated from small raises: :func:`failing_raise`), plus three
  of the barrier's cycle-to-cycle σ: the SETs inside an episode fail whatever else the
  cycle draws.  Where the barrier's range ends first (the TUD cell SETs at −1.0 V, its
  V_set rises 0.95 V/eV, and its record's SETs at −2.5 V failed: +1.6 eV, beyond dea's
  ±0.7 eV), the contact: its failed cycles read 1.2–2.4 MΩ in both states, fifteen
  times its HRS, which a contact raised to that resistance reproduces (a cell read
  through it, whatever its gap: the 2× switching rule sees no SET and no RESET).

A record whose SETs fail within ``FAILURE_FACTOR`` of the spec's share, or below the
verdict's noise floor, gets no episodes.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from ..card import Card
from ..episodes import Episodes
from ..experiment import DCLoop
from ..metrics import did_not_switch
from ..variation import VariationSpec
from .carriers import simulate_metrics
from .verdict import FAILURE_FACTOR, FAILURE_FLOOR

#: The barrier an episode raises: the migration barrier that carries V_set.
PARAMETER = "dea"
#: The contact an episode raises where the barrier cannot fail a SET.
CONTACT = "rtop"
#: Margin of the step over the median device's failure, in the barrier's C2C σ.
MARGIN_SIGMAS = 3.0
#: The raises of the SET barrier (eV) whose V_set is extrapolated to the amplitude.
PROBE_RAISE = 0.05


def failure_runs(frame: pd.DataFrame) -> list[int]:
    """The lengths (cycles) of the runs of failed SETs in a distribution table
    (``device``, ``cycle``, ``reason``), every device in cycle order."""
    if "reason" not in frame.columns:
        return []
    runs = []
    for _, rows in frame.groupby("device", sort=False):
        cycles = rows.groupby("cycle")["reason"].agg(lambda r: bool(did_not_switch(r).any()))
        run = 0
        for failed in cycles.sort_index().to_numpy():
            if failed:
                run += 1
            elif run:
                runs.append(run)
                run = 0
        if run:
            runs.append(run)
    return runs


def _median_device(spec: VariationSpec, raise_by: float) -> VariationSpec:
    """The spec's median device (every entry at its centre, no slow part, no mode), its
    SET barrier raised by ``raise_by``."""
    out = []
    for v in spec.variations:
        v = dataclasses.replace(v, sigma=0.0, slow=0.0, memory=0.0, mode_step=0.0,
                                mode_scale=1.0)
        if v.parameter == PARAMETER and v.kind == "c2c":
            v = dataclasses.replace(v, shift=v.shift + raise_by)
        out.append(v)
    return VariationSpec(tuple(out), model=spec.model)


def failing_raise(card: Card, spec: VariationSpec, protocol: DCLoop, seed: int = 1
                  ) -> float | None:
    """The raise of the SET barrier (eV) at which the spec's median device, cycled, no
    longer SETs at ``protocol``: its |V_set| at raises of 0, 1 and 2 ``PROBE_RAISE``
    (after a burn-in cycle at the same raise, so the SET starts from a cycled HRS),
    extrapolated by a straight line to the SET amplitude.  (A bisection on the failure
    itself finds the raise at which the burn-in's first SET, from the formed cell,
    fails: on the default card +0.34 eV, where the cycled SET needs +1.7.)  None if
    the barrier's range ends first; 0 if the median device does not SET at all."""
    p = card.model.by_name[PARAMETER]
    top = p.upper - (card[PARAMETER] + sum(v.shift for v in spec.variations
                                           if v.parameter == PARAMETER))
    raises = PROBE_RAISE * np.arange(3.0)
    v_set = []
    for r in raises:
        frame = simulate_metrics(card, _median_device(spec, float(r)), protocol, 1, 1, seed)
        v = abs(float(frame["v_set_V"].iloc[0])) if not frame.empty else math.nan
        if not math.isfinite(v):
            return float(r)
        v_set.append(v)
    slope = float(np.polyfit(raises, v_set, 1)[0])
    if slope <= 0:
        return None
    found = (abs(protocol.v_set) - v_set[0]) / slope
    return float(found) if found <= top else None


def contact_step(frame: pd.DataFrame, card: Card, spec: VariationSpec) -> float | None:
    """The ln factor on the contact ``rtop`` at which a cell reads as the record's failed
    cycles: their median resistance (both states), less the record's HRS median, over
    the contact's centre; None if the record has no resistances or its failed cycles do
    not read above its HRS."""
    if not {"resistance_ohm", "state"} <= set(frame.columns):
        return None
    failed = did_not_switch(frame["reason"])
    r_failed = float(frame.loc[failed, "resistance_ohm"].median())
    r_hrs = float(frame.loc[~failed & (frame["state"] == "HRS"), "resistance_ohm"].median())
    if not r_failed > 2 * r_hrs:
        return None
    p = card.model.by_name[CONTACT]
    centre = card[CONTACT] * math.exp(sum(v.shift for v in spec.variations
                                          if v.parameter == CONTACT))
    contact = r_failed - r_hrs
    return math.log(contact / centre) if contact <= p.upper else None


def fit_episodes(frame: pd.DataFrame, card: Card, spec: VariationSpec, protocol: DCLoop,
                 modelled: float, seed: int = 1,
                 log: Callable[[str], None] = lambda s: None) -> Episodes | None:
    """The episodes that make ``spec`` (failing ``modelled`` of its SETs) fail the
    record's share of SETs in the record's runs; None where none are needed or no
    carrier can fail a SET.  The carriers in turn: the SET barrier (its raise at which
    the median device's SET fails, :func:`failing_raise`, plus three of its C2C σ), then
    the contact (raised to what the record's failed cycles read, :func:`contact_step`)."""
    runs = failure_runs(frame)
    cycles = frame.groupby("device")["cycle"].nunique().sum()
    measured = sum(runs) / cycles if cycles else 0.0
    if not runs or max(measured, modelled) <= FAILURE_FLOOR \
            or measured <= FAILURE_FACTOR * modelled:
        return None
    entries = {v.parameter: v for v in spec.of_kind("c2c")}
    step, why = None, ""
    if PARAMETER in entries:
        found = failing_raise(card, spec, protocol, seed)
        if found is not None:
            step = found + MARGIN_SIGMAS * entries[PARAMETER].sigma
            parameter, why = PARAMETER, f"the median device fails from {PARAMETER} +{found:.3g}"
        else:
            log(f"SET-failure episodes: no {PARAMETER} within its range fails the median "
                "device's SET at this protocol")
    if step is None and CONTACT in entries:
        step = contact_step(frame, card, spec)
        parameter, why = CONTACT, "the contact reads as the failed cycles"
        if step is None:
            log(f"SET-failure episodes: the failed cycles do not read as a raised {CONTACT}")
    if step is None:
        return None
    share = (measured - modelled) / (1.0 - modelled)
    return Episodes(round(float(share), 6), round(float(np.mean(runs)), 3), parameter,
                    round(float(step), 6),
                    f"fitted: {len(runs)} run(s) of failed SETs, mean {np.mean(runs):.3g} "
                    f"cycles, longest {max(runs)}; {why}")


def episode_lines(frame: pd.DataFrame, episodes: Episodes | None) -> list[str]:
    """What the record's failed SETs look like, and the episodes fitted to them."""
    runs = failure_runs(frame)
    if not runs:
        return ["failed SETs in the record: none"]
    head = (f"failed SETs in the record: {sum(runs)} in {len(runs)} run(s), mean "
            f"{np.mean(runs):.3g} cycles, longest {max(runs)}")
    if episodes is None:
        return [head + "; no episodes fitted"]
    return [head, f"SET-failure episodes: {100 * episodes.share:.2f} % of the cycles, "
            f"{episodes.length:.3g} cycles on average, {episodes.parameter} "
            f"+{episodes.step:.3g} inside"]


__all__ = ["contact_step", "episode_lines", "failing_raise", "failure_runs", "fit_episodes"]
