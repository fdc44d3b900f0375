"""Reproducible draws of the varied parameters: counter-based streams.

Every draw comes from its own stream, ``SeedSequence(seed, spawn_key=(device, cycle,
event))``: device-to-device values from ``(device, 0, 0)``, cycle-to-cycle values of a
SET from ``(device, cycle + 1, 1)`` and of a RESET from ``(device, cycle + 1, 2)``.  A
sample therefore depends only on the seed and its own indices, never on chunking, worker
count or engine, and any device or cycle can be redrawn alone.

The slow parts of C2C entries (``slow``, ``memory``: :mod:`rram.variation`) follow one
AR(1) path per device and entry whose innovation at cycle k comes from
``(device, k + 1, 3)``: the path at cycle k depends on the device's cycles 0..k only,
so it too is the same for any chunking (:func:`slow_paths` computes it for all cycles at
once; a single cycle alone costs k draws).  The spec's configuration (two
configurations, :class:`rram.variation.Mode`) is a two-state Markov chain per device
whose uniform at cycle k comes from ``(device, k + 1, 4)``, and so is its SET-failure
episodes' (:class:`rram.episodes.Episodes`), from ``(device, k + 1, 7)``.  The traps a read after a
SET or a RESET of cycle k meets (read noise, :mod:`rram.noise`) come from ``(device,
k + 1, 5)`` and ``(device, k + 1, 6)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..episodes import Episodes
from ..errors import InputError
from ..params import Parameter
from ..variation import Mode, Variation, VariationSpec

EVENTS = {"d2d": 0, "set": 1, "reset": 2, "slow": 3, "mode": 4, "read_set": 5,
          "read_reset": 6, "episode": 7}
#: Redraws before a truncated distribution gives up (a spec whose σ dwarfs the range).
MAX_REDRAWS = 1000
#: Redraws of the fast part of an entry with a slow part before it is held at its bound.
SLOW_REDRAWS = 100


def _stream(seed: int, device: int, cycle: int, event: str) -> np.random.Generator:
    key = (int(device), 0 if event == "d2d" else int(cycle) + 1, EVENTS[event])
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(int(seed), spawn_key=key)))


# numpy's SeedSequence and PCG64 seeding, vectorised over keys (bit for bit the same
# states: tests/test_draws.py compares them): creating one Generator per key cost ~60 µs,
# most of a 128 x 128 array's draw.
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = np.uint32(0xCA01F9DD), np.uint32(0x4973F715)
_PCG_MULT = (2549297995355413924 << 64) | 4865540595714422341
_M128 = (1 << 128) - 1
_WORD = 1 << 32


def _words(n: int) -> list[int]:
    """SeedSequence's uint32 words of a non-negative integer (least significant first)."""
    out = [n & 0xFFFFFFFF]
    while n >= _WORD:
        n >>= 32
        out.append(n & 0xFFFFFFFF)
    return out


def _pcg_states(seed: int, keys: np.ndarray) -> np.ndarray:
    """``SeedSequence(seed, spawn_key=k).generate_state(4, uint64)`` of every row k of
    ``keys`` (uint32 words, one per key element)."""
    n = keys.shape[0]
    run = _words(int(seed))
    run += [0] * (4 - len(run))
    entropy = np.concatenate([np.tile(np.array(run, np.uint32), (n, 1)),
                              keys.astype(np.uint32)], axis=1)
    u = np.uint32
    h = [_INIT_A]

    def hashmix(v: np.ndarray) -> np.ndarray:
        v = v ^ u(h[0])
        h[0] = (h[0] * _MULT_A) & 0xFFFFFFFF
        v = v * u(h[0])
        return v ^ (v >> u(16))

    def mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        r = _MIX_L * x - _MIX_R * y
        return r ^ (r >> u(16))

    with np.errstate(over="ignore"):
        pool = [hashmix(entropy[:, i]) for i in range(4)]
        for a in range(4):
            for b in range(4):
                if a != b:
                    pool[b] = mix(pool[b], hashmix(pool[a]))
        for a in range(4, entropy.shape[1]):
            for b in range(4):
                pool[b] = mix(pool[b], hashmix(entropy[:, a]))
        hb, out = _INIT_B, []
        for i in range(8):
            v = pool[i % 4] ^ u(hb)
            hb = (hb * _MULT_B) & 0xFFFFFFFF
            v = v * u(hb)
            out.append(v ^ (v >> u(16)))
    return np.ascontiguousarray(np.stack(out, axis=1).astype("<u4")).view("<u8")


def _generators(seed: int, devices: Sequence[int], cycle: int, event: str):
    """For each device, its :func:`_stream` (one Generator, re-seeded in turn: use each
    before asking for the next)."""
    key = (0 if event == "d2d" else int(cycle) + 1, EVENTS[event])
    if max(key) >= _WORD or any(int(d) >= _WORD for d in devices):
        for d in devices:  # beyond one word per key element: numpy itself
            yield _stream(seed, d, cycle, event)
        return
    keys = np.empty((len(devices), 3), np.uint32)
    keys[:, 0] = np.asarray(devices, np.int64)
    keys[:, 1:] = key
    bitgen = np.random.PCG64(0)
    rng = np.random.Generator(bitgen)
    for v in _pcg_states(seed, keys):
        s, i = (int(v[0]) << 64) | int(v[1]), (int(v[2]) << 64) | int(v[3])
        inc = ((i << 1) | 1) & _M128
        state = ((inc + s) * _PCG_MULT + inc) & _M128  # pcg_setseq_128_srandom_r
        bitgen.state = {"bit_generator": "PCG64", "state": {"state": state, "inc": inc},
                        "has_uint32": 0, "uinteger": 0}
        yield rng


def read_streams(seed: int, devices: Sequence[int], cycle: int, event: str):
    """Each device's stream for the read after ``event`` (``set``/``reset``) of
    ``cycle``: one Generator, re-seeded in turn (use each before asking for the next)."""
    _check_seed(seed)
    return _generators(seed, devices, cycle, f"read_{event}")


def _mix(z, u, share):
    """The normal of an entry from its fast part ``z`` and slow path ``u`` (scalars or
    arrays): its variance stays 1."""
    return np.sqrt(1.0 - share) * z + np.sqrt(share) * u


def _apply(v: Variation, base: float, z: float, u: float = 0.0, upper: bool = False
           ) -> float:
    """The value of ``v`` at its fast normal ``z``, slow-path value ``u`` and
    configuration (``upper``)."""
    centre, sigma = float(v.centre(upper)), float(v.spread(upper))
    if v.slow:
        z = float(_mix(z, u, v.slow))
    if v.distribution == "lognormal":
        # numpy's exp, as the vectorised draws: math.exp differs in the last bit
        return float(base * np.exp(centre + sigma * z))
    return base + centre + sigma * z


def _truncated(v: Variation, p: Parameter, base: float, rng: np.random.Generator,
               u: float = 0.0, upper: bool = False) -> float:
    """A draw of ``v`` within the parameter's range (the fast part redrawn; ``u``, the
    slow path, is the device's: where it has wandered beyond the reach of the fast part,
    the parameter is held at the bound of its range)."""
    for _ in range(SLOW_REDRAWS if v.slow else MAX_REDRAWS):
        value = _apply(v, base, float(rng.standard_normal()), u, upper)
        if p.lower <= value <= p.upper:
            return value
    if v.slow:
        return min(max(value, p.lower), p.upper)
    raise InputError(f"variation of {v.parameter}: σ = {v.sigma:g} cannot be drawn within "
                     f"[{p.lower:g}, {p.upper:g}] around {base:g}")


def slow_paths(spec: VariationSpec, seed: int, devices: Sequence[int], cycles: int
               ) -> np.ndarray:
    """The slow paths u (devices × cycles × (C2C entries + 2), in
    :meth:`VariationSpec.of_kind` order, 0 for an entry without a slow part): u_0
    standard normal, then u_k = φ·u_(k−1) + √(1 − φ²)·η_k, so every u_k is standard
    normal; then the spec's configuration, 1 in the upper one (always 0 without a
    mode); last 1 inside a SET-failure episode (always 0 without episodes)."""
    _check_seed(seed)
    c2c = spec.of_kind("c2c")
    out = np.zeros((len(devices), int(cycles), len(c2c) + 2))
    slow = [k for k, v in enumerate(c2c) if v.slow]
    if slow and cycles:
        phi = np.array([c2c[k].phi for k in slow])
        eta = np.empty((len(devices), len(slow)))
        for cycle in range(int(cycles)):
            for i, rng in enumerate(_generators(seed, devices, cycle, "slow")):
                eta[i] = rng.standard_normal(len(slow))
            out[:, cycle, slow] = eta if cycle == 0 else \
                phi * out[:, cycle - 1, slow] + np.sqrt(1.0 - phi**2) * eta
    for k, (chain, event) in enumerate(((spec.mode, "mode"), (spec.episodes, "episode"))):
        if chain is not None and cycles:
            _two_states(out[:, :, len(c2c) + k], chain, event, seed, devices)
    return out


def _two_states(out: np.ndarray, chain: Mode | Episodes, event: str, seed: int,
                devices: Sequence[int]) -> None:
    """Each device's state over the cycles (devices × cycles, 1: in the spec's upper
    configuration, or in an episode) into ``out``: stationary at cycle 0, then a
    two-state Markov chain (``chain.rates``: leave, enter), one uniform per device and
    cycle from the ``event`` streams."""
    leave, enter = chain.rates
    u = np.empty(len(devices))
    for cycle in range(out.shape[1]):
        for i, rng in enumerate(_generators(seed, devices, cycle, event)):
            u[i] = rng.random()
        if cycle == 0:
            out[:, 0] = u < chain.share
        else:
            upper = out[:, cycle - 1] > 0.5
            out[:, cycle] = np.where(upper, u >= leave, u < enter)


def _apply_all(vs: Sequence[Variation], params: dict[str, Parameter],
               out: dict[str, np.ndarray], seed: int,
               devices: Sequence[int], cycle: int, event: str,
               slow: np.ndarray | None = None, upper: np.ndarray | None = None) -> None:
    """Apply the variations ``vs`` (one per parameter, in order) to ``out`` in place: the
    same values as :func:`_truncated` one device and one variation at a time, computed
    for all devices at once from their first ``len(vs)`` normals; a device with a draw
    outside its range is redrawn one at a time from its own stream.  ``slow``: the
    devices' slow-path values of ``vs`` (devices × len(vs)), if any has a slow part;
    ``upper``: whether each device is in the upper configuration (the spec's mode)."""
    z = np.empty((len(devices), len(vs)))
    for i, rng in enumerate(_generators(seed, devices, cycle, event)):
        z[i] = rng.standard_normal(len(vs))
    if slow is not None:
        z = _mix(z, slow, np.array([v.slow for v in vs]))
    redraw = np.zeros(len(devices), bool)
    drawn = []
    for k, v in enumerate(vs):
        base = out[v.parameter]
        centre, sigma = (v.centre(upper), v.spread(upper)) if upper is not None \
            else (v.shift, v.sigma)
        if v.distribution == "lognormal":
            value = base * np.exp(centre + sigma * z[:, k])
        else:
            value = base + centre + sigma * z[:, k]
        p = params[v.parameter]
        redraw |= ~((p.lower <= value) & (value <= p.upper))
        drawn.append(value)
    for v, value in zip(vs, drawn, strict=True):
        out[v.parameter][~redraw] = value[~redraw]
    for i in np.flatnonzero(redraw):
        rng = _stream(seed, devices[i], cycle, event)
        for k, v in enumerate(vs):
            u = 0.0 if slow is None else float(slow[i, k])
            up = False if upper is None else bool(upper[i])
            out[v.parameter][i] = _truncated(v, params[v.parameter], out[v.parameter][i],
                                             rng, u, up)


def _check_seed(seed: int) -> None:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed must be a non-negative integer, got {seed!r}")


def draw_d2d(spec: VariationSpec, base: dict[str, float], seed: int,
             devices: Sequence[int]) -> dict[str, np.ndarray]:
    """Every varied parameter of ``devices`` with only its D2D draw applied (the same for
    all of a device's cycles: compute once, pass to :func:`draw` as ``d2d``)."""
    _check_seed(seed)
    out = {name: np.full(len(devices), float(base[name])) for name in spec.parameters}
    d2d = spec.of_kind("d2d")
    if d2d:
        _apply_all(d2d, spec.model.by_name, out, seed, devices, 0, "d2d")
    return out


def draw(spec: VariationSpec, base: dict[str, float], seed: int, devices: Sequence[int],
         cycle: int, event: str, d2d: dict[str, np.ndarray] | None = None,
         slow: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Parameter values in effect for ``devices`` during ``event`` (``set``/``reset``) of
    ``cycle``: the base value with the device's D2D draw, then the event's C2C draw.
    ``d2d``: the devices' :func:`draw_d2d` values, if already drawn; ``slow``: their
    :func:`slow_paths` at ``cycle`` (devices × (C2C entries + 1)), if already computed."""
    _check_seed(seed)
    out = {k: np.array(v, float) for k, v in (
        d2d if d2d is not None else draw_d2d(spec, base, seed, devices)).items()}
    c2c = spec.of_kind("c2c")
    if not any(v.slow for v in c2c) and spec.mode is None and spec.episodes is None:
        slow = None
    elif slow is None:
        slow = slow_paths(spec, seed, devices, cycle + 1)[:, cycle]
    upper = None if spec.mode is None else slow[:, len(c2c)] > 0.5
    raising = spec.episodes is not None and event == "set"
    # the devices' own (D2D) value of the raised parameter, before the C2C draw
    device = out[spec.episodes.parameter].copy() if raising else None
    if c2c:
        _apply_all(c2c, spec.model.by_name, out, seed, devices, cycle, event,
                   None if slow is None else slow[:, :len(c2c)], upper)
    if raising:
        _raise_in_episodes(out, device, spec, slow[:, len(c2c) + 1] > 0.5)
    return out


def _raise_in_episodes(out: dict[str, np.ndarray], device: np.ndarray,
                       spec: VariationSpec, inside: np.ndarray) -> None:
    """The SETs of the devices ``inside`` an episode draw the episodes' parameter at the
    device's own value and the C2C entry's centre, raised by the step (no C2C scatter:
    an episode is a state of its own; a factor e^(shift + step) for a lognormal
    parameter; within its range)."""
    ep = spec.episodes
    p = spec.model.by_name[ep.parameter]
    (entry,) = [v for v in spec.of_kind("c2c") if v.parameter == ep.parameter]
    raised = device * np.exp(entry.shift + ep.step) if entry.distribution == "lognormal" \
        else device + entry.shift + ep.step
    out[ep.parameter] = np.where(inside, np.clip(raised, p.lower, p.upper),
                                 out[ep.parameter])
