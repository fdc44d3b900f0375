"""Static equivalence: at random (V, x, w, T, card) points the three renderings give the
same terminal currents and state rates.

Every node of the model (ports and internal nodes, rendered as ports of a probe variant)
is forced by a voltage source in one ``.op``; the current each source supplies is the sum
of the model's flows out of that node: the terminal currents, the internal KCL residuals
and, on the state nodes, the rates (nm/s) and the heat balance.  Python evaluates the
same sums from the generated numpy kernels.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rram import _kernels as K
from rram.card import default_card
from rram.errors import CardError
from rram.model import GROUND, MODEL
from rram.netlist import temperature_line
from rram.printers.format import format_number
from rram.printers.spice_printer import render_subckt
from rram.printers.veriloga_printer import render_module
from rram.spice import models
from rram.spice.ngspice import NgspiceSession

N_POINTS = 240
RELATIVE = 1e-6
#: Absolute floors: 1e-18 A on electrical nodes, 1e-12 nm/s (or K) on state nodes.
FLOORS = {"electrical": 1e-18, "state": 1e-12}
NODES = MODEL.node_names
INTERNAL = tuple(n.name for n in MODEL.nodes)
INSTANCE = [p.name for p in MODEL.parameters if p.kind == "instance"]


def random_card(rng: np.random.Generator):
    """A card drawn within every parameter's range (log-uniform over wide ranges)."""
    while True:
        values = {}
        for p in MODEL.parameters:
            if p.kind == "environment":
                values[p.name] = p.default  # one deck, one temperature
            elif p.choices:
                values[p.name] = float(rng.choice(p.choices))
            elif p.lower > 0 and p.upper / p.lower > 100:
                values[p.name] = math.exp(rng.uniform(math.log(p.lower), math.log(p.upper)))
            else:
                values[p.name] = float(rng.uniform(p.lower, p.upper))
        try:
            return default_card().replace(**values)
        except CardError:
            continue  # a cross-parameter constraint (x0 <= l0, ...): draw again


def random_points(n: int, seed: int = 20261130, beyond: float = 0.0):
    """Points with the states in their physical ranges, or with x and w up to ``beyond``
    nm outside them and T from 100·``beyond`` K below ambient to 1000·``beyond`` K above
    1500 K, where the guards saturate (a Newton iterate's values)."""
    rng = np.random.default_rng(seed)
    points = []
    for _ in range(n):
        card = random_card(rng)
        v = rng.uniform(-3, 3)
        x = rng.uniform(-beyond, card["l0"] / 1e-9 + beyond)
        if beyond and len(points) % 3 < 2:  # a third below the gap's range, a third above
            side = len(points) % 3
            x = -rng.uniform(0, beyond) if side == 0 else card["l0"] / 1e-9 + rng.uniform(
                0, beyond)
        w = rng.uniform(card["wmin"] / 1e-9 - beyond, card["wcf"] / 1e-9 + beyond)
        t = rng.uniform(card["tamb"] - 100.0 * beyond, 1500.0 + 1000.0 * beyond)
        ti, bi = v * rng.uniform(0.9, 1.0), v * rng.uniform(0.0, 0.05)
        tip = bi + (ti - bi) * rng.uniform(0, 1)
        nodes = {"te": v, "be": 0.0, "ti": ti, "bi": bi, "tip": tip,
                 "dgap": x - card["x0"] / 1e-9, "dwidth": w - card["w0"] / 1e-9,
                 "dtemp": t - card["tamb"]}
        points.append((card, np.array([nodes[k] for k in NODES])))
    return points


def python_sums(card, nodes):
    """(node sums of flows out of each node, scale of the terms at each node)."""
    p = np.array([card.values[q.name] for q in MODEL.parameters])
    flows = np.array(K.device_flows(nodes, p), float)
    sums, scale = np.zeros(len(NODES)), np.zeros(len(NODES))
    for b, f in zip(MODEL.branches, flows, strict=True):
        for node, sign in ((b.p, 1.0), (b.n, -1.0)):
            if node != GROUND:
                sums[NODES.index(node)] += sign * f
                scale[NODES.index(node)] += abs(f)
    return sums, scale


def deck(points, kind: str, osdi_path: str | None = None) -> str:
    # the cards' ambient (the environment, one for every point) is the deck's .temp
    lines = ["* static probe", ".options klu", *temperature_line(card for card, _ in points)]
    if kind == "subckt":
        lines += render_subckt(MODEL, name="rram_probe", expose=INTERNAL).splitlines()
    for i, (card, nodes) in enumerate(points):
        names = [f"{n}_{i}" for n in NODES]
        for name, value in zip(names, nodes, strict=True):
            lines.append(f"V{name} {name} 0 {format_number(float(value))}")
        vals = {k: format_number(v) for k, v in card.values.items()}
        if kind == "subckt":
            lines.append(f"Xp{i} {' '.join(names)} rram_probe "
                         + " ".join(f"{k}={v}" for k, v in vals.items()))
        else:
            lines.append(f".model pm{i} rram_probe " + " ".join(
                f"{k}={v}" for k, v in vals.items() if k not in INSTANCE))
            lines.append(f"Np{i} {' '.join(names)} pm{i} "
                         + " ".join(f"{k}={vals[k]}" for k in INSTANCE))
    lines += [".op", ".end"]
    return "\n".join(lines) + "\n"


def spice_sums(points, kind: str) -> np.ndarray:
    session = NgspiceSession.get()
    if kind == "osdi":
        src = models._cached(render_module(MODEL, name="rram_probe", expose=INTERNAL),
                             "_rram_probe.va")
        session.load_osdi(models.compile_osdi(src))
    run = session.run(deck(points, kind))
    out = np.zeros((len(points), len(NODES)))
    for i in range(len(points)):
        for k, n in enumerate(NODES):
            # i(V) flows into the source's + terminal, i.e. out of the model at that node
            out[i, k] = -run.vectors[f"i(v{n}_{i})"][0]
    return out


@pytest.fixture(scope="module")
def points():
    return random_points(N_POINTS)


def assert_agree(points, kind: str) -> float:
    """Assert the simulator's node sums match Python's at ``points``; the worst relative
    difference."""
    got = spice_sums(points, kind)
    worst = 0.0
    for i, (card, nodes) in enumerate(points):
        want, scale = python_sums(card, nodes)
        for k, node in enumerate(NODES):
            floor = FLOORS["state" if node in ("dgap", "dwidth", "dtemp") else "electrical"]
            err = abs(got[i, k] - want[k])
            tol = RELATIVE * scale[k] + floor
            assert err <= tol, (
                f"{kind} point {i} node {node}: {got[i, k]:.9g} vs python {want[k]:.9g} "
                f"(terms {scale[k]:.3g})\n{card.values}")
            worst = max(worst, err / (scale[k] + floor))
    return worst


@pytest.mark.parametrize("kind", ["subckt", "osdi"])
def test_node_currents_and_rates_agree_with_python(points, kind):
    worst = assert_agree(points, kind)
    print(f"{kind}: worst relative difference {worst:.2e} over {len(points)} points")


def test_points_span_the_ranges(points):
    xs = [c["x0"] / 1e-9 + n[NODES.index("dgap")] for c, n in points]
    assert len(points) >= 200 and min(xs) < 0.3 and max(xs) > 2.0


@pytest.mark.parametrize("kind", ["subckt", "osdi"])
def test_guarded_states_agree_beyond_their_ranges(kind):
    """States outside their ranges, where the soft clips saturate (the subcircuit renders
    them with a fast path inside the range and the full softplus near and beyond it)."""
    points = random_points(60, seed=7, beyond=2.0)
    # some gaps beyond their guards (xguard ≤ 1 nm) on both sides
    gaps = [c["x0"] + n[NODES.index("dgap")] * 1e-9 for c, n in points]
    past = [(x - np.clip(x, 0.0, c["l0"])) / 1e-9 for x, (c, _) in zip(gaps, points, strict=True)]
    assert min(past) < -1.0 and max(past) > 1.0
    worst = assert_agree(points, kind)
    print(f"{kind}: worst relative difference {worst:.2e} beyond the ranges")
