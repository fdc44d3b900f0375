"""Variation of card parameters: device-to-device (D2D) and cycle-to-cycle (C2C).

Variation is carried by parameters drawn outside the model (docs/model.md § 7): the model
stays deterministic and every engine simulates exactly the same samples.  A
:class:`VariationSpec` lists, per parameter and kind, a distribution:

* ``normal``: an additive offset ``shift + sigma·z`` (parameter units);
* ``lognormal``: a factor ``exp(shift + sigma·z)`` (``sigma`` is the ln-σ);

with z standard normal; ``shift`` (default 0) moves the centre of the distribution
(a calibrated spec uses it to place the medians).

A C2C entry may have a slow part: ``slow`` (0–1) is the share of its variance that
wanders over many cycles rather than jumping from one cycle to the next (the CF a SET
forms inherits part of the configuration the previous RESET left), with correlation
time ``memory`` (cycles).  Its z is √(1 − slow)·ε + √slow·u, with ε drawn per operation
and u a stationary AR(1) path over the device's cycles, u_k = φ·u_(k−1) + √(1 − φ²)·η_k,
φ = exp(−1/memory): z stays standard normal, so the distribution over devices and cycles
is the same, but each device's record drifts (:mod:`rram.mc.draws`).

A spec may also have two configurations, its :class:`Mode`: a share of the cycles is in
the upper configuration, each device switching between the two as a Markov chain with
a correlation time (``memory``, cycles), and there each C2C entry's centre is
``shift + mode_step`` instead of ``shift`` and its σ is ``mode_scale`` times its own.  This
is a cell whose CF forms in one of
two configurations and stays in one for many cycles: the TUD cell's upper LRS mode
(~30 % of the cycles, ~2.5× the resistance, cycles ~600–925) comes with a higher
V_reset, a higher HRS and a higher |V_set|, all at once, which neither a unimodal
distribution nor independent modes per parameter can make; and in it the cycles scatter
less (ln R_LRS 0.14 against 0.24, V_reset 0.07 V against 0.18 V).

Draws are truncated to the parameter's range (resampled, not clipped).  C2C entries
are allowed only on kinetic parameters, so redrawing them between operations leaves the
state, and the resistance, continuous.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field, fields
from functools import cache
from pathlib import Path

import numpy as np

from .card import Card, default_card
from .checks import is_number, parse_json
from .episodes import Episodes
from .errors import InputError
from .io import read_text
from .model import Model
from .params import Parameter

DISTRIBUTIONS = ("normal", "lognormal")
KINDS = ("d2d", "c2c")


@cache
def _default_model() -> Model:
    return default_card().model


def kinetic(model: Model) -> frozenset[str]:
    """Parameters that set rates only (no state, no conduction): safe to redraw per
    operation (the model's ``kinetic`` role; the CF temperature relaxes within τ_th,
    picoseconds, so nothing of the thermal parameters is carried from one operation to
    the next)."""
    return frozenset(model.with_role("kinetic"))


def held(model: Model) -> dict[str, str]:
    """Parameters drawn at one operation and held through the next (parameter -> the
    operation that draws it):

    * the bounds of the state (``wmin``, the residual of thinning, and ``wcf``, the
      cell, bound the CF width; ``l0``, the layer, bounds the gap), the model's
      ``bound`` role, are set by the RESET and held through the next SET, so the state
      one operation leaves stays within its bounds;
    * the properties of the CF a SET forms (its thermal coupling ``kth``), the
      ``filament`` role, are set by the SET and held through the RESET that dissolves it.
    """
    return {**{p: "reset" for p in model.with_role("bound")},
            **{p: "set" for p in model.with_role("filament")}}


@dataclass(frozen=True)
class Variation:
    parameter: str
    kind: str
    distribution: str
    sigma: float
    desc: str = ""
    shift: float = 0.0
    #: share of a C2C variance that is slow (0–1; 0: independent cycles)
    slow: float = 0.0
    #: correlation time of the slow part (cycles; > 0 with a slow part)
    memory: float = 0.0
    #: offset of the centre in the spec's upper configuration (:class:`Mode`; parameter
    #: units, ln for lognormal)
    mode_step: float = 0.0
    #: factor on ``sigma`` in the spec's upper configuration
    mode_scale: float = 1.0
    #: the model whose parameter it varies (default: the default card's)
    model: Model | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.check(self.model or _default_model())

    def check(self, model: Model) -> None:
        """Refuse an entry that ``model`` cannot take (each message names the entry)."""
        if self.parameter not in model.by_name:
            raise InputError(f"variation of unknown parameter {self.parameter!r}")
        param = model.by_name[self.parameter]
        if self.kind not in KINDS:
            raise InputError(f"variation kind {self.kind!r}: valid are {', '.join(KINDS)}")
        if self.distribution not in DISTRIBUTIONS:
            raise InputError(f"distribution {self.distribution!r}: valid are "
                             + ", ".join(DISTRIBUTIONS))
        # is_number: a JSON true is no sigma of 1
        if not (is_number(self.sigma) and math.isfinite(self.sigma) and self.sigma >= 0):
            raise InputError(f"sigma of {self.parameter} must be a finite number >= 0, "
                             f"got {self.sigma!r}")
        if not (is_number(self.shift) and math.isfinite(self.shift)):
            raise InputError(f"shift of {self.parameter} must be a finite number, "
                             f"got {self.shift!r}")
        if not isinstance(self.desc, str):
            raise InputError(f"desc of {self.parameter} must be a string, got {self.desc!r}")
        self._check_slow()
        redrawn = kinetic(model) | held(model).keys()
        if self.kind == "c2c" and self.parameter not in redrawn:
            raise InputError(f"{self.parameter} cannot vary cycle to cycle (valid: "
                             f"{', '.join(sorted(redrawn))})")
        if self.distribution == "lognormal" and param.lower < 0:
            raise InputError(f"{self.parameter} can be negative: use a normal variation")
        sigma_max, shift_max = spread_limits(param, self.distribution)
        where = f"{self.kind} {self.distribution} variation of {self.parameter}"
        if self.sigma > sigma_max:
            raise InputError(f"{where}: sigma must be within [0, {sigma_max:g}], "
                             f"got {self.sigma:g}")
        if abs(self.shift) > shift_max:
            raise InputError(f"{where}: shift must be within [{-shift_max:g}, "
                             f"{shift_max:g}], got {self.shift:g}")
        if not (is_number(self.mode_step) and math.isfinite(self.mode_step)):
            raise InputError(f"{where}: mode_step must be a finite number, got "
                             f"{self.mode_step!r}")
        if self.mode_step and self.kind != "c2c":
            raise InputError(f"{where}: only a c2c entry has a mode_step "
                             f"({self.mode_step:g})")
        if not (is_number(self.mode_scale) and 0 < self.mode_scale <= MAX_MODE_SCALE):
            raise InputError(f"{where}: mode_scale must be a number within (0, "
                             f"{MAX_MODE_SCALE:g}], got {self.mode_scale!r}")
        if self.mode_scale != 1 and self.kind != "c2c":
            raise InputError(f"{where}: only a c2c entry has a mode_scale "
                             f"({self.mode_scale:g})")
        if self.sigma * self.mode_scale > sigma_max:
            raise InputError(f"{where}: sigma * mode_scale must be within [0, {sigma_max:g}], "
                             f"got {self.sigma * self.mode_scale:g}")
        if abs(self.shift + self.mode_step) > shift_max:
            raise InputError(f"{where}: shift + mode_step must be within [{-shift_max:g}, "
                             f"{shift_max:g}], got {self.shift + self.mode_step:g}")

    def _check_slow(self) -> None:
        where = f"{self.kind} variation of {self.parameter}"
        if not (is_number(self.slow) and 0 <= self.slow <= 1):
            raise InputError(f"{where}: slow must be a number within [0, 1], got {self.slow!r}")
        if not (is_number(self.memory) and 0 <= self.memory <= MAX_MEMORY):
            raise InputError(f"{where}: memory must be a number of cycles within "
                             f"[0, {MAX_MEMORY:g}], got {self.memory!r}")
        if self.slow > 0 and self.kind != "c2c":
            raise InputError(f"{where}: only a c2c entry has a slow part (slow {self.slow:g})")
        if (self.slow > 0) != (self.memory > 0):
            raise InputError(f"{where}: slow {self.slow:g} and memory {self.memory:g}: a "
                             "slow part needs a memory > 0 cycles, and a memory a slow > 0")

    @property
    def phi(self) -> float:
        """Correlation of the slow part from one cycle to the next, exp(−1/memory)."""
        return math.exp(-1.0 / self.memory) if self.memory > 0 else 0.0

    def as_dict(self) -> dict:
        """The entry as JSON data (``slow`` and ``memory`` only when there is a slow part,
        so specs without one read as before)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "model"}
        if not self.slow:
            del out["slow"], out["memory"]
        if not self.mode_step:
            del out["mode_step"]
        if self.mode_scale == 1:
            del out["mode_scale"]
        return out

    @property
    def in_mode(self) -> bool:
        """Whether the entry differs in the spec's upper configuration."""
        return bool(self.mode_step) or self.mode_scale != 1

    def centre(self, upper):
        """The centre of the draw: ``shift``, plus ``mode_step`` where ``upper`` (bool or
        bool array: in the spec's upper configuration)."""
        return self.shift + self.mode_step * np.asarray(upper, float)

    def spread(self, upper):
        """The σ of the draw: ``sigma``, times ``mode_scale`` where ``upper``."""
        return self.sigma * (1.0 + (self.mode_scale - 1.0) * np.asarray(upper, float))


@dataclass(frozen=True)
class Mode:
    """Two configurations of a cell: ``share`` (0–1) of its cycles in the upper one; a
    device switches between them as a two-state Markov chain whose configuration
    correlates as exp(−k/``memory``) over k cycles (:attr:`rates`; a stay in the upper
    one lasts memory/(1 − share) cycles on average)."""

    share: float
    memory: float

    def __post_init__(self) -> None:
        if not (is_number(self.share) and 0 < self.share < 1):
            raise InputError(f"mode: share must be a number within (0, 1), got "
                             f"{self.share!r}")
        if not (is_number(self.memory) and 0 < self.memory <= MAX_MEMORY):
            raise InputError(f"mode: memory must be a number of cycles within (0, "
                             f"{MAX_MEMORY:g}], got {self.memory!r}")

    @property
    def rates(self) -> tuple[float, float]:
        """(P(upper → lower), P(lower → upper)) per cycle: their sum is 1 − λ with
        λ = exp(−1/memory), the chain's correlation from one cycle to the next, and the
        stationary share of the upper configuration is ``share``."""
        rate = 1.0 - math.exp(-1.0 / self.memory)
        return (1.0 - self.share) * rate, self.share * rate


#: Longest correlation time of a slow part (cycles): beyond any measured record.
MAX_MEMORY = 1e6
#: Largest factor on a σ in the upper configuration.
MAX_MODE_SCALE = 10.0
#: Largest ln-σ of a lognormal entry: a factor e^3 ≈ 20 per σ (measured device spreads
#: are well below 1); larger ones only spill out of the parameter's range, and e^(σ·z)
#: overflows for σ in the hundreds.
MAX_LN_SIGMA = 3.0
#: Largest |shift| of a lognormal entry (ln units): e^30 ≈ 10^13, the widest range of any
#: parameter, so every centre inside a range can be reached.
MAX_LN_SHIFT = 30.0


def spread_limits(p: Parameter, distribution: str) -> tuple[float, float]:
    """(largest sigma, largest |shift|) of a variation of the parameter ``p``.

    Lognormal: :data:`MAX_LN_SIGMA`, :data:`MAX_LN_SHIFT`.  Normal (parameter units): σ
    at most half the parameter's range, |shift| at most the range (a wider one is a draw
    the truncation to the range would all but reject); unbounded (but finite) for a
    parameter whose range is unbounded."""
    if distribution == "lognormal":
        return MAX_LN_SIGMA, MAX_LN_SHIFT
    width = p.upper - p.lower
    return (width / 2, width) if math.isfinite(width) else (math.inf, math.inf)


@dataclass(frozen=True)
class VariationSpec:
    """Variations of card parameters: at most one entry per parameter and kind (two
    would stack unnoticed), and one distribution per parameter (its D2D and C2C draws
    combine into one factor or one offset)."""

    variations: tuple[Variation, ...]
    #: two configurations of the cell, if any (the entries' ``mode_step``)
    mode: Mode | None = None
    #: the model whose parameters vary (default: the default card's)
    model: Model | None = field(default=None, compare=False, repr=False)
    #: runs of failed SETs, if any (:mod:`rram.episodes`)
    episodes: Episodes | None = None

    def __post_init__(self) -> None:
        if self.model is None:
            object.__setattr__(self, "model", _default_model())
        if self.episodes is not None:
            if not isinstance(self.episodes, Episodes):
                raise InputError(f"episodes: not an Episodes, got {self.episodes!r}")
            by_set = kinetic(self.model) | {p for p, e in held(self.model).items()
                                            if e == "set"}
            redrawn = sorted(v.parameter for v in self.of_kind("c2c") if v.parameter in by_set)
            if self.episodes.parameter not in redrawn:
                raise InputError(f"episodes: {self.episodes.parameter!r} is no parameter the "
                                 "spec redraws at each SET (valid: "
                                 + (", ".join(redrawn) or "none: add a c2c entry") + ")")
        stepped = [v.parameter for v in self.variations
                   if isinstance(v, Variation) and v.in_mode]
        if self.mode is not None and not isinstance(self.mode, Mode):
            raise InputError(f"mode: not a Mode, got {self.mode!r}")
        if stepped and self.mode is None:
            raise InputError(f"{', '.join(stepped)}: a mode_step or mode_scale needs the "
                             "spec's mode (share, memory)")
        if self.mode is not None and not stepped:
            raise InputError("mode: no entry has a mode_step or mode_scale (the upper "
                             "configuration would change nothing)")
        seen: dict[tuple[str, str], int] = {}
        first: dict[str, int] = {}
        for k, v in enumerate(self.variations):
            if not isinstance(v, Variation):
                raise InputError(f"variation {k}: not a Variation, got {v!r}")
            if (v.model or _default_model()) is not self.model:
                try:
                    v.check(self.model)
                except InputError as exc:
                    raise InputError(f"variation {k}: {exc}") from None
            if (v.parameter, v.kind) in seen:
                raise InputError(f"variations {seen[v.parameter, v.kind]} and {k}: two "
                                 f"{v.kind} entries for {v.parameter} (give one, with the "
                                 "combined sigma)")
            seen[v.parameter, v.kind] = k
            j = first.setdefault(v.parameter, k)
            w = self.variations[j]
            if w.distribution != v.distribution:
                raise InputError(f"variations {j} and {k}: {v.parameter} is {w.distribution} "
                                 f"({w.kind}) and {v.distribution} ({v.kind}); one parameter "
                                 "takes one distribution")

    @property
    def held(self) -> dict[str, str]:
        """The spec's model's parameters drawn by one operation, held through the next
        (:func:`held`)."""
        return held(self.model)

    def of_kind(self, kind: str) -> tuple[Variation, ...]:
        return tuple(v for v in self.variations if v.kind == kind)

    @property
    def parameters(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(v.parameter for v in self.variations))

    def total_sigma(self, parameter: str) -> tuple[str, float]:
        """(distribution, combined σ) of D2D and C2C entries of ``parameter``."""
        vs = [v for v in self.variations if v.parameter == parameter]
        dist = {v.distribution for v in vs}
        if len(dist) != 1:
            raise InputError(f"{parameter}: D2D and C2C must use the same distribution")
        return dist.pop(), math.sqrt(sum(v.sigma ** 2 for v in vs))

    def to_json(self) -> str:
        data: dict = {"variations": [v.as_dict() for v in self.variations]}
        if self.mode is not None:
            data["mode"] = asdict(self.mode)
        if self.episodes is not None:
            data["episodes"] = asdict(self.episodes)
        return json.dumps(data, indent=2) + "\n"

    @property
    def digest(self) -> str:
        """SHA-256 of the spec's entries and mode (:meth:`to_json`; metadata such as a
        fit's provenance is not part of it): the provenance of what a spec produced."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()

    @classmethod
    def from_json(cls, text: str, source: str = "variation spec",
                  model: Model | None = None) -> VariationSpec:
        """Parse ``{"variations": [{parameter, kind, distribution, sigma[, shift,
        desc, slow, memory, mode_step, mode_scale]}, ...][, "mode": {share, memory}][,
        "episodes": {share, length, parameter, step[, desc]}]}``
        (other top-level keys, such as a fit's provenance, are metadata); every problem
        names ``source`` and the entry."""
        data = parse_json(text, source)
        items = data.get("variations") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise InputError(f"{source}: not a variation spec (expected an object with a "
                             "'variations' list)")
        out = []
        for k, item in enumerate(items):
            try:
                if not isinstance(item, dict):
                    raise TypeError("not an object")
                out.append(Variation(**item, model=model))
            except (TypeError, InputError) as exc:
                raise InputError(f"{source}: variation {k}: {exc}") from None
        try:
            mode, episodes = (_optional(data, key, kind) for key, kind in
                              (("mode", Mode), ("episodes", Episodes)))
            return cls(tuple(out), mode, model, episodes)
        except InputError as exc:
            raise InputError(f"{source}: {exc}") from None


def _optional(data: dict, key: str, kind: type):
    """The spec's ``key`` object as a ``kind``, or None."""
    item = data.get(key)
    if item is None:
        return None
    if not isinstance(item, dict):
        raise InputError(f"{key}: not an object, got {item!r}")
    try:
        return kind(**item)
    except TypeError as exc:
        raise InputError(f"{key}: {exc}") from None


def load_variation(path: str | Path, model: Model | None = None) -> VariationSpec:
    """A variation spec file of ``model``'s parameters (default: the default card's)."""
    return VariationSpec.from_json(read_text(path, "variation spec"), str(path), model)


def default_variation() -> VariationSpec:
    """The CF's heating, the gap and the barriers (``docs/model.md`` § Variation), with
    these sensitivities on the default card (1 kV/s loops, 100 µA, ±2 V):

    * CF heating → LRS: the compliance-limited SET stops at a CF temperature, so a CF
      that heats more (``kth``) stops wider: d ln R_LRS / d ln kth ≈ −0.46 (and the
      RESET of that CF starts 0.23 V per unit of ln kth earlier, as in measured devices
      whose R_LRS and |V_reset| correlate);
    * gap → HRS: d ln R_HRS / d(deh) ≈ −1.7 /eV (a lower hopping barrier opens a wider
      gap), which also raises the next V_set by 0.3 V/eV;
    * barriers → switching voltages: dV_set/d(dea) ≈ 0.7 V/eV, dV_reset/d(dei) ≈
      0.45 V/eV.

    ``kth`` is drawn by each SET and held through its RESET (the CF it formed), the
    barriers per operation.  ``rram mc --plots`` prints the resulting spreads.
    """
    V = Variation
    return VariationSpec((
        V("x0", "d2d", "normal", 0.1e-9, "initial gap of the formed device (m)"),
        V("kth", "d2d", "lognormal", 0.1, "CF thermal coupling per device: LRS"),
        V("kth", "c2c", "lognormal", 0.2, "CF thermal coupling of the CF each SET forms"),
        V("deh", "d2d", "normal", 0.05, "hopping barrier per device: gap, HRS (eV)"),
        V("deh", "c2c", "normal", 0.12, "hopping barrier per RESET: gap, HRS (eV)"),
        V("dea", "d2d", "normal", 0.03, "generation barrier per device: V_set (eV)"),
        V("dea", "c2c", "normal", 0.05, "generation barrier per SET: V_set (eV)"),
        V("dei", "d2d", "normal", 0.03, "release barrier per device: V_reset (eV)"),
        V("dei", "c2c", "normal", 0.05, "release barrier per RESET: V_reset (eV)"),
    ))


def corner_cards(spec: VariationSpec, n: int, seed: int, width: float = 4.0,
                 base: Card | None = None) -> list[Card]:
    """``n`` cards with every varied parameter uniform within ±``width``·σ of ``base``
    (clipped to its range): stress-testing convergence over the whole variation space."""
    base = base or default_card()
    rng = np.random.default_rng(seed)
    cards = []
    for _ in range(n):
        values = {}
        for name in spec.parameters:
            dist, sigma = spec.total_sigma(name)
            p = base.parameter(name)
            z = rng.uniform(-width, width)
            shift = sum(v.shift for v in spec.variations if v.parameter == name)
            v = base[name] * math.exp(shift + sigma * z) if dist == "lognormal" \
                else base[name] + shift + sigma * z
            values[name] = float(min(max(v, p.lower), p.upper))
        values["x0"] = min(values.get("x0", base["x0"]), base["l0"])
        cards.append(base.replace(**values))
    return cards


__all__ = ["DISTRIBUTIONS", "KINDS", "MAX_LN_SHIFT", "MAX_LN_SIGMA", "Episodes", "Mode",
           "Variation", "VariationSpec", "corner_cards", "default_variation", "held", "kinetic",
           "load_variation", "spread_limits"]

