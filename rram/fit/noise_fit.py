"""Calibrate the read noise (``ntrap``, ``rtrap``) on a read record.

**The cells' states.**  A record gives each cell's resistance, not its gap and width.
:func:`states_on_path` puts a cell on the card's programming path: the LRS family (gap
closed, CF width set by the compliance) from the cell's widest CF down to the HRS width
``whrs``, then the HRS family (that width kept, the gap set by the RESET voltage) up to
an open layer.  A trap's blocked fraction Δ follows the width (rram/equations/noise.py):
it grows as 1/w² along the LRS family and stays put along the HRS family, so the
read-to-read spread grows in proportion to R in the LRS and flattens in the HRS.

**The spread of a record.**  Reads far apart see independent occupancies; reads close
together see the slow traps frozen.  Over a cell's own read times t₁…t_N the expected
sample variance of ln R is

    σ² = (s·Δ)²·ntrap/4 · J,  J = (1/ln 10)·∫ (1 − ρ̄(τ)) d ln τ  over [taumin, taumax],

ρ̄(τ) the mean of e^(−|tᵢ − tⱼ|/τ) over the record's pairs of reads (a trap much slower
than the record contributes nothing, a fast one its full Δ²/4) and s the CF path's
share of the cell's resistance (:class:`rram.noise.CellNoise`).

**The fit.**  Least squares of ln σ_model − ln σ_data over the cells, in ln ntrap and ln
rtrap.  Along the LRS family σ ∝ rtrap²·√ntrap, so the two separate only where a trap's
reach approaches the CF's width (Δ saturating): where the record does not show that
(rtrap's relative standard error beyond :data:`IDENTIFIED`), rtrap is held at the card's value and
ntrap alone is fitted, and the report says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..card import Card, CardBatch
from ..errors import InputError
from ..noise import cell_noise, trap_blocked
from .reads import ReadRecord

#: Standard error of ln rtrap beyond which the record does not identify it: ntrap
#: follows rtrap^-4 where a trap blocks a small part of the CF, so 20 % in rtrap is a
#: factor 2 in ntrap.
IDENTIFIED = 0.2
#: An ln-σ of R below this is no spread (a cell whose traps sat still; a part per
#: million is below any instrument's resolution).
STILL = 1e-6
#: Points per decade of the trap times' integral.
TAU_POINTS_PER_DECADE = 20
#: Bisection steps of the state search (R to 2^-50 of its range, in ln R).
BISECTION_STEPS = 50


def _bisect(read, lo: np.ndarray, hi: np.ndarray, target: np.ndarray,
            increasing: bool) -> np.ndarray:
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        above = read(mid) > target
        if increasing:
            hi, lo = np.where(above, mid, hi), np.where(above, lo, mid)
        else:
            lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    return 0.5 * (lo + hi)


def states_on_path(card: Card, resistance: np.ndarray, v_read: float
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(gap, width) in nm of cells reading ``resistance`` (Ω) at ``v_read``, on the
    card's programming path (module docstring).  Refuses a resistance beyond the path."""
    from ..engine.static import read_resistance

    r = np.asarray(resistance, float)
    n = r.size
    batch = CardBatch.of(card, n)
    nm = 1e-9
    w_hrs, w_max, l0 = card["whrs"] / nm, card["wcf"] / nm, card["l0"] / nm

    def at(gap, width):
        return read_resistance(batch, np.broadcast_to(gap, (n,)), np.broadcast_to(
            width, (n,)), v_read)

    r_min, r_knee, r_max = (float(at(g, w)[0]) for g, w in ((0.0, w_max), (0.0, w_hrs),
                                                            (l0, w_hrs)))
    out = np.flatnonzero((r < r_min) | (r > r_max))
    if out.size:
        k = int(out[0])
        raise InputError(f"cell read {r[k]:.4g} Ω at {v_read:g} V: the card's cells read "
                         f"{r_min:.4g}-{r_max:.4g} Ω there (a CF filling its cell to an "
                         "open layer); a card fitted to this device places its cells")
    lrs = r <= r_knee
    width = np.where(lrs, _bisect(lambda w: at(0.0, w), np.full(n, w_hrs), np.full(n, w_max),
                                  r, increasing=False), w_hrs)
    gap = np.where(lrs, 0.0, _bisect(lambda g: at(g, w_hrs), np.zeros(n), np.full(n, l0),
                                     r, increasing=True))
    return gap, width


def _lags(times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lag, number of pairs at it) of a cell's reads: exact for evenly spaced reads,
    else the pairs' lags in bins of 1/20 decade."""
    n = times.size
    step = np.diff(times)
    if np.allclose(step, step[0], rtol=1e-9):
        k = np.arange(1, n)
        return k * step[0], (n - k).astype(float)
    d = np.abs(np.subtract.outer(times, times))[np.triu_indices(n, 1)]
    edges = np.logspace(np.log10(d.min()), np.log10(d.max()) + 1e-9,
                        int(20 * np.log10(d.max() / d.min())) + 2)
    count, _ = np.histogram(d, edges)
    return np.sqrt(edges[:-1] * edges[1:])[count > 0], count[count > 0].astype(float)


def trap_decades(times: np.ndarray, taumin: float, taumax: float) -> float:
    """J of the module docstring: the decades of trap times a record of reads at
    ``times`` sees in full (0 for one read, log10(taumax/taumin) for reads far apart)."""
    lag, count = _lags(np.asarray(times, float))
    decades = math.log10(taumax / taumin)
    tau = np.logspace(math.log10(taumin), math.log10(taumax),
                      max(int(TAU_POINTS_PER_DECADE * decades), 2) + 1)
    rho = (count[:, None] * np.exp(-lag[:, None] / tau[None, :])).sum(0) / count.sum()
    return float(np.trapezoid(1.0 - rho, np.log10(tau)))


@dataclass(frozen=True)
class CellSpreads:
    """Per cell of a record: its label, median resistance (Ω), measured ln-σ of R, the
    decades of trap times its reads see (:func:`trap_decades`), its state on the path
    (gap, width, nm) and the CF path's share of its resistance."""

    cells: list[str]
    resistance: np.ndarray
    measured: np.ndarray
    decades: np.ndarray
    gap: np.ndarray
    width: np.ndarray
    share: np.ndarray

    def model(self, card: Card) -> np.ndarray:
        """The card's ln-σ of R for each cell's record."""
        blocked = trap_blocked(CardBatch.of(card, len(self.cells)), self.gap, self.width)
        return self.share * blocked * np.sqrt(card["ntrap"] * self.decades / 4.0)


def cell_spreads(record: ReadRecord, card: Card) -> CellSpreads:
    """What :func:`fit_noise` compares, from ``record`` on ``card``."""
    cells = record.cells
    reads = [record.of(c) for c in cells]  # (times, resistances) of each cell
    r = np.array([np.median(res) for _, res in reads])
    spread = np.array([np.std(np.log(res), ddof=1) for _, res in reads])
    decades = np.array([trap_decades(times, card["taumin"], card["taumax"])
                        for times, _ in reads])
    gap, width = states_on_path(card, r, record.v_read)
    noise = cell_noise(card, gap, width, record.v_read)
    h0 = noise.transfer("traps", [1e-3])[:, 0].real
    return CellSpreads(cells, r, spread, decades, gap, width,
                       h0 * noise.path_current / noise.current)


@dataclass(frozen=True)
class NoiseFit:
    card: Card
    spreads: CellSpreads
    model: np.ndarray
    fitted: tuple[str, ...]
    held: dict[str, str]
    correlation: float

    @property
    def moving(self) -> np.ndarray:
        """The cells whose reads spread (:data:`STILL`)."""
        return self.spreads.measured > STILL

    @property
    def median_ratio(self) -> float:
        """Median over the cells that spread of the model's spread over the measured."""
        m = self.moving
        return float(np.median(self.model[m] / self.spreads.measured[m]))

    def slopes(self) -> tuple[float, float]:
        """Log-log slopes of the spread against R, over the cells that spread: (data,
        model)."""
        m = self.moving
        x = np.log(self.spreads.resistance[m])
        return (float(np.polyfit(x, np.log(self.spreads.measured[m]), 1)[0]),
                float(np.polyfit(x, np.log(self.model[m]), 1)[0]))

    def figures(self) -> dict:
        """What a card's metadata keeps of the fit."""
        data, model = self.slopes()
        s = self.spreads
        return {"ntrap": self.card["ntrap"], "rtrap": self.card["rtrap"],
                "fitted": list(self.fitted), "held": dict(self.held),
                "median_ratio": self.median_ratio, "slope_data": data, "slope_model": model,
                "cells": [{"cell": c, "resistance_ohm": float(r), "spread_data": float(d),
                           "spread_model": float(m)} for c, r, d, m in
                          zip(s.cells, s.resistance, s.measured, self.model, strict=True)]}

    def plot(self, path, title: str):
        """The read-to-read spread of each cell against its resistance: data (dots) and
        the model at the same cells (line)."""
        from ..plots import _save, plt

        s = self.spreads
        order = np.argsort(s.resistance)
        fig, ax = plt.subplots(figsize=(6, 4.2))
        ax.loglog(s.resistance[self.moving], s.measured[self.moving], "o", ms=4,
                  label="data")
        ax.loglog(s.resistance[order], self.model[order], "-", label="model")
        ax.set(xlabel="resistance (Ω)", ylabel="read-to-read spread, σ of ln R",
               title=title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        return _save(fig, path)

    def report(self) -> str:
        s = self.spreads
        lines = [f"read noise of {len(s.cells)} cells: ntrap {self.card['ntrap']:.4g} per "
                 f"decade, rtrap {self.card['rtrap'] * 1e9:.4g} nm"
                 f" (fitted: {', '.join(self.fitted)})"]
        lines += [f"  {k} held: {why}" for k, why in self.held.items()]
        data, model = self.slopes()
        lines.append(f"  spread model/data: median {self.median_ratio:.3f}; slope of ln-σ "
                     f"against ln R: data {data:.3f}, model {model:.3f}")
        lines.append(f"  {'cell':>8s} {'R (Ω)':>10s} {'data σ':>8s} {'model σ':>8s} "
                     f"{'gap nm':>7s} {'width nm':>8s}")
        for k in np.argsort(s.resistance):
            lines.append(f"  {s.cells[k]:>8s} {s.resistance[k]:10.4g} {s.measured[k]:8.4f} "
                         f"{self.model[k]:8.4f} {s.gap[k]:7.3f} {s.width[k]:8.3f}")
        return "\n".join(lines)


def _scale(spreads: CellSpreads, card: Card) -> float:
    """The ntrap that matches the record's summed variance on ``card``'s rtrap: Σ s² /
    Σ σ²(ntrap = 1), unbiased where each cell's expected sample variance is the
    model's (a least-squares fit of ln σ is not: ln of a sample's spread falls short
    of the spread's ln, most for a cell whose slow traps froze in its record)."""
    unit = spreads.model(card.replace(ntrap=1.0)) ** 2
    return float(np.sum(spreads.measured ** 2) / np.sum(unit))


def fit_noise(record: ReadRecord, card: Card, fit_rtrap: bool = True,
              log: Callable[[str], None] | None = None) -> NoiseFit:
    """Fit ``ntrap`` and (where the record separates it) ``rtrap`` of ``card`` to the
    read-to-read spreads of ``record`` (module docstring): ntrap by :func:`_scale`,
    rtrap by the shape of the spread against R (least squares in ln σ, ntrap scaled
    at each trial)."""
    from scipy.optimize import minimize_scalar

    spreads = cell_spreads(record, card)
    if log:
        log(f"fitting {record.summary()}")
    moving = spreads.measured > STILL
    if not np.any(moving):
        raise InputError("every cell reads the same resistance every time: no spread to "
                         "fit (a record at the instrument's resolution?)")
    # a cell whose traps all sat still through its record has no spread: it counts in
    # the summed variance, not in the shape (its ln is -inf)
    rtrap = card.model.parameter("rtrap")
    ntrap = card.model.parameter("ntrap")

    def scaled(ln_r: float) -> Card:
        trial = card.replace(rtrap=math.exp(ln_r))
        return trial.replace(ntrap=min(_scale(spreads, trial), ntrap.upper))

    def shape(ln_r: float) -> float:
        return float(np.sum((np.log(spreads.model(scaled(ln_r))[moving]) -
                             np.log(spreads.measured[moving])) ** 2))

    held: dict[str, str] = {}
    correlation = float("nan")
    if fit_rtrap:
        bounds = (math.log(rtrap.lower), math.log(rtrap.upper))
        best = minimize_scalar(shape, bounds=bounds, method="bounded",
                               options={"xatol": 1e-4})
        fitted = scaled(float(best.x))
        correlation, error = _uncertainty(spreads, fitted, moving)
        if error <= IDENTIFIED:
            return NoiseFit(fitted, spreads, spreads.model(fitted), ("ntrap", "rtrap"), held,
                            correlation)
        held["rtrap"] = (f"the record does not identify it (relative standard error "
                         f"{100 * error:.0f} % > {100 * IDENTIFIED:.0f} %, correlation with "
                         f"ntrap {correlation:+.3f}: where a trap blocks a small part of the "
                         "CF only rtrap^2*sqrt(ntrap) is seen); kept at the card's value")
    else:
        held["rtrap"] = "kept at the card's value (asked)"
    fitted = scaled(math.log(card["rtrap"]))
    return NoiseFit(fitted, spreads, spreads.model(fitted), ("ntrap",), held, correlation)


def _uncertainty(spreads: CellSpreads, card: Card, cells: np.ndarray,
                 step: float = 1e-3) -> tuple[float, float]:
    """(correlation of ln ntrap and ln rtrap, standard error of ln rtrap) of a
    least-squares fit of ln σ at ``card`` over ``cells`` (a mask)."""
    base = np.log(spreads.model(card)[cells])
    cols = []
    for name in ("ntrap", "rtrap"):
        sign = 1.0 if card[name] * math.exp(step) <= card.model.parameter(name).upper \
            else -1.0
        moved = card.replace(**{name: card[name] * math.exp(sign * step)})
        cols.append((np.log(spreads.model(moved)[cells]) - base) / (sign * step))
    jac = np.array(cols).T
    dof = max(int(cells.sum()) - 2, 1)
    residual = np.sum((base - np.log(spreads.measured[cells])) ** 2) / dof
    cov = np.linalg.pinv(jac.T @ jac) * residual
    return (float(cov[0, 1] / math.sqrt(cov[0, 0] * cov[1, 1])),
            float(math.sqrt(cov[1, 1])))


def synthetic_reads(card, resistances: Sequence[float], reads: int, interval: float,
                    v_read: float = 0.1, seed: int = 0) -> ReadRecord:
    """Reads of cells at ``resistances`` (Ω, their states on the card's programming path,
    :func:`states_on_path`) with the card's traps: each cell's traps
    drawn from ``(seed, cell)``, their occupancies at every read, each read solved
    exactly (:func:`rram.noise.with_trap_factor`)."""
    from ..engine.static import read_resistance
    from ..noise import draw_traps, occupancy, trap_factor, with_trap_factor

    gap, width = states_on_path(card, np.asarray(resistances, float), v_read)
    blocked = trap_blocked(CardBatch.of(card, len(gap)), gap, width)
    times = np.arange(int(reads)) * float(interval)
    factors = []
    for c in range(len(gap)):
        rng = np.random.default_rng([int(seed), c])
        traps = draw_traps(card, float(blocked[c]), rng)
        factors.append(trap_factor(traps, occupancy(traps, times, rng)))
    factor = np.concatenate(factors)
    batch = CardBatch.of(card, factor.size)
    r = read_resistance(with_trap_factor(batch, factor), np.repeat(gap, times.size),
                        np.repeat(width, times.size), v_read)
    labels = np.repeat([str(c + 1) for c in range(len(gap))], times.size)
    return ReadRecord(labels, np.tile(times, len(gap)), r, v_read, "synthetic")


__all__ = ["IDENTIFIED", "STILL", "CellSpreads", "NoiseFit", "cell_spreads", "fit_noise",
           "states_on_path", "synthetic_reads", "trap_decades"]
