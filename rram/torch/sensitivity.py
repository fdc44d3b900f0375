"""Derivatives of a transient with respect to card and circuit parameters: the
derivative of the whole adaptive integration.

The lockstep engine (:func:`rram.torch.transient.integrate_tensors`) runs with the card
tensor carrying a forward-mode tangent per parameter (each parameter a copy of the
lanes), so every quantity it computes carries its derivative: the solution, the step
sizes the error control chooses from it, the rejections, the samples interpolated on
the output grid and the event times.  Newton's iterations run on the primals; each
converged step takes its tangent from the implicit function theorem (one linear solve
with the step's Jacobian; the explicit derivative of the kernels along the
parameters', inputs' and BDF coefficients' tangents by central differences,
:func:`rram.torch.dual.central_jvp`).  The result is the derivative of the integration
as run — what central differences of full runs give — with one exception: the step
control's own derivative is capped (:data:`rram.torch.transient.GRID_RATE`).

Why the step control is differentiated: the SET is a runaway, a fast transient whose
time moves with the parameters.  On a frozen time grid (the staggered direct method of
CVODES, this module's first version) the tangents differentiate the discretisation
error of a runaway sliding across the grid: dV_set/dea came out 1.57 V/eV at rtol 1e-3
(1.43 at 1e-4) against 1.3911 by central differences of full runs, and the CF width a
forming SET leaves had a derivative by j0 of +41 nm against −0.53.  Through the runaway
the control sits at its fixed point, and its derivative moves the grid with the
runaway, as happens between two full runs.  Why the cap: at a knee (the compliance's
release) the control answers the knee's position within a step; uncapped, the grid's
time derivative random-walked to 0.7 s/eV and the width's derivative came out 30 % off.

The tangents of the samples, of the device current and of the crossing events
(``tcross``: V_set) come with the run: :func:`sensitivities`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.autograd.forward_ad as fwad

from ..engine.run import Options, SimResult, electrodes
from ..engine.run import simulate as _simulate
from ..errors import InputError
from .dual import dual, primal, tangent
from .transient import DTYPE, integrate_tensors


@dataclass(frozen=True)
class Sensitivities:
    """A run and the derivatives of its outputs by ``parameters`` (per SI unit of each):
    ``d_samples`` (devices, parameters, samples, unknowns of the result's layout) of the
    sampled unknowns, ``d_current`` (devices, parameters, samples) of the device current
    (A) at the samples, and of each stimulus segment's first crossing of its current
    threshold (``tcross``, the event V_set is read from) ``d_tcross`` (devices,
    segments, parameters)."""

    result: SimResult
    parameters: tuple[str, ...]
    d_samples: np.ndarray
    d_current: np.ndarray
    d_tcross: np.ndarray

    def v_set(self, cycle: int = -1) -> tuple[np.ndarray, np.ndarray]:
        """(V_set (V), dV_set/dθ (devices, parameters)) of ``cycle``'s SET (the first
        crossing of half the compliance in its SET segments; NaN where none)."""
        res = self.result
        out, d_out = [], []
        for d, st in enumerate(res.stimuli):
            cyc = np.unique(st.cycles)[cycle]
            segs = np.flatnonzero((np.array(st.phases) == "set") & (st.cycles == cyc))
            t = res.events["tcross"][d, segs]
            hit = np.flatnonzero(np.isfinite(t))
            if not hit.size:
                out.append(np.nan)
                d_out.append(np.full(len(self.parameters), np.nan))
                continue
            k = segs[hit[0]]
            rate = (st.volts[k + 1] - st.volts[k]) / (st.times[k + 1] - st.times[k])
            out.append(float(st.voltage(t[hit[0]])))
            d_out.append(rate * self.d_tcross[d, k])
        return np.array(out), np.array(d_out)


def sensitivities(circuit: str, stimuli, cards=None, parameters: Sequence[str] = (),
                  circuit_params: Mapping[str, object] | None = None,
                  options: Options | None = None, *,
                  device: torch.device | str | None = None) -> Sensitivities:
    """Run the lockstep engine (:func:`rram.torch.transient.simulate`'s arguments) with
    the derivatives of its results by ``parameters`` (card or circuit parameter names)."""
    names = tuple(parameters)
    holder: dict = {}
    opts = options or Options()

    def integrate(circ, P, TP, VP, ICC, VG, OUT, model, options=None, stop_current=None,
                  thresholds=None, gap_closed=None, progress=False):
        lay = circ.layout
        unknown = [nm for nm in names if nm not in lay.parameters]
        if unknown or not names:
            raise InputError(f"parameters {', '.join(unknown) or '(none given)'}: give "
                             f"card or circuit parameters; valid: {', '.join(lay.parameters)}")
        n, p = P.shape[0], len(names)

        def rep(a):  # each device's lanes: one copy per parameter
            return None if a is None else np.repeat(np.asarray(a), p, axis=0)

        seed = torch.zeros((n * p, P.shape[1]), dtype=DTYPE, device=device)
        seed[torch.arange(n * p, device=seed.device),
             torch.tensor([lay.column(nm) for nm in names] * n, device=seed.device)] = 1.0
        stops = None if stop_current is None else np.broadcast_to(
            np.asarray(stop_current, float), (n,))
        with fwad.dual_level():
            Pd = dual(torch.as_tensor(rep(P), dtype=DTYPE, device=device), seed)
            out = integrate_tensors(circ, Pd, rep(TP), rep(VP), rep(ICC), rep(VG), rep(OUT),
                                    model, options, rep(stops), rep(thresholds),
                                    rep(gap_closed), progress)
            out_y, status, stats, events = out
            first = slice(None, None, p)  # the primals are the same in every copy
            holder["d_samples"] = tangent(out_y).reshape(n, p, *out_y.shape[1:])
            holder["d_tcross"] = tangent(events["tcross"]).reshape(n, p, -1)
            return (primal(out_y)[first].cpu().numpy(), status[first].cpu().numpy(),
                    primal(stats)[first].cpu().numpy(),
                    {k: primal(v)[first].cpu().numpy() for k, v in events.items()})

    res = _simulate(circuit, stimuli, cards=cards, circuit_params=circuit_params,
                    options=opts, integrate=integrate)
    res.raise_on_failure()  # tangents of a failed run are not derivatives of anything
    # (devices, parameters, samples, unknowns); (devices, segments, parameters)
    d_samples = holder["d_samples"].cpu().numpy()
    d_tcross = holder["d_tcross"].permute(0, 2, 1).cpu().numpy()
    # the device current at the samples: br_ctop = (te − ti)/rtop, differentiated
    d_current = _current_tangents(res, d_samples, names)
    return Sensitivities(res, names, d_samples, d_current, d_tcross)


def _current_tangents(res: SimResult, d_samples: np.ndarray, names) -> np.ndarray:
    """d(device current at the samples)/dθ from the unknowns' tangents, as
    :meth:`SimResult.device_arrays` computes the current: (v_te − ti)/rtop, the top
    electrode from :func:`rram.engine.run.electrodes` (the applied voltage's tangent 0)."""
    lay, circ = res.layout, res.engine_circuit
    ti, mid = lay.unknown("ti"), lay.unknown("mid")
    out = np.zeros(d_samples.shape[:3])
    for d in range(d_samples.shape[0]):
        rtop = res.cards["rtop"][d]
        d_mid = d_samples[d, :, :, mid]
        dv_te, _ = electrodes(circ, np.zeros_like(d_mid), d_mid)
        out[d] = (dv_te - d_samples[d, :, :, ti]) / rtop
        if "rtop" in names:  # and its explicit part: −I/rtop
            current = res.device_arrays(d)["current_A"]
            out[d, names.index("rtop"), : current.size] -= current / rtop
    return out


__all__ = ["Sensitivities", "sensitivities"]
