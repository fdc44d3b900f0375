"""The cells of an array: their parameters, their frozen states, their condensed I(V).

Cell (i, j) is device ``i·cols + j``: its card is the spec's card with that device's
device-to-device draw (:func:`rram.mc.draws.draw_d2d`, the same streams a Monte Carlo
uses), and its state (gap, width in nm) is given per cell or, by default, the card's
``x0``/``w0``.  A cell at a state is the card with ``x0``/``w0`` at that state and its
state nodes held, which is also how the ngspice export renders it (a frozen cell).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..card import Card, CardBatch, carried_states, default_card, formed_state
from ..circuits import CIRCUIT_PARAMETERS, build_circuit
from ..constants import NM, STATE_OVERSHOOT_M
from ..engine.static import TIP_GUESSES, solve_rounds
from ..errors import ConvergenceError, InputError
from ..status import Status
from .spec import ArraySpec


def cell_parameters(spec: ArraySpec) -> CardBatch:
    """Every cell's card (cell (i, j) is row i·cols + j), its D2D draws applied and the
    formed state within its bounds (:func:`rram.card.formed_state`, as the Monte Carlo
    keeps it)."""
    cards = CardBatch.of(spec.card, spec.n_cells)
    if spec.variation is not None and spec.variation.of_kind("d2d"):
        from ..mc.draws import draw_d2d

        drawn = draw_d2d(spec.variation, spec.card.values, spec.seed, range(spec.n_cells))
        gap, width = drawn.pop("x0", cards["x0"]), drawn.pop("w0", cards["w0"])
        cards = formed_state(cards, gap, width, **drawn)
    return cards


#: The spawn key's tag of an array read's traps (rram.mc.draws keys have three
#: elements, this one two: (read, ARRAY_READ), so no stream is shared).
ARRAY_READ = 7


def with_read_noise(spec: ArraySpec, cards: CardBatch, states: States | None,
                    read: int) -> CardBatch:
    """``cards`` at the ``read``-th of a sequence of reads far apart: each cell's CF path
    scaled by what its traps block at that read (:mod:`rram.noise`), drawn from the
    array's seed and the read's index alone.  Cards without traps (``ntrap`` = 0, the
    default) are returned as they are."""
    from ..noise import read_factors, trap_blocked, trap_count_mean, with_trap_factor

    if isinstance(read, bool) or not isinstance(read, (int, np.integer)) or read < 0:
        raise InputError(f"read index must be a non-negative integer, got {read!r}")
    if not np.any(cards["ntrap"] > 0):
        return cards
    placed = with_states(spec, cards, states)
    blocked = trap_blocked(placed, placed["x0"] / NM, placed["w0"] / NM)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(
        int(spec.seed), spawn_key=(int(read), ARRAY_READ))))
    return with_trap_factor(cards, read_factors(trap_count_mean(cards), blocked, rng))


@dataclass(frozen=True)
class States:
    """Frozen state of every cell: gap and CF width (nm), arrays of shape (rows, cols).

    ``carried``: the optional blocks' states of each cell, by their instance parameter
    (``u0`` the relaxing disorder in m, ``wear0`` the wear: :func:`rram.card.carried_states`),
    arrays of the same shape; a state not given is the card's."""

    gap_nm: np.ndarray
    width_nm: np.ndarray
    carried: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        arrays = {"gap_nm": self.gap_nm, "width_nm": self.width_nm,
                  **{f"carried {k}": v for k, v in self.carried.items()}}
        frozen = {}
        for what, value in arrays.items():
            a = np.array(value, dtype=float)
            if a.ndim != 2 or not np.all(np.isfinite(a)):
                raise InputError(f"cell states {what} must be a finite 2-D array, got shape "
                                 f"{a.shape}")
            if a.shape != np.shape(self.gap_nm):
                raise InputError(f"cell states: {what} {a.shape} and gap_nm "
                                 f"{np.shape(self.gap_nm)} differ in shape")
            a.setflags(write=False)
            frozen[what] = a
        object.__setattr__(self, "gap_nm", frozen["gap_nm"])
        object.__setattr__(self, "width_nm", frozen["width_nm"])
        object.__setattr__(self, "carried", {k: frozen[f"carried {k}"] for k in self.carried})


def cycled_states(pattern: np.ndarray, endurance, cycle: int) -> States:
    """States of a data pattern in cells cycled ``cycle`` times: an endurance run
    (:class:`rram.mc.endurance.EnduranceResult`) of one device per cell, row-major, each
    cell in the LRS or HRS its device's last simulated cycle left (a worn array's window,
    rram.equations.wear)."""
    p = np.asarray(pattern, bool)
    if endurance.study.devices != p.size:
        raise InputError(f"cycled states: the endurance run has {endurance.study.devices} "
                         f"devices, the pattern {p.size} cells (one device per cell)")
    s = endurance.states_at(cycle)
    shape = p.shape
    gap = np.where(p, s["gap_lrs_nm"].to_numpy().reshape(shape),
                   s["gap_hrs_nm"].to_numpy().reshape(shape))
    width = np.where(p, s["width_lrs_nm"].to_numpy().reshape(shape),
                     s["width_hrs_nm"].to_numpy().reshape(shape))
    return States(gap, width)


def pattern_states(pattern: np.ndarray, card: Card | None = None) -> States:
    """States of a data pattern: True cells in the LRS of ``card`` (default: the built-in
    card), the others in its HRS: the programmed states an instance's ``state`` = 1 or 2
    starts in (:mod:`rram.states`; the default card's read 4.2 kΩ and 237 kΩ at 0.1 V)."""
    from ..states import programmed

    card = card if card is not None else default_card()
    (lrs_gap, lrs_width), (hrs_gap, hrs_width) = (programmed(card, w) for w in ("lrs", "hrs"))
    p = np.asarray(pattern, bool)
    return States(np.where(p, lrs_gap, hrs_gap), np.where(p, lrs_width, hrs_width))


PATTERNS = ("all-lrs", "all-hrs", "checkerboard", "random")


def named_pattern(name: str, shape: tuple[int, int], seed: int = 0) -> np.ndarray:
    """A data pattern (True = LRS): ``all-lrs``, ``all-hrs``, ``checkerboard`` or
    ``random`` (half LRS, drawn from ``seed``)."""
    if name == "all-lrs":
        return np.ones(shape, bool)
    if name == "all-hrs":
        return np.zeros(shape, bool)
    if name == "checkerboard":
        return (np.add.outer(np.arange(shape[0]), np.arange(shape[1])) % 2) == 0
    if name == "random":
        return np.random.default_rng(seed).random(shape) < 0.5
    raise InputError(f"data pattern {name!r}: valid are {', '.join(PATTERNS)}")


#: How far (nm) a state may lie beyond its bound and still be taken, at the bound
#: (:data:`rram.constants.STATE_OVERSHOOT_M`).  Farther out is an error.
SNAP_NM = STATE_OVERSHOOT_M / NM


def with_states(spec: ArraySpec, cards: CardBatch, states: States | None) -> CardBatch:
    """``cards`` with each cell's ``x0``/``w0`` at its state, checked against its range:
    0 ≤ gap ≤ l0 and wmin ≤ width ≤ wcf of that cell's card; a state within
    :data:`SNAP_NM` beyond a bound is put on it, so the states a simulation produced are
    always valid instance values."""
    if states is None:
        return cards
    if states.gap_nm.shape != spec.shape:
        raise InputError(f"cell states have shape {states.gap_nm.shape}; the array is "
                         f"{spec.rows} x {spec.cols}")
    gap = states.gap_nm.reshape(-1) * NM
    width = states.width_nm.reshape(-1) * NM
    checks = (("gap", gap, np.zeros_like(gap), cards["l0"]),
              ("width", width, cards["wmin"], cards["wcf"]))
    snapped = []
    for what, v, lo, hi in checks:
        bad = np.flatnonzero((v < lo - SNAP_NM * NM) | (v > hi + SNAP_NM * NM))
        if bad.size:
            k = int(bad[0])
            raise InputError(
                f"cell ({k // spec.cols}, {k % spec.cols}) {what} {v[k] / NM:g} nm is out "
                f"of range: valid is [{lo[k] / NM:g}, {hi[k] / NM:g}] nm (to {SNAP_NM:g} nm)")
        snapped.append(np.clip(v, lo, hi))
    carried = set(carried_states(cards.model))
    unknown = sorted(set(states.carried) - carried)
    if unknown:
        raise InputError(f"cell states carry {', '.join(unknown)}, which the card's model "
                         f"({cards.model.name}) has no state for (it carries: "
                         f"{', '.join(sorted(carried)) or 'none'})")
    extra = {k: v.reshape(-1) for k, v in states.carried.items()}
    return cards.with_columns(x0=snapped[0], w0=snapped[1], **extra)


#: Series resistance of the condensing kernel's bit line (Ω): any value works (the
#: bit line sits at te, so it carries nothing); 1 MΩ keeps its 1/rs out of dI/dV.
_RS = 1e6
#: Below this many cells the condensation runs on one thread: starting the threads costs
#: more than the work (16 cells: 1.2 ms on 2 threads, 0.2 ms on one; 256: 7 against
#: 1.9 ms; about even at 576, on this project's loaded 2-core machine).
SERIAL_BELOW = 512


class CellBank:
    """All RRAM cells of an array, condensed: :meth:`evaluate` gives every cell's
    current and conductance at given te−be voltages, warm-started from the last call."""

    def __init__(self, cards: CardBatch) -> None:
        from ..engine.jit import load_compiled
        from ..engine.run import newton_limits

        self._k = load_compiled("rram.array._condense", cards.model)
        #: the condensing kernel's layout (the resistor circuit around the cells' model)
        self.layout = lay = build_circuit("resistor", cards.model).layout
        circuit = {p.name: p.default for p in CIRCUIT_PARAMETERS}
        circuit["rs"] = _RS
        tail = np.array([circuit[p.name] for p in CIRCUIT_PARAMETERS])
        self.P = np.ascontiguousarray(np.hstack([cards.values,
                                                 np.tile(tail, (len(cards), 1))]))
        self.n = len(cards)
        self.Y = np.zeros((self.n, len(lay.unknowns)))
        # the bit line sits at te; the states sit at x0, w0: their changes are zero, held
        self.frozen = np.zeros(len(lay.unknowns), bool)
        self.frozen[[lay.unknown("mid"), *lay.held()]] = True
        self.atol = lay.per_unit({"V": 1e-12, "nm": 1e-6, "K": 1e-6, "1": 1e-9})
        self.lim = newton_limits(lay)
        self._fresh = True

    def set_states(self, gap_m: np.ndarray, width_m: np.ndarray) -> None:
        """Every cell's frozen state (its ``x0``/``w0``, m), in place."""
        self.P[:, self.layout.column("x0")] = gap_m
        self.P[:, self.layout.column("w0")] = width_m

    def evaluate(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(current into te (A), dI/dV (S)) of every cell at te−be voltage ``v`` (V)."""
        if self.n >= SERIAL_BELOW:
            return self._evaluate(v)
        import numba

        threads = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            return self._evaluate(v)
        finally:
            numba.set_num_threads(threads)

    def _evaluate(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v = np.ascontiguousarray(v, dtype=float)
        current, cond = np.empty(self.n), np.empty(self.n)
        status = np.full(self.n, int(Status.DC_FAILED), np.int64)
        guesses = TIP_GUESSES if self._fresh else (None, *TIP_GUESSES)

        def attempt(todo: np.ndarray, tip: float | None) -> np.ndarray:
            Y = self.Y[todo].copy()
            if tip is not None:
                # ti at te, bi at be (ground in the kernel's frame), the tip in between
                at = self.layout.unknown
                Y[:, at("ti")], Y[:, at("bi")] = v[todo], 0.0
                Y[:, at("tip")], Y[:, at("dtemp")] = tip * v[todo], 0.0
            st = np.zeros(todo.size, np.int64)
            I, G = np.empty(todo.size), np.empty(todo.size)
            self._k.condense(self.P[todo] if todo.size < self.n else self.P, v[todo], Y,
                             self.frozen, self.atol, 1e-10, self.lim, _RS, I, G, st)
            ok = st == Status.OK
            self.Y[todo[ok]] = Y[ok]
            current[todo[ok]], cond[todo[ok]], status[todo[ok]] = I[ok], G[ok], Status.OK
            return ok

        todo = solve_rounds(self.n, attempt, guesses)
        if todo.size:
            d = int(todo[0])
            raise ConvergenceError(f"the static solve of cell {d} at {v[d]:g} V: "
                                   f"{Status(int(status[d])).text}", analysis="op", device=d)
        self._fresh = False
        return current, cond
