"""A network's weights in simulated RRAM arrays: an MLP on the 8×8 digits, trained in
float, then read through 1R crossbars (issue 40).

The MLP (64 → 32 → 10, ReLU) is trained in float64 on 80 % of scikit-learn's digits
(seeded split, full-batch Adam).  Each layer is then an :class:`rram.torch.analog.
TiledLinear` on tiles of 64 inputs × 32 outputs (layer 1: one 64 × 64 array; layer 2:
one 32 × 20 array), its cells programmed by write-verify to their targets and read at
0.1 V through a 5-bit ADC per column (``engine="linear"``: each cell at its chord
conductance through the wires, the native sparse solver).  Test accuracy of:

* float: the trained network;
* ADC only: linear devices, ideal wires (the mapping and the quantisation);
* variation: cards drawn with the default D2D variation, a 30 % write-verify tolerance,
  near-ideal wires (ρ = 1e-14 Ω·m);
* wires: default copper-like lines (ρ = 50 nΩ·m), no variation;
* both;
* Gaussian noise: the ideal array with every conductance multiplied by 1 + N(0, σ),
  σ the relative spread of the programmed conductances of "both" against their
  targets (what a statistical device model of the same spread predicts);
* aware: the network fine-tuned with that Gaussian noise injected in its forward
  passes (straight-through), then read through the "both" hardware.

    python benchmarks/bench_analog_digits.py [--seed 0] [--verify 0.3] [--adc-bits 5]
                                             [--markdown] [--plot FILE]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np
import report
import torch
from sklearn.datasets import load_digits
from torch import nn

from rram.array import ArraySpec, Metal
from rram.array.cells import cell_parameters
from rram.array.read import chord_conductance
from rram.torch.analog import TiledLinear
from rram.variation import default_variation

TILE = (64, 32)
ADC_BITS = [5]  # set by --adc-bits
IDEAL_METAL = Metal(rho=1e-14)


def data(seed: int):
    x, y = load_digits(return_X_y=True)
    x = torch.tensor(x / 16.0)
    y = torch.tensor(y)
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))
    cut = int(0.8 * len(y))
    return x[order[:cut]], y[order[:cut]], x[order[cut:]], y[order[cut:]]


def mlp(seed: int) -> nn.Sequential:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)).double()


def train(net: nn.Module, x, y, epochs: int, noise: float = 0.0, seed: int = 0) -> None:
    """Full-batch Adam; ``noise``: each forward multiplies every weight by 1 + N(0, σ)
    (the conductance spread), its gradient passed straight through."""
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    for _ in range(epochs):
        opt.zero_grad()
        h = x
        for layer in net:
            if isinstance(layer, nn.Linear) and noise:
                w = layer.weight
                jitter = torch.randn(w.shape, generator=gen, dtype=w.dtype) * noise
                h = nn.functional.linear(h, w + (w * jitter).detach(), layer.bias)
            else:
                h = layer(h)
        nn.functional.cross_entropy(h, y).backward()
        opt.step()


def accuracy(layers, x, y) -> float:
    h = x
    for layer in layers:
        h = layer(h)
    return float((h.argmax(1) == y).double().mean())


def on_hardware(net: nn.Sequential, spec: ArraySpec | None, seed: int, **kw) -> list:
    """The network with its linear layers on arrays of ``spec`` (None: ideal)."""
    out = []
    for k, layer in enumerate(net):
        if isinstance(layer, nn.Linear):
            # inputs of layer 2 are ReLU outputs: scale them into the rows' range
            x_max = 1.0 if k == 0 else 8.0
            hw = dict(ideal=True, verify_tolerance=0.0) if spec is None else dict(spec=spec)
            out.append(TiledLinear(layer.weight, layer.bias, tile=TILE, seed=seed + 10 * k,
                                   engine="linear", x_max=x_max, adc_bits=ADC_BITS[0], **hw, **kw))
        else:
            out.append(layer)
    return out


def conductance_spread(layers) -> float:
    """Relative spread of the programmed cells' chord conductances against the
    mapping's targets (write-verify's residual, cells short of their target), over
    every tile's cells."""
    ratios = []
    for layer in layers:
        if isinstance(layer, TiledLinear):
            for t in layer.tiles:
                chord = chord_conductance(t.spec, t.states, t.v_read,
                                          params=cell_parameters(t.spec))
                ratios.append(chord / t.target.numpy().reshape(-1) - 1.0)
    return float(np.std(np.concatenate(ratios)))


def gaussian_layers(net: nn.Sequential, sigma: float, seed: int) -> list:
    """The ideal mapping with each conductance ×(1 + N(0, σ))."""
    layers = on_hardware(net, None, seed)
    gen = np.random.default_rng(seed)
    for layer in layers:
        if isinstance(layer, TiledLinear):
            for t in layer.tiles:
                noisy = t.conductance.numpy() * (1 + sigma * gen.standard_normal(
                    t.conductance.shape))
                t.conductance = torch.as_tensor(np.maximum(noisy, 0.0))
    return layers


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--adc-bits", type=int, default=5)
    ap.add_argument("--verify", type=float, default=0.3,
                    help="write-verify tolerance (relative) [default: 0.3, a fast and "
                         "loose program; 0.1 loses ~1 point]")
    ap.add_argument("--plot", default=None, help="write a bar chart of the accuracies here")
    report.add_option(ap)
    args = ap.parse_args()
    ADC_BITS[0] = args.adc_bits
    xtr, ytr, xte, yte = data(args.seed)
    net = mlp(args.seed)
    t0 = time.perf_counter()
    train(net, xtr, ytr, args.epochs)
    train_s = time.perf_counter() - t0
    wired = ArraySpec()
    varied = ArraySpec(variation=default_variation(), seed=args.seed,
                       row_metal=IDEAL_METAL, col_metal=IDEAL_METAL)
    both = replace(wired, variation=default_variation(), seed=args.seed)
    rows = [("float", accuracy(net, xte, yte), "")]
    with torch.no_grad():
        cases = {"ADC only": on_hardware(net, None, args.seed),
                 "variation": on_hardware(net, varied, args.seed, verify_tolerance=args.verify),
                 "wires": on_hardware(net, wired, args.seed, verify_tolerance=0.0),
                 "both": on_hardware(net, both, args.seed, verify_tolerance=args.verify)}
        sigma = conductance_spread(cases["both"])
        cases[f"Gaussian σ = {sigma:.3f}"] = gaussian_layers(net, sigma, args.seed)
        for name, layers in cases.items():
            t0 = time.perf_counter()
            acc = accuracy(layers, xte, yte)
            per = (time.perf_counter() - t0) / len(yte)
            rows.append((name, acc, f"{1e3 * per:.2f}"))
    aware = mlp(args.seed)
    aware.load_state_dict(net.state_dict())
    train(aware, xtr, ytr, args.epochs // 2, noise=sigma, seed=args.seed + 1)
    with torch.no_grad():
        rows.append(("aware, on both", accuracy(on_hardware(aware, both, args.seed,
                                                            verify_tolerance=args.verify),
                                                xte, yte), ""))
    table = [(name, f"{100 * acc:.1f}", ms) for name, acc, ms in rows]
    print(f"trained in {train_s:.1f} s; test set {len(yte)} digits")
    for r in table:
        print(f"{r[0]:28s} {r[1]:>6s} %  {r[2]:>8s}")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 3.2))
        ax.barh([r[0] for r in rows][::-1], [100 * r[1] for r in rows][::-1],
                color="tab:blue")
        ax.set_xlabel("test accuracy (%)")
        ax.set_xlim(min(100 * r[1] for r in rows) - 5, 100)
        ax.set_title("MLP 64-32-10 on the digits, weights in simulated 1R arrays")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120, metadata={"Software": None})
        print(f"wrote {args.plot}")
    if args.markdown:
        report.write(__file__, "A network's weights in simulated RRAM arrays",
                     "Test accuracy of an MLP (64-32-10) on scikit-learn's 8x8 digits, "
                     "trained in float and read through 1R crossbars of 64 x 32 tiles "
                     f"({args.adc_bits}-bit ADC, 0.1 V reads, write-verify tolerance "
                     f"{args.verify:g}), and the time per inference and digit",
                     [("", ("network", "accuracy (%)", "ms per digit"), table)])


if __name__ == "__main__":
    main()
