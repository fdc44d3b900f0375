"""Variation fitting: a distribution simulated from a known spec is reproduced."""

from __future__ import annotations

import pandas as pd
import pytest

from rram.card import default_card
from rram.fit.variation import fit_variation, target_of
from rram.mc import MonteCarlo, run_devices
from rram.variation import Variation, VariationSpec

TRUE_SPEC = VariationSpec((
    Variation("fw", "c2c", "lognormal", 0.15, shift=0.1),
    Variation("deh", "c2c", "normal", 0.05),
    Variation("dea", "c2c", "normal", 0.04, shift=-0.02),
    Variation("dei", "c2c", "normal", 0.05),
))


def as_distribution(frame: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for state, col in (("LRS", "r_lrs_ohm"), ("HRS", "r_hrs_ohm")):
        rows.append(pd.DataFrame({"device": frame["device"].astype(str),
                                  "cycle": frame["cycle"], "state": state,
                                  "resistance_ohm": frame[col],
                                  "v_set_V": frame["v_set_V"],
                                  "v_reset_V": frame["v_reset_V"]}))
    return pd.concat(rows, ignore_index=True)


@pytest.mark.slow
def test_a_simulated_distribution_is_reproduced_within_ten_percent():
    measured = run_devices(MonteCarlo(spec=TRUE_SPEC, devices=150, cycles=2, seed=11),
                           range(150))
    target = target_of(as_distribution(measured[measured["converged"]]))
    fit = fit_variation(target, default_card(), devices=100, cycles=2, seed=1, rounds=6,
                        polish_nfev=0)
    for m in target.metrics:
        d, s = fit.data_stats[m], fit.model_stats[m]
        if m.startswith("r_"):
            assert abs(s["median"] / d["median"] - 1) <= 0.10, m
        else:
            assert abs(s["median"] - d["median"]) <= 0.10 * d["spread"], m
        assert abs(s["spread"] / d["spread"] - 1) <= 0.10, (m, s["spread"], d["spread"])
    # the whole distributions, not only two moments, agree
    assert max(fit.ks().values()) < 0.2
