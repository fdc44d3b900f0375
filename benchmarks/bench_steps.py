"""Where a DC loop's step attempts go: the integrator's work per window of the loop.

The default study's loop (default card, compliance circuit, 0 → 2 V → 0 → −2 V → 0 at
1 kV/s, 100 µA), one device.  The loop is cut into windows by running it
again up to each window's end (a stop current, or the stimulus cut at a time) and taking
differences of the integrator's counters:

* SET approach: from the start until the current reaches 1 % of the compliance (the gap
  closes at an accelerating rate while the current is still small);
* SET runaway: from 1 % to 90 % of the compliance;
* the rest of the SET half cycle, the RESET ramp out and the RESET ramp back.

For each window: accepted steps, rejected steps, Newton residuals and Jacobians, and the
window's share of the loop's step attempts.  Cutting the stimulus adds a breakpoint at
the cut (one shortened step and a restart at first order), so a window's counts are good
to a few steps.  Issue #16 asks for ≈ 120–150 attempts per loop.

    python benchmarks/bench_steps.py [--markdown]
"""

from __future__ import annotations

import argparse

import numpy as np
import report


def truncated(st, t_end: float):
    """``st`` up to ``t_end`` (its breakpoints before it and the voltage at ``t_end``)."""
    from rram.engine.stimulus import Stimulus

    k = int(np.searchsorted(st.times, t_end))
    times = np.append(st.times[:k], t_end)
    return Stimulus(times, np.interp(times, st.times, st.volts), st.icc[:k], st.cycles[:k],
                    st.phases[:k], np.array([0.0, t_end]), st.v_gate)


def counters() -> list[tuple[str, np.ndarray]]:
    """(window end, cumulative counters [steps, rejected, residuals, Jacobians])."""
    from rram.engine.run import simulate
    from rram.engine.stimulus import dc_loops
    from rram.mc import MonteCarlo
    from rram.status import Stat

    proto = MonteCarlo(devices=1, cycles=1, seed=1).protocol
    st = dc_loops(proto.v_set, proto.v_reset, proto.rate)
    icc = float(st.icc[0])

    def run(stimulus, stop=None) -> np.ndarray:
        res = simulate(proto.circuit, stimulus, circuit_params=proto.circuit_params,
                       n_devices=1, record=False, stop_current=stop)
        s = res.stats[0]
        return np.array([s[Stat.STEPS], s[Stat.REJECTED], s[Stat.NEWTON], s[Stat.JAC]],
                        float)

    set_end, reset_mid = st.times[2], st.times[3]
    return [("SET approach (to 1 % of icc)", run(st, 0.01 * icc)),
            ("SET runaway (1 % to 90 % of icc)", run(st, 0.9 * icc)),
            ("rest of the SET half cycle", run(truncated(st, set_end))),
            ("RESET ramp out", run(truncated(st, reset_mid))),
            ("RESET ramp back", run(st))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    report.add_option(ap)
    args = ap.parse_args()
    rows = counters()
    total = rows[-1][1]
    print(f"{total[0] + total[1]:.0f} step attempts per loop ({total[0]:.0f} accepted), "
          f"{total[2]:.0f} residuals, {total[3]:.0f} Jacobians")
    print(f"{'window':34s} {'steps':>6s} {'rejected':>8s} {'residuals':>9s} "
          f"{'Jacobians':>9s} {'attempts %':>10s}")
    table = []
    prev = np.zeros(4)
    for label, c in rows:
        d = c - prev
        share = 100 * (d[0] + d[1]) / (total[0] + total[1])
        print(f"{label:34s} {d[0]:6.0f} {d[1]:8.0f} {d[2]:9.0f} {d[3]:9.0f} {share:10.1f}")
        table.append([label, *(f"{x:.0f}" for x in d), f"{share:.1f}"])
        prev = c
    if args.markdown:
        table.append(["whole loop", *(f"{x:.0f}" for x in total), "100.0"])
        report.write(__file__, "Step attempts of one DC loop, by window",
                     "The Python engine's integrator counters per window of the default "
                     "study's DC loop (default card, compliance circuit, one device)",
                     [("", ["window", "accepted steps", "rejected steps", "residuals",
                            "Jacobians", "share of attempts (%)"], table)])


if __name__ == "__main__":
    main()
