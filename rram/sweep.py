"""DC loop sweeps with a choice of engine: the API behind ``rram sweep``."""

from __future__ import annotations

import pandas as pd

from .card import Card, default_card
from .engine.run import COLUMNS, SimResult
from .experiment import DCLoop, check_engine, simulate_with


def run_sweep(loop: DCLoop, card: Card | None = None, engine: str = "python",
              cycles: int = 1, temperature: float | None = None) -> SimResult:
    """Simulate ``cycles`` of ``loop`` on ``card`` (at ``temperature``, K, if given:
    the card's ``tamb``); raises :class:`~rram.errors.InputError` on a bad input and
    :class:`~rram.errors.SimulationError` if the engine cannot complete it."""
    check_engine(engine)
    card = card or default_card()
    if temperature is not None:
        card = card.replace(tamb=temperature)
    from .spice import SpiceOptions

    # ngspice resolves the loop at v_step volts, as the Python engine's output grid does
    res = simulate_with(engine, loop.circuit, loop.stimulus(cycles), card,
                        loop.circuit_params,
                        spice_options=SpiceOptions(tmax=loop.v_step / loop.rate))
    res.raise_on_failure()
    return res


def sweep_frame(res: SimResult) -> pd.DataFrame:
    return res.frame()[list(COLUMNS)]
