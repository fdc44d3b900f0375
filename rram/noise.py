"""Read noise of a cell: its density at an operating point, and its traps in time.

The sources are the model's (:mod:`rram.equations.noise`: thermal noise of the CF body
and the contacts, the 1/f of the traps at the CF); this module carries them to the
cell's terminals.

**Density.**  :func:`cell_noise` solves the cell at a frozen state and a bias (the static
solve of :mod:`rram.engine.static`), linearises its branches there, by the symbolic
derivatives of the expressions every rendering prints, and carries each source to the
top electrode through the cell's small-signal network (contacts, CF body, gap, leakage,
parasitic capacitance and the electro-thermal feedback; the states held, as in a SPICE
``.noise`` analysis).  :meth:`CellNoise.psd` is the short-circuit current density at
``te`` (A²/Hz), Σ_k |H_k(f)|²·S_k(f); :meth:`CellNoise.admittance` the cell's
small-signal admittance, so a density can be carried into any circuit around it.  It
equals ngspice's ``.noise`` of the Verilog-A module (tests/test_noise.py).

**Time.**  :func:`draw_traps` draws one cell's traps (a Poisson number, ``ntrap`` per
decade of τ, log-uniform over [taumin, taumax]); :func:`occupancy` samples their states
at any times, exactly: a symmetric telegraph keeps its state over Δt with probability
(1 + e^(−Δt/τ))/2.  :func:`trap_factor` turns occupancies into the conductance factor
of the CF path, and :meth:`CellNoise.read_current` into the read current, so a
sequence of reads carries the telegraph levels a small cell shows and, summed over
many traps, the 1/f density of :meth:`CellNoise.psd`.  Randomness comes only from the
generator passed in (:func:`rram.mc.draws.noise_stream` gives a device's own stream).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .card import Card, CardBatch
from .errors import InputError
from .events import OPTIONAL_END_COLUMNS
from .expr import Expr, diff, walk
from .model import GROUND, Model, node_symbol
from .printers.numpy_printer import evaluate_arrays

#: The nodes a small-signal analysis solves: the electrical nodes inside the contacts
#: and the CF's temperature (the gap and width are held; te and be are the ports).
SMALL_SIGNAL = ("ti", "tip", "bi", "dtemp")
#: Circuit unknowns of the static solve that are the device's own nodes.
_DEVICE_NODES = ("ti", "tip", "bi", "dgap", "dwidth", "dtemp")


@dataclass(frozen=True)
class CellNoise:
    """The noise of cells at their operating points (one entry per cell).

    ``current``: the cell's current into te; ``names``, ``powers``, ``exponents``:
    the model's noise sources, each with its density at 1 Hz (A²/Hz, per cell) and its
    exponent (its transfer to te: :meth:`transfer`); ``path_current``: the current
    of the CF path, whose conductance the traps modulate; ``blocked``: the fraction of
    it one occupied trap blocks (the model's ``trap_blocked``)."""

    v_cell: np.ndarray
    current: np.ndarray
    path_current: np.ndarray
    blocked: np.ndarray
    names: tuple[str, ...]
    powers: tuple[np.ndarray, ...]
    exponents: tuple[float, ...]
    _y_dense: np.ndarray  # (cells, 2, k, k): conductance and capacitance matrices
    _injections: tuple[np.ndarray, ...]  # per source: (k,) its KCL pattern
    _port_rows: np.ndarray  # (cells, 2, k): d(current into te)/d(nodes), G and C
    _port_direct: tuple[float, ...]  # per source: its own share of the current into te
    _port_drive: np.ndarray  # (cells, 2, k): KCL sensitivity to V(te), G and C
    _port_self: np.ndarray  # (cells, 2): d(current into te)/dV(te) at fixed nodes

    def _solve(self, f: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        """Node responses (cells, freqs, k) to KCL right-hand sides (cells, k)."""
        w = 2j * np.pi * np.asarray(f, float)
        y = self._y_dense[:, None, 0] + w[None, :, None, None] * self._y_dense[:, None, 1]
        return np.linalg.solve(y, np.broadcast_to(rhs[:, None, :, None],
                                                  (*y.shape[:2], y.shape[2], 1)))[..., 0]

    def _port(self, f: np.ndarray, dv: np.ndarray) -> np.ndarray:
        w = 2j * np.pi * np.asarray(f, float)
        rows = self._port_rows[:, None, 0] + w[None, :, None] * self._port_rows[:, None, 1]
        return np.einsum("cfk,cfk->cf", rows, dv)

    def transfer(self, name: str, f) -> np.ndarray:
        """H(f) (cells, freqs): current into te per unit current of source ``name``."""
        k = self.names.index(name)
        f = np.atleast_1d(np.asarray(f, float))
        rhs = np.broadcast_to(-self._injections[k], (len(self.current), len(SMALL_SIGNAL)))
        return self._port(f, self._solve(f, rhs)) + self._port_direct[k]

    def psd(self, f, sources: Sequence[str] | None = None) -> np.ndarray:
        """Short-circuit current density at te (A²/Hz), (cells, freqs)."""
        f = np.atleast_1d(np.asarray(f, float))
        if np.any(f <= 0) or not np.all(np.isfinite(f)):
            raise InputError("noise frequencies must be positive and finite (Hz)")
        out = np.zeros((len(self.current), f.size))
        for k, name in enumerate(self.names):
            if sources is not None and name not in sources:
                continue
            h = self.transfer(name, f)
            out += np.abs(h) ** 2 * self.powers[k][:, None] / f[None, :] ** self.exponents[k]
        return out

    def admittance(self, f) -> np.ndarray:
        """dI(te)/dV(te) (S, complex), (cells, freqs), be held."""
        f = np.atleast_1d(np.asarray(f, float))
        w = 2j * np.pi * f
        drive = self._port_drive[:, None, 0] + w[None, :, None] * self._port_drive[:, None, 1]
        y = self._y_dense[:, None, 0] + w[None, :, None, None] * self._y_dense[:, None, 1]
        dv = np.linalg.solve(y, -drive[..., None])[..., 0]
        own = self._port_self[:, None, 0] + w[None, :] * self._port_self[:, None, 1]
        return self._port(f, dv) + own

    def read_current(self, factor: np.ndarray) -> np.ndarray:
        """Current into te when the CF path's conductance is ``factor`` times its own
        (cells, samples): quasi-static, through the low-frequency transfer of the
        traps' source (:func:`trap_factor`)."""
        h0 = self.transfer("traps", [1e-3])[:, 0].real
        return self.current[:, None] + h0[:, None] * self.path_current[:, None] * (
            np.asarray(factor, float) - 1.0)


@lru_cache(maxsize=8)
def _linearised(model: Model) -> tuple[Expr, ...]:
    """What :func:`cell_noise` evaluates: the derivatives of every branch's flow, then
    charge, by each small-signal node and V(te); the noise powers; the traps' blocked
    fraction; the CF path's current."""
    terms = [b.flow for b in model.branches] + [b.charge for b in model.branches]
    wrt = [*SMALL_SIGNAL, "te"]
    return (*(diff(e, node_symbol(x)) for e in terms for x in wrt),
            *(s.power for s in model.noise), _named(model, "trap_blocked"),
            _path_current(model))


def cell_noise(cards: Card | Sequence[Card] | CardBatch, gap_nm, width_nm, v_cell
               ) -> CellNoise:
    """The noise of each cell at its state (``gap_nm``, ``width_nm``) under ``v_cell``
    (te − be, V): see the module docstring."""
    from .engine.static import solve_static

    batch = CardBatch.of(cards, None if not isinstance(cards, Card) else max(
        np.broadcast(np.asarray(gap_nm), np.asarray(width_nm), np.asarray(v_cell)).size, 1))
    n = len(batch)
    model = batch.model
    v = np.broadcast_to(np.asarray(v_cell, float), (n,))
    op = solve_static(batch, gap_nm, width_nm, v)
    from .circuits import build_circuit

    lay = build_circuit("resistor", model).layout
    env: dict[str, object] = {p: batch[p] for p in model.parameter_names}
    env.update({node_symbol(nd): op["nodes"][:, lay.unknown(nd)] for nd in _DEVICE_NODES})
    for nd in OPTIONAL_END_COLUMNS:  # the optional blocks' states, held at their anchors
        if nd in lay.unknowns:
            env[node_symbol(nd)] = op["nodes"][:, lay.unknown(nd)]
    env[node_symbol("te")] = v
    env[node_symbol("be")] = np.zeros(n)
    env["dc_hold"] = np.ones(n)  # the states held, as a .noise operating point holds them
    k = len(SMALL_SIGNAL)
    index = {nd: i for i, nd in enumerate(SMALL_SIGNAL)}
    wrt = [*SMALL_SIGNAL, "te"]
    values = evaluate_arrays(list(_linearised(model)), env)
    nb = len(model.branches)
    grid = [np.broadcast_to(np.asarray(x, float), (n,)) for x in values[:2 * nb * len(wrt)]]
    d = np.array(grid).reshape(2, nb, len(wrt), n)  # (flow|charge, branch, wrt, cell)
    y = np.zeros((n, 2, k, k))
    drive = np.zeros((n, 2, k))
    port_rows = np.zeros((n, 2, k))
    port_self = np.zeros((n, 2))
    for b, br in enumerate(model.branches):
        for node, sign in ((br.p, 1.0), (br.n, -1.0)):
            if node in index:
                y[:, :, index[node], :] += sign * d[:, b, :k, :].transpose(2, 0, 1)
                drive[:, :, index[node]] += sign * d[:, b, k, :].T
            if node == "te":
                port_rows += sign * d[:, b, :k, :].transpose(2, 0, 1)
                port_self += sign * d[:, b, k, :].T
    injections, direct = [], []
    for s in model.noise:
        br = next(b for b in model.branches if b.name == s.branch)
        pattern = np.zeros(k)
        for node, sign in ((br.p, 1.0), (br.n, -1.0)):
            if node in index:
                pattern[index[node]] += sign
        injections.append(pattern)
        direct.append(1.0 if br.p == "te" else -1.0 if br.n == "te" else 0.0)
        if GROUND in (br.p, br.n):
            raise ValueError(f"noise source {s.name!r} on a branch to ground")
    per_cell = [np.broadcast_to(np.asarray(x, float), (n,)).copy()
                for x in values[2 * nb * len(wrt):]]
    return CellNoise(v, op["current_A"], per_cell[-1], per_cell[-2],
                     tuple(s.name for s in model.noise), tuple(per_cell[:-2]),
                     tuple(s.exponent for s in model.noise), y, tuple(injections),
                     port_rows, tuple(direct), drive, port_self)


def _named(model: Model, name: str) -> Expr:
    """The intermediate ``name`` of the model's noise sources (a block's ``let``)."""
    for node in walk([s.power for s in model.noise]):
        if node.op == "let" and node.name == name:
            return node
    raise ValueError(f"the model's noise sources have no intermediate {name!r}")


def _path_current(model: Model) -> Expr:
    """The CF path's current ti → tip (the branch the traps modulate with the gap)."""
    return next(b.flow for b in model.branches if b.name == "br_cf")


# --- the traps in time ---------------------------------------------------------------

@dataclass(frozen=True)
class Traps:
    """One cell's traps: correlation times ``tau`` (s) and the conductance fraction
    each blocks while occupied (``blocked``, the same for all: it is set by the CF's
    width)."""

    tau: np.ndarray
    blocked: float


def trap_count_mean(card: Card | CardBatch):
    """Mean number of a cell's traps: ``ntrap`` per decade over [taumin, taumax] (one
    per device of a batch)."""
    return card["ntrap"] * np.log10(card["taumax"] / card["taumin"])


def draw_traps(card: Card, blocked: float, rng: np.random.Generator) -> Traps:
    """A cell's traps: a Poisson number of mean :func:`trap_count_mean`, correlation
    times log-uniform over [taumin, taumax]; each blocks ``blocked`` of the CF path
    (:attr:`CellNoise.blocked` of the cell's state)."""
    count = rng.poisson(trap_count_mean(card))
    ln_tau = rng.uniform(np.log(card["taumin"]), np.log(card["taumax"]), count)
    return Traps(np.exp(ln_tau), float(blocked))


def occupancy(traps: Traps, times: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Occupancies (samples, traps) in {0, 1} at ``times`` (s, increasing), from the
    stationary state: exact for any spacing of the times."""
    times = np.asarray(times, float)
    if times.ndim != 1 or np.any(np.diff(times) < 0):
        raise InputError("read times must be a 1-D increasing sequence (s)")
    m = traps.tau.size
    out = np.empty((times.size, m), np.int8)
    if times.size == 0 or m == 0:
        return out
    state = rng.random(m) < 0.5
    out[0] = state
    keep = 0.5 * (1.0 + np.exp(-np.diff(times)[:, None] / traps.tau[None, :]))
    flips = rng.random((times.size - 1, m)) >= keep
    out[1:] = np.logical_xor.accumulate(np.vstack([state[None, :], flips]), axis=0)[1:]
    return out


def trap_factor(traps: Traps, states: np.ndarray) -> np.ndarray:
    """The CF path's conductance factor (samples,): each occupied trap takes ``blocked``
    of it and each free one gives it back, about the mean (an occupancy of ½):
    exp(−Δ·Σ(s − ½)), which is 1 − Δ·Σ(s − ½) for small Δ and stays positive."""
    return np.exp(-traps.blocked * (np.asarray(states, float) - 0.5).sum(axis=1))


def read_factors(mean_traps, blocked, rng: np.random.Generator) -> np.ndarray:
    """The CF path's conductance factors (:func:`trap_factor`) of cells read far from
    any other read, every trap in its stationary state: a Poisson number of traps of
    mean ``mean_traps`` per cell, each occupied with probability ½."""
    count = rng.poisson(np.asarray(mean_traps, float))
    return np.exp(-np.asarray(blocked, float) * (rng.binomial(count, 0.5) - 0.5 * count))


#: The parameters whose product scales the CF path's conductance and nothing else: the
#: gap's j0 and the body's 1/rho0, with kth·rho0 (the CF's thermal resistance) kept.
PATH_CONDUCTANCE = {"j0": 1.0, "rho0": -1.0, "kth": 1.0}


def with_trap_factor(cards: CardBatch, factor) -> CardBatch:
    """``cards`` with the CF path's conductance times ``factor`` (one per device): what
    the traps' occupancy does to a read, exactly (the body, the gap and the heating
    around them solved again)."""
    values = np.array(cards.values)
    factor = np.broadcast_to(np.asarray(factor, float), (len(cards),))
    for name, power in PATH_CONDUCTANCE.items():
        values[:, cards.model.layout.column(name)] *= factor ** power
    return CardBatch(cards.base, values)


def trap_blocked(cards: CardBatch, gap_nm, width_nm) -> np.ndarray:
    """The fraction of the CF path one occupied trap blocks, per device (the model's
    ``trap_blocked`` at the state)."""
    model = cards.model
    env: dict[str, object] = {p: cards[p] for p in model.parameter_names}
    for node, value in (("dgap", gap_nm), ("dwidth", width_nm)):
        anchor, scale = model.layout.anchor(node)
        env[node_symbol(node)] = np.asarray(value, float) - cards[anchor] / scale
    # the optional blocks' states at their anchors (u0, wear0), as a read holds them
    held = tuple(n for n in OPTIONAL_END_COLUMNS if n in model.node_names)
    env.update({node_symbol(n): np.zeros(len(cards))
                for n in ("te", "be", *held, *SMALL_SIGNAL)})
    env["dc_hold"] = np.ones(len(cards))
    (blocked,) = evaluate_arrays([_named(model, "trap_blocked")], env)
    return np.broadcast_to(np.asarray(blocked, float), (len(cards),))


def read_noise_ratio(cards: CardBatch, gap_nm, width_nm, v_read: float,
                     rngs: Iterable[np.random.Generator]) -> np.ndarray:
    """R_read with the traps over R_read without, for one isolated read of each cell
    (one generator each, used in turn; :func:`read_factors`), solved exactly
    (:func:`with_trap_factor`): how the Monte Carlo's and the arrays' reads carry RTN."""
    from .engine.static import read_resistance

    blocked = trap_blocked(cards, gap_nm, width_nm)
    factor = np.array([read_factors(m, b, rng) for m, b, rng in
                       zip(trap_count_mean(cards), blocked, rngs, strict=False)])
    return (read_resistance(with_trap_factor(cards, factor), gap_nm, width_nm, v_read)
            / read_resistance(cards, gap_nm, width_nm, v_read))


__all__ = ["SMALL_SIGNAL", "CellNoise", "Traps", "cell_noise", "draw_traps",
           "occupancy", "read_factors", "read_noise_ratio", "trap_blocked",
           "trap_count_mean", "trap_factor", "with_trap_factor"]
