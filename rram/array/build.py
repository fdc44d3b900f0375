"""Array → circuit: wires as Pi/T/L sections, drivers, senses and cells (defined once).

:func:`build` turns an :class:`~rram.array.spec.ArraySpec`, the cells' frozen states
and the input voltages into a :class:`~rram.array.circuit.Circuit`, from which the
native engine stamps its sparse system and :func:`~rram.array.circuit.to_netlist` the
ngspice deck.  Net names (position ``p`` counts sections along a line; ``s`` sections
per pitch)::

    r<i>_<p>   row line i (driven at p = 0; the tap of column j at p = (j+1)·s)
    c<j>_<p>   column line j (the tap of row i at p = i·s; sensed at p = rows·s)
    g<i>_<p>   gate line i (1T1R; taps as on row lines)
    rt/ct/gt<line>_<k>  the middle node of T section k
    m<i>_<j>   between the RRAM and the access device (1S1R, 1T1R)
    d<i>, s<j> behind the driver and sense resistances (when they are not zero)

A line of zero resistance is one net (``r<i>_0``) with its capacitance lumped on it.
Sources: ``Vin<i>`` (row inputs), ``Vg<i>`` (gates), ``Vout<j>`` (0 V virtual grounds,
whose currents are the column outputs).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..card import CardBatch
from ..errors import InputError
from .cells import States, cell_parameters, with_states
from .circuit import GND, Circuit, DeviceGroup
from .devices import Device, nmos_current, selector_current
from .spec import ArraySpec, Metal


class _Nets:
    """Blocks of nets: each a name pattern over an index shape."""

    def __init__(self) -> None:
        self.offsets: list[int] = []
        self.blocks: list[tuple[tuple[int, ...], Callable[..., str]]] = []
        self.xy: list[np.ndarray] = []
        self.n = 0

    def block(self, shape: tuple[int, ...], name: Callable[..., str],
              x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """A block of nets; ``x``, ``y``: their places in the array (cell pitches),
        broadcast to ``shape`` (the solver orders its unknowns by them)."""
        size = int(np.prod(shape))
        self.offsets.append(self.n)
        self.blocks.append((shape, name))
        self.xy.append(np.stack([np.broadcast_to(x, shape).ravel(),
                                 np.broadcast_to(y, shape).ravel()], 1).astype(float))
        out = np.arange(self.n, self.n + size).reshape(shape)
        self.n += size
        return out

    def name(self, k: int) -> str:
        b = bisect.bisect_right(self.offsets, k) - 1
        shape, namer = self.blocks[b]
        return namer(*np.unravel_index(k - self.offsets[b], shape))


#: What a resistor of a built circuit is (:attr:`Circuit.res_where`, column 0).
RESISTOR_KINDS = ("row", "col", "gate", "driver", "sense", "load")
_FAMILY = {"r": 0, "c": 1, "g": 2}


@dataclass
class _Acc:
    res: list[np.ndarray]
    ohms: list[np.ndarray]
    cpairs: list[np.ndarray]
    cvals: list[np.ndarray]
    where: list[np.ndarray]

    def resistors(self, pairs: np.ndarray, ohms: np.ndarray, kind: str, line: np.ndarray,
                  section: np.ndarray) -> None:
        """Resistors between ``pairs`` of nets, tagged (kind, line, section)."""
        self.res.append(pairs)
        self.ohms.append(ohms)
        tag = np.stack(np.broadcast_arrays(RESISTOR_KINDS.index(kind), line, section), 1)
        self.where.append(tag.astype(np.int64).reshape(-1, 3))

    def res_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self.res:
            return np.zeros((0, 2), np.int64), np.zeros(0), np.zeros((0, 3), np.int64)
        return (np.concatenate(self.res).reshape(-1, 2), np.concatenate(self.ohms),
                np.concatenate(self.where))


def _line_family(nets: _Nets, acc: _Acc, spec: ArraySpec, metal: Metal, lines: int,
                 pitches: int, prefix: str, offset: float = 0.0,
                 horizontal: bool = True) -> np.ndarray:
    """Nets (lines, positions) of ``lines`` parallel lines of ``pitches`` pitches each,
    position p at ``p/segments + offset`` pitches along x (``horizontal``) or y; their
    sections' resistors and capacitors go to ``acc``."""
    s, kind = spec.segments, spec.segment_kind

    def place(along: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        across = np.arange(lines, dtype=float)[:, None]
        return (along, across) if horizontal else (across, along)
    n_sec = pitches * s
    r_sec = spec.segment_resistance(metal)
    c_sec = metal.c_ground * spec.pitch / s
    cc_sec = metal.c_couple * spec.pitch / s
    if r_sec == 0:  # an ideal line: one net, its capacitance lumped
        node = nets.block((lines, 1), lambda i, p: f"{prefix}{i}_0",
                          *place(np.array([[pitches / 2 + offset]])))
        pos = np.repeat(node, n_sec + 1, axis=1)
        weight = np.zeros((lines, 1))
        weight[:, 0] = n_sec
        _caps(acc, node, weight * c_sec, weight * cc_sec)
        return pos
    pos = nets.block((lines, n_sec + 1), lambda i, p: f"{prefix}{i}_{p}",
                     *place(np.arange(n_sec + 1)[None, :] / s + offset))
    a, b = pos[:, :-1].ravel(), pos[:, 1:].ravel()
    family = RESISTOR_KINDS[_FAMILY[prefix]]
    line, sec = np.repeat(np.arange(lines), n_sec), np.tile(np.arange(n_sec), lines)
    if kind == "t":
        mid = nets.block((lines, n_sec), lambda i, k: f"{prefix}t{i}_{k}",
                         *place((np.arange(n_sec)[None, :] + 0.5) / s + offset))
        for pair in (np.stack([a, mid.ravel()], 1), np.stack([mid.ravel(), b], 1)):
            acc.resistors(pair, np.full(a.size, r_sec / 2), family, line, sec)
        _caps(acc, mid, np.full(mid.shape, c_sec), np.full(mid.shape, cc_sec))
        return pos
    acc.resistors(np.stack([a, b], 1), np.full(a.size, r_sec), family, line, sec)
    w = np.zeros(n_sec + 1)
    if kind == "pi":
        w[:-1] += 0.5
        w[1:] += 0.5
    else:  # L: the section's capacitance at its far end
        w[1:] += 1.0
    weight = np.tile(w, (lines, 1))
    _caps(acc, pos, weight * c_sec, weight * cc_sec)
    return pos


def _caps(acc: _Acc, node: np.ndarray, ground: np.ndarray, couple: np.ndarray) -> None:
    """Ground capacitors at ``node`` and coupling ones between neighbouring lines."""
    keep = ground.ravel() > 0
    acc.cpairs.append(np.stack([node.ravel()[keep], np.full(keep.sum(), GND)], 1))
    acc.cvals.append(ground.ravel()[keep])
    if node.shape[0] > 1:
        cc = couple[:-1].ravel()
        keep = cc > 0
        acc.cpairs.append(np.stack([node[:-1].ravel()[keep], node[1:].ravel()[keep]], 1))
        acc.cvals.append(cc[keep])


def _vector(values, n: int, what: str) -> np.ndarray:
    v = np.broadcast_to(np.asarray(values, dtype=float), (n,)).copy()
    if not np.all(np.isfinite(v)) or np.any(np.abs(v) > 100):
        raise InputError(f"{what} must be finite voltages within [-100, 100] V")
    return v


def build(spec: ArraySpec, v_rows, states: States | None = None, v_gates=0.0,
          params: CardBatch | None = None, v_cols=0.0) -> Circuit:
    """The circuit of ``spec`` with row inputs ``v_rows`` (V, one per row or one for
    all), gate voltages ``v_gates`` (V, 1T1R), the columns' sense (virtual-ground)
    voltages ``v_cols`` (V; non-zero for half-bias schemes) and cells at ``states``
    (default: each card's x0/w0).  ``params``: the cells' cards, if already drawn
    (:func:`rram.array.cells.cell_parameters`).  An array whose solve would not fit in
    memory is refused first (:meth:`~rram.array.spec.ArraySpec.require_memory`)."""
    spec.require_memory("solve")
    m, n, s = spec.rows, spec.cols, spec.segments
    v_rows = _vector(v_rows, m, "row inputs v_rows")
    v_gates = _vector(v_gates, m, "gate voltages v_gates")
    v_cols = _vector(v_cols, n, "column sense voltages v_cols")
    P = with_states(spec, cell_parameters(spec) if params is None else params, states)
    nets, acc = _Nets(), _Acc([], [], [], [], [])
    rows = _line_family(nets, acc, spec, spec.row_metal, m, n, "r", -1.0)
    cols = _line_family(nets, acc, spec, spec.col_metal, n, m, "c", 0.0, horizontal=False)
    ii, jj = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    row_tap = rows[ii, (jj + 1) * s]
    col_tap = cols[jj, ii * s]
    src, volts, src_names = [], [], []
    if spec.r_driver > 0:
        drv = nets.block((m,), lambda i: f"d{i}", np.array(-1.5), np.arange(m))
        acc.resistors(np.stack([drv, rows[:, 0]], 1), np.full(m, spec.r_driver), "driver",
                      np.arange(m), 0)
        src.append(drv)
    else:
        src.append(rows[:, 0])
    volts.append(v_rows)
    src_names += [f"in{i}" for i in range(m)]
    groups: list[DeviceGroup] = []
    if spec.topology == "1r":
        cells = np.stack([row_tap.ravel(), col_tap.ravel()], 1)
    else:
        mid = nets.block((m, n), lambda i, j: f"m{i}_{j}", np.arange(n)[None, :],
                         np.arange(m)[:, None])
        cells = np.stack([row_tap.ravel(), mid.ravel()], 1)
        if spec.topology == "1s1r":
            dev = Device(selector_current(spec.selector, "t0", "t1"), ("t0", "t1"))
            groups.append(DeviceGroup(dev, np.stack([mid.ravel(), col_tap.ravel()], 1),
                                      lambda k: f"s{k // n}_{k % n}"))
        else:
            gates = _line_family(nets, acc, spec, spec.gate_metal, m, n, "g", -1.0)
            t = spec.transistor
            dev = Device(nmos_current(t, "t0", "t1", "t2"), ("t0", "t1", "t2"))
            nodes = np.stack([mid.ravel(), gates[ii, (jj + 1) * s].ravel(), col_tap.ravel()], 1)
            groups.append(DeviceGroup(dev, nodes, lambda k: f"t{k // n}_{k % n}", t))
            src.append(gates[:, 0])
            volts.append(v_gates)
            src_names += [f"g{i}" for i in range(m)]
    end = cols[:, m * s]
    if spec.r_sense > 0:
        sense = nets.block((n,), lambda j: f"s{j}", np.arange(n), np.array(m + 0.5))
        acc.resistors(np.stack([end, sense], 1), np.full(n, spec.r_sense), "sense",
                      np.arange(n), 0)
        src.append(sense)
    else:
        src.append(end)
    volts.append(v_cols)
    src_names += [f"out{j}" for j in range(n)]
    res, ohms, where = acc.res_arrays()
    return Circuit(
        n_nets=nets.n, net_name=nets.name, res=res, ohms=ohms, res_where=where,
        caps=np.concatenate(acc.cpairs).reshape(-1, 2), farads=np.concatenate(acc.cvals),
        src=np.concatenate(src), volts=np.concatenate(volts), src_name=src_names.__getitem__,
        cells=cells, cell_cards=P, cell_name=lambda k: f"c{k // n}_{k % n}",
        groups=tuple(groups), title=f"rram {spec.topology} array {m}x{n}",
        xy=np.concatenate(nets.xy),
        meta=(("topology", spec.topology), ("size", f"{m}x{n}"),
              ("segments", f"{s} {spec.segment_kind} per pitch")))


def line_circuit(spec: ArraySpec, metal: Metal, pitches: int, v=1.0, r_load: float = 0.0,
                 c_load: float = 0.0, lines: int = 1) -> tuple[Circuit, np.ndarray]:
    """``lines`` parallel lines (neighbours coupled by ``metal.c_couple``) of
    ``pitches`` pitches of ``metal``, sectioned as ``spec`` says, each driven at its
    start by ``v`` (V; one per line or one for all) through ``spec.r_driver``; optional
    loads at every pitch point past the start: ``r_load`` (Ω) to ground, and ``c_load``
    (F) at the far ends.  The test bench of the interconnect alone (IR drop, RC delay,
    crosstalk).  Returns the circuit and the nets of the pitch points, (lines, pitches
    + 1), start first (one line: a 1-D array)."""
    nets, acc = _Nets(), _Acc([], [], [], [], [])
    pos = _line_family(nets, acc, spec, metal, lines, pitches, "r")
    taps = pos[:, ::spec.segments]
    if r_load > 0:
        loaded = taps[:, 1:].ravel()
        acc.resistors(np.stack([loaded, np.full(loaded.size, GND)], 1),
                      np.full(loaded.size, float(r_load)), "load",
                      np.repeat(np.arange(lines), pitches), np.tile(np.arange(pitches), lines))
    if c_load > 0:
        acc.cpairs.append(np.stack([pos[:, -1], np.full(lines, GND)], 1))
        acc.cvals.append(np.full(lines, float(c_load)))
    src = pos[:, 0]
    if spec.r_driver > 0:
        src = nets.block((lines,), lambda i: f"d{i}", np.array(-0.5), np.arange(lines))
        acc.resistors(np.stack([src, pos[:, 0]], 1), np.full(lines, spec.r_driver),
                      "driver", np.arange(lines), 0)
    P = CardBatch.empty(spec.card)
    res, ohms, where = acc.res_arrays()
    circuit = Circuit(
        n_nets=nets.n, net_name=nets.name, res=res, ohms=ohms, res_where=where,
        caps=np.concatenate(acc.cpairs).reshape(-1, 2), farads=np.concatenate(acc.cvals),
        src=np.asarray(src), volts=_vector(v, lines, "line drives v"),
        src_name=lambda k: f"in{k}", cells=np.zeros((0, 2), np.int64), cell_cards=P,
        cell_name=str, title=f"rram {lines} line(s) of {pitches} pitches", meta=(),
        xy=np.concatenate(nets.xy))
    return circuit, (taps[0] if lines == 1 else taps)


def output_sources(spec: ArraySpec) -> slice:
    """Positions of the column outputs (``Vout<j>``) among a built circuit's sources."""
    first = spec.rows * (2 if spec.topology == "1t1r" else 1)
    return slice(first, first + spec.cols)
