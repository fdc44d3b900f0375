"""Accuracy of the SoA engine on Monte Carlo devices: V_set, V_reset, R_LRS, R_HRS against
the tight-tolerance reference, against the per-device engine, and with its tolerances
halved (issue #16: within 0.5 % of the reference, halving moves them by at most 0.5 %).

    python benchmarks/accuracy_soa.py [--devices 1000] [--seed 11]

Devices: device-to-device draws of the default variation spec (initial states at their
defaults), one default DC loop each.
"""

from __future__ import annotations

import argparse

import numpy as np

COLS = ["v_set_V", "v_reset_V", "r_lrs_ohm", "r_hrs_ohm"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    from rram.analysis import loop_metrics
    from rram.card import default_card
    from rram.engine.run import Options, simulate
    from rram.engine.stimulus import dc_loops
    from rram.mc.draws import draw_d2d
    from rram.variation import default_variation

    base = default_card()
    n = args.devices
    vals = draw_d2d(default_variation(), base, args.seed, range(n))
    vals = {p: v for p, v in vals.items() if p not in ("x0", "w0")}
    cards = [base.replace(**{p: float(v[i]) for p, v in vals.items()}) for i in range(n)]

    def metrics(opts: Options) -> np.ndarray:
        res = simulate("compliance", dc_loops(cycles=1), cards=cards, options=opts,
                       record=False)
        return loop_metrics(res)[COLS].to_numpy()

    soa = metrics(Options(engine="soa"))
    half = metrics(Options(engine="soa", rtol=5e-4, atol_nm=1.5e-4, atol_k=0.5,
                           chgtol=5e-16, hfrac=0.05))
    dev = metrics(Options())
    ref = metrics(Options.tight())
    print(f"{n} devices; max |relative difference| of {', '.join(COLS)}")
    for name, ratio in (("soa vs tight", soa / ref), ("device vs tight", dev / ref),
                        ("soa vs device", soa / dev), ("soa halved tol vs soa", half / soa)):
        d = np.abs(ratio - 1.0)
        print(f"{name:22s} " + " ".join(f"{x:8.2e}" for x in np.nanmax(d, axis=0))
              + f"  ({np.isfinite(d).all(axis=1).sum()} devices with all four)")


if __name__ == "__main__":
    main()
