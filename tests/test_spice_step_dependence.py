"""Issue 37: a loop's thresholds and reads in ngspice do not depend on the step cap.

The OSDI module on a 4 ms ±2 V loop behind 5 kΩ (2 kV/s), the reads at 0.1 V after each
half cycle, in both polarities and on the fitted TUD card: R_on, R_off, V_set and V_reset
from ``tmax`` 10 µs against 0.1 µs, under ngspice's defaults, the ngspice guide's
``reltol=1e-4`` and the project's decks (``method=gear reltol=1e-4``).  No retry at a
smaller cap may hide a coarse run.

The RESET is the hard part: its end gap is read through exp(x/xt), and its runaway goes
through the circuit (rram/step_hint.py).  With the step hint bounding the SET runaway
alone, R_off moved +6.3 %, +1.5 % and +3.7 % under the three option sets; with the RESET's
bound, +0.09 %, +0.44 % and +0.38 %, the same in both polarities (measured); on the TUD
card R_LRS moves +0.62 % at ngspice's reltol 1e-3 (an xfail), within 0.5 % at 1e-4.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rram.card import default_card, load_card
from rram.engine.stimulus import dc_loops
from rram.metrics import loop_metrics
from rram.spice import SpiceOptions, simulate_spice

TUD_CARD = Path(__file__).resolve().parents[1] / "fitting/results/tud_H16248L_M12.card.json"
METRICS = ("v_set_V", "v_reset_V", "r_lrs_ohm", "r_hrs_ohm")
OPTION_SETS = {
    "ngspice defaults": {"method": "trap", "reltol": 1e-3},
    "the guide's reltol=1e-4": {"method": "trap", "reltol": 1e-4},
    "the project's decks": {"method": "gear", "reltol": 1e-4},
}


#: name -> (card, loop, series resistance (Ω)): the default card in both polarities (the
#: hint's derivatives by node potentials take the sign of the polarity) and the fitted
#: TUD card (polarity −1) on a −2.5/+3 V loop behind 2 kΩ
CELLS = {
    "default card": (lambda: default_card(), (2.0, -2.0), 5e3),
    "default card, polarity -1": (lambda: default_card().replace(polarity=-1.0), (-2.0, 2.0),
                                  5e3),
    "fitted TUD card": (lambda: load_card(TUD_CARD), (-2.5, 3.0), 2e3),
}


def _loop(options: dict, tmax: float, cell: str) -> dict[str, float]:
    card, (v_set, v_reset), rs = CELLS[cell]
    run = simulate_spice("resistor", dc_loops(v_set, v_reset, 2e3, reads=True), cards=[card()],
                         circuit_params={"rs": rs}, model="osdi",
                         options=SpiceOptions(tmax=tmax, spice_options=options, retry_scales=(),
                                              retry_options=(), runaway=False))
    run.raise_on_failure()
    row = loop_metrics(run).iloc[0]
    return {k: float(row[k]) for k in METRICS}


#: (option set, cell) pairs that miss the 0.5 %
_COARSE = {("ngspice defaults", "fitted TUD card"): (
    "issue 37, open: at ngspice's reltol 1e-3 the TUD card's R_LRS reads +0.62 % at a "
    "10 us cap and +0.89 % at 3 us against 1355.73 Ohm at <= 0.3 us (where it has "
    "converged to 1e-5); the growth after the SET is integrated coarsely, and reltol "
    "1e-4 holds it")}


def _cases() -> list:
    return [pytest.param(options, cell, id=f"{name}-{cell}",
                         marks=[pytest.mark.xfail(strict=True, reason=_COARSE[name, cell])]
                         if (name, cell) in _COARSE else [])
            for cell in CELLS for name, options in OPTION_SETS.items()]


@pytest.mark.parametrize(("options", "cell"), _cases())
def test_the_loop_moves_half_a_percent_at_most_from_a_10_us_to_a_0_1_us_step_cap(options, cell):
    coarse, fine = _loop(options, 1e-5, cell), _loop(options, 1e-7, cell)
    moved = {k: coarse[k] / fine[k] - 1.0 for k in METRICS}
    assert all(abs(m) <= 5e-3 for m in moved.values()), moved
