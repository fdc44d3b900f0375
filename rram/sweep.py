"""DC loop sweeps with a choice of engine: the API behind ``rram sweep``.

A long sweep is simulated in batches of :data:`BATCH_CYCLES` cycles, so its memory stays
bounded whatever ``cycles`` is: each batch starts in the state the last one ended in
(:func:`~rram.card.formed_card` of its final gap and width, at 0 V and the ambient
temperature, where a cycle ends), its cycles and times continuing from it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd

from .card import Card, default_card, formed_card
from .engine.run import COLUMNS, SimResult
from .experiment import DCLoop, check_engine, simulate_with

#: Cycles simulated at once (a cycle of the default loop is 4 000 samples).
BATCH_CYCLES = 500
#: Bytes of a written row (a default loop's CSV: 129 B a row).
CSV_ROW_BYTES = 140


def run_sweep(loop: DCLoop, card: Card | None = None, engine: str = "python",
              cycles: int = 1, temperature: float | None = None) -> SimResult:
    """Simulate ``cycles`` of ``loop`` on ``card`` (at ``temperature``, K, if given:
    the card's ``tamb``) at once; raises :class:`~rram.errors.InputError` on a bad
    input and :class:`~rram.errors.SimulationError` if the engine cannot complete it."""
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


def sweep_rows(loop: DCLoop, cycles: int) -> int:
    """Rows a sweep of ``cycles`` cycles writes (its samples)."""
    return cycles * (len(loop.stimulus(1).sample_times) - 1) + 1


def sweep_batches(loop: DCLoop, card: Card | None = None, engine: str = "python",
                  cycles: int = 1, temperature: float | None = None,
                  batch: int = BATCH_CYCLES
                  ) -> Iterator[tuple[pd.DataFrame, pd.DataFrame | None]]:
    """The sweep of :func:`run_sweep` in batches of ``batch`` cycles (see the module
    docstring): per batch, its samples (:func:`sweep_frame`) and, for the compliance
    circuit, its cycles' figures (:func:`rram.metrics.loop_metrics`), numbered and
    timed as one sweep."""
    from .metrics import loop_metrics

    card = card or default_card()
    if temperature is not None:
        card = card.replace(tamb=temperature)
    done, t_end = 0, 0.0
    while done < cycles:
        n = min(batch, cycles - done)
        res = run_sweep(loop, card, engine, n)
        frame = sweep_frame(res)
        last = frame.iloc[-1]
        if done + n < cycles:  # the final sample opens the next batch's first cycle
            frame = frame.iloc[:-1]
        frame = frame.assign(cycle=frame["cycle"] + done, time_s=frame["time_s"] + t_end)
        metrics = loop_metrics(res) if res.circuit == "compliance" else None
        if metrics is not None:
            metrics = metrics.assign(cycle=metrics["cycle"] + done)
        yield frame, metrics
        card = formed_card(card, last["gap_nm"] * 1e-9, last["width_nm"] * 1e-9)
        done, t_end = done + n, t_end + float(last["time_s"])
