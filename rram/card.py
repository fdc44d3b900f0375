"""Cards: the values of every parameter of a model, for one device or for many.

A :class:`Card` is one device's immutable, validated values, read from and written to
JSON.  A :class:`CardBatch` is many devices' cards as one validated matrix (one row per
device, the columns of the model's :class:`~rram.model.Layout`): the currency between
the variation draws, the Monte Carlo, the fit, the arrays and the engines.  A card is a
batch of one (:meth:`CardBatch.of`).  Both carry their model, so a module handed a card
never needs the global one.

The default card follows the public Stanford–PKU v2.0 Beta parameter set (bcrafton/rram,
``RRAM_v_2_0_Beta.va``) and its "RRAM RC cell" bench where the physics is unchanged.
Every change is in the parameter's ``desc`` (the blocks of :mod:`rram.equations` declare
them), and ``docs/model.md`` (§ "The default card") gives the reasons and the figures:

* barriers raised for ten-year read immunity in both polarities (``ea``, ``ei``, ``eh``),
  with the barrier-lowering lengths that keep the switching voltages where they were;
* new physics: the Wiedemann–Franz heating ``kth`` (with ``rthox`` and ``tauth``), the
  lateral-growth field length ``alphaw``, CF thinning ``kwr``, the pristine oxide's
  leakage ``jox``, the metallic ``tcr``; ``wcf`` is the cell's width;
* the RC-cell extrinsics ``rtop``, ``rbot``, ``rshunt``, ``cp`` as card parameters, and
  ``polarity`` for devices that SET at negative bias;
* numerical widths (smoothing, bounds, the state anchor) are parameters too, small
  enough that results do not depend on them (tested: halving or doubling any one moves
  no switching figure by more than 3 %).

Each parameter has a ``role`` (:data:`rram.params.ROLES`): what may vary cycle to cycle,
what is an initial state, what is a numerical width.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from .equations.cell import PROGRAMMED_STATES
from .errors import CardError, InputError
from .events import OPTIONAL_END_COLUMNS
from .io import read_text
from .model import MODEL, Model, model_with
from .params import Parameter, card_values_from_json, check_units


def _check_known(names: Iterable[str], model: Model) -> None:
    unknown = sorted(set(names) - set(model.by_name))
    if unknown:
        raise CardError(f"unknown parameter(s) {', '.join(unknown)}; valid names: "
                        + ", ".join(sorted(model.by_name)))


def _checked(p: Parameter, value: Any) -> float:
    problem = p.check(value)
    if problem:
        raise CardError(f"parameter {p.name}: {problem} (valid range {p.range_text})")
    return float(value)


def _resolve_state(model: Model, values: dict[str, float], changed: Iterable[str]) -> None:
    """In place: an explicit ``x0`` or ``w0`` without ``state`` starts the device there
    (state 0); a ``state`` of 1 or 2 puts ``x0``, ``w0`` at its programmed state
    (:data:`rram.equations.cell.PROGRAMMED_STATES`), so every engine's anchors and every
    rendering's equations start from the same state."""
    if "state" not in model.by_name:
        return
    changed = set(changed)
    if changed & {"x0", "w0"} and "state" not in changed:
        values["state"] = 0.0
    picked = PROGRAMMED_STATES.get(values["state"])
    if picked:
        values["x0"], values["w0"] = values[picked[0]], values[picked[1]]


def _resolve_state_columns(model: Model, values: np.ndarray, changed: Iterable[str]) -> None:
    """:func:`_resolve_state` on every row of a card matrix (in place)."""
    if "state" not in model.by_name:
        return
    col = model.layout.column
    if set(changed) & {"x0", "w0"} and "state" not in set(changed):
        values[:, col("state")] = 0.0
    state = values[:, col("state")]
    for code, (gap, width) in PROGRAMMED_STATES.items():
        rows = state == code
        if rows.any():
            values[rows, col("x0")] = values[rows, col(gap)]
            values[rows, col("w0")] = values[rows, col(width)]


def _check_constraints(model: Model, values: Mapping[str, float]) -> None:
    for rule in model.constraints:
        if rule.violated(values):
            raise CardError(rule.text(values))


@dataclass(frozen=True)
class Card:
    """One device's immutable, validated values for every parameter of ``model``.

    Build with :meth:`of` (missing names take their defaults); change with
    :meth:`replace`.  ``values`` is read-only, in the model's parameter order."""

    model: Model
    values: Mapping[str, float]
    name: str = "rram"
    meta: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, model: Model, values: Mapping[str, Any] | None = None, *,
           name: str = "rram", meta: Mapping[str, Any] | None = None) -> Card:
        given = dict(values or {})
        _check_known(given, model)
        resolved = {p.name: _checked(p, given.get(p.name, p.default))
                    for p in model.parameters}
        _resolve_state(model, resolved, given)
        _check_constraints(model, resolved)
        return cls(model, MappingProxyType(resolved), name, MappingProxyType(dict(meta or {})))

    def __reduce__(self):
        # its read-only mappings pickle as dicts (validated already)
        return (_card, (self.model, dict(self.values), self.name, dict(self.meta)))

    @property
    def parameters(self) -> tuple[Parameter, ...]:
        return self.model.parameters

    def __getitem__(self, name: str) -> float:
        try:
            return self.values[name]
        except KeyError:
            raise CardError(f"unknown parameter {name!r}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def parameter(self, name: str) -> Parameter:
        try:
            return self.model.by_name[name]
        except KeyError:
            raise CardError(f"unknown parameter {name!r}") from None

    def replace(self, **changes: float) -> Card:
        """A copy with ``changes``; only they are checked (the rest already were)."""
        _check_known(changes, self.model)
        merged = dict(self.values)
        merged.update({n: _checked(self.model.by_name[n], v) for n, v in changes.items()})
        _resolve_state(self.model, merged, changes)
        _check_constraints(self.model, merged)
        return Card(self.model, MappingProxyType(merged), self.name, self.meta)

    def with_meta(self, **meta: Any) -> Card:
        merged = dict(self.meta)
        merged.update(meta)
        return Card(self.model, self.values, self.name, MappingProxyType(merged))

    @property
    def row(self) -> np.ndarray:
        """The values in the model's column order (one row of a card matrix)."""
        return np.fromiter(self.values.values(), float, len(self.values))

    # Serialisation ---------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "rram-card/1",
            "name": self.name,
            "parameters": {
                p.name: {"value": self.values[p.name], "unit": p.unit} for p in self.parameters
                if p.kind != "environment"
            },
            "meta": dict(self.meta),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False) + "\n"

    @property
    def digest(self) -> str:
        """sha256 of the parameter values (not the metadata, not the environment): the
        card's identity."""
        environment = {p.name for p in self.parameters if p.kind == "environment"}
        payload = json.dumps({k: repr(v) for k, v in self.values.items()
                              if k not in environment}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()


def _card(model: Model, values: dict, name: str, meta: dict) -> Card:
    return Card(model, MappingProxyType(values), name, MappingProxyType(meta))


@dataclass(frozen=True, eq=False)
class CardBatch:
    """Many devices' cards as one validated matrix: ``values[d]`` is device d's card,
    its columns those of ``base.model.layout`` (read-only).  ``base`` gives the model,
    the name and the metadata of every row's :meth:`card`."""

    base: Card
    values: np.ndarray

    def __post_init__(self) -> None:
        # a caller's writable array is copied; a read-only one is kept as a view, so one
        # card broadcast to a million devices stays one row
        v = np.asarray(self.values, dtype=float)
        v = v.copy() if v.flags.writeable else v.view()
        if v.ndim != 2 or v.shape[1] != len(self.model.parameters):
            raise InputError(f"a card batch is (devices, {len(self.model.parameters)}), "
                             f"got {v.shape}")
        v.setflags(write=False)
        object.__setattr__(self, "values", v)

    @classmethod
    def of(cls, cards: Card | Sequence[Card] | CardBatch, n: int | None = None) -> CardBatch:
        """``cards`` as a batch: a batch as it is, one card for ``n`` devices (default
        1), or one card per device (each distinct card's row built once)."""
        if isinstance(cards, CardBatch):
            out = cards
        elif isinstance(cards, Card):
            out = cls(cards, np.broadcast_to(cards.row, (n or 1, len(cards.values))))
        else:
            cards = list(cards)
            if not cards:
                raise InputError("no cards")
            model = cards[0].model
            if any(c.model is not model for c in cards):
                raise InputError("the cards of one batch must be of one model")
            rows: dict[int, np.ndarray] = {}
            values = np.empty((len(cards), len(model.parameters)))
            for d, c in enumerate(cards):
                row = rows.get(id(c))
                if row is None:
                    row = rows[id(c)] = c.row
                values[d] = row
            values.setflags(write=False)  # the batch's own array: no copy
            out = cls(cards[0], values)
        if n is not None and len(out) != n:
            raise InputError(f"got {len(out)} cards for {n} devices")
        return out

    @classmethod
    def empty(cls, base: Card) -> CardBatch:
        """No devices (the cards of an array without cells)."""
        return cls(base, np.zeros((0, len(base.values))))

    @property
    def model(self) -> Model:
        return self.base.model

    def __len__(self) -> int:
        return self.values.shape[0]

    def __getitem__(self, name: str) -> np.ndarray:
        return self.column(name)

    def column(self, name: str) -> np.ndarray:
        """The values of parameter ``name`` of every device (read-only)."""
        try:
            return self.values[:, self.model.layout.column(name)]
        except KeyError:
            raise CardError(f"unknown parameter {name!r}") from None

    def columns(self) -> dict[str, np.ndarray]:
        return {n: self.values[:, k] for k, n in enumerate(self.model.parameter_names)}

    def with_columns(self, **columns: Any) -> CardBatch:
        """A copy with the given columns (a number or one value per device), each
        checked against its parameter's range and the model's constraints checked on
        every device: the error names the first bad device and its value."""
        _check_known(columns, self.model)
        values = np.array(self.values)
        for name, column in columns.items():
            p = self.model.by_name[name]
            col = np.broadcast_to(np.asarray(column, dtype=float), (len(self),))
            bad = np.flatnonzero(p.violations(col))
            if bad.size:
                d = int(bad[0])
                raise CardError(f"parameter {name} of device {d}: {p.check(float(col[d]))} "
                                f"(valid range {p.range_text})")
            values[:, self.model.layout.column(name)] = col
        _resolve_state_columns(self.model, values, columns)
        values.setflags(write=False)  # this array is the new batch's own: no copy
        out = CardBatch(self.base, values)
        out._check_constraints()
        return out

    def _check_constraints(self) -> None:
        cols = self.columns()
        for rule in self.model.constraints:
            bad = np.flatnonzero(np.asarray(rule.violated(cols), bool))
            if bad.size:
                d = int(bad[0])
                raise CardError(f"device {d}: " + rule.text(
                    {k: float(v[d]) for k, v in cols.items()}))

    def take(self, devices: Sequence[int] | np.ndarray) -> CardBatch:
        values = self.values[np.asarray(devices, dtype=np.int64)]
        values.setflags(write=False)  # a fresh array: the batch's own
        return CardBatch(self.base, values)

    def card(self, d: int) -> Card:
        """Device ``d``'s card (the base's name and metadata; already validated)."""
        row = self.values[d]
        if np.array_equal(row, self.base.row):
            return self.base
        values = dict(zip(self.model.parameter_names, row.tolist(), strict=True))
        return Card(self.model, MappingProxyType(values), self.base.name, self.base.meta)

    def cards(self) -> list[Card]:
        return [self.card(d) for d in range(len(self))]


def formed_state(batch: CardBatch, gap_m: np.ndarray, width_m: np.ndarray,
                 **columns: Any) -> CardBatch:
    """``batch`` with ``columns`` (as :meth:`CardBatch.with_columns`) and its initial
    state (``x0``, ``w0``) at the given gap and width (m), clipped to the state's
    physical range, the one rule of every caller: the gap within [0, l0], the width
    within [wmin, wcf] of the new columns (the bounds the kinetics' windows enforce; a
    state an integrator left a hair beyond one starts on it)."""
    def col(name: str) -> np.ndarray:
        return np.asarray(columns[name], float) if name in columns else batch[name]

    x0 = np.clip(gap_m, 0.0, col("l0"))
    w0 = np.clip(width_m, col("wmin"), col("wcf"))
    return batch.with_columns(**columns, x0=x0, w0=w0)


def carried_states(model: Model) -> dict[str, tuple[str, float]]:
    """The optional blocks' states a run of a cell hands to the next, beyond its gap and
    width: each anchor parameter (``u0``, ``wear0``) with the event column of its value
    at a segment's end and that column's unit in SI (rram.events.OPTIONAL_END_COLUMNS)."""
    return {model.layout.anchor(node)[0]: (column, model.layout.anchor(node)[1])
            for node, column in OPTIONAL_END_COLUMNS.items() if node in model.node_names}


def carried_at_end(model: Model, events: Mapping[str, np.ndarray], rows: Any, segment: Any,
                   before: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The carried states (:func:`carried_states`) at the end of ``segment`` of the event
    table's ``rows``, each never below 0 (their range), and ``before``'s value where a
    run left none."""
    out = {}
    for p, (column, scale) in carried_states(model).items():
        value = np.asarray(events[column][rows, segment], float) * scale
        out[p] = np.clip(np.where(np.isfinite(value), value, before[p]), 0.0, None)
    return out


def formed_card(card: Card, gap_m: float, width_m: float) -> Card:
    """``card`` with its initial state at the given gap and width (m), by the rule of
    :func:`formed_state`."""
    return formed_state(CardBatch.of(card), np.array([gap_m]), np.array([width_m])).card(0)


def in_model(card: Card, model: Model) -> Card:
    """``card`` as a card of ``model``, a model with an optional block (its values kept,
    the block's parameters at their defaults, which leave the block off); ``card`` itself
    if its model already has every parameter of ``model``."""
    if set(model.parameter_names) <= set(card.model.parameter_names):
        return card
    values = {p.name: card[p.name] for p in card.model.parameters if p.kind != "environment"}
    return Card.of(model, values, name=card.name, meta=card.meta)


def default_card(model: Model = MODEL) -> Card:
    """The default card of ``model`` (for the filament model: v2.0 values where
    physical; see the module docstring)."""
    return Card.of(model, {}, name="rram-default")


def make_card(values: Mapping[str, Any] | None = None, model: Model = MODEL,
              **kwargs: Any) -> Card:
    """A card of ``model`` with the given values, the defaults elsewhere; validated."""
    merged = dict(values or {})
    merged.update(kwargs)
    return Card.of(model, merged, name="rram")


def load_card(path: str | Path, model: Model | None = None) -> Card:
    """Read and validate a card JSON file (see :meth:`Card.to_json`), of ``model``; by
    default of the model its parameters belong to (:func:`rram.model.model_with`: a
    card with the relaxation block's parameters is of the relaxing model)."""
    path = Path(path)
    name, values, meta, units = card_values_from_json(read_text(path, "card"), str(path))
    if model is None:
        model = model_with(list(values)) or MODEL  # none has them all: MODEL says which
    environment = sorted(p.name for p in model.parameters
                         if p.kind == "environment" and p.name in values)
    if environment:
        raise CardError(
            f"{path}: {', '.join(environment)} is not a card parameter: the ambient "
            "temperature is the simulation's (ngspice .temp, Verilog-A $temperature, "
            "--temperature of the CLI, card.replace(tamb=...) in Python); remove it from "
            "the card (a per-instance offset is dtamb)")
    try:
        check_units(units, model.parameters)
        return Card.of(model, values, name=name, meta=meta)
    except CardError as exc:
        raise CardError(f"{path}: {exc}") from None


__all__ = ["Card", "CardBatch", "default_card", "formed_card", "formed_state", "load_card",
           "make_card"]
