"""Derivatives of a transient with respect to card and circuit parameters: forward
sensitivities integrated with the solution, their errors in the step control.

The lockstep engine (:mod:`rram.torch.transient`) carries, for each parameter θ, the
tangent S = dy/dθ of every lane's unknowns (the staggered direct method of CVODES).
After each converged BDF step the tangent solves the step's equation differentiated,

    (JF + a0·JQ)·S = −(∂F/∂θ + a0·∂(JQ)/∂θ·y + c1·dQ(y₁)/dθ + c2·dQ(y₂)/dθ),

with the step's own Jacobian (a linear solve, no Newton), the explicit derivatives
∂F/∂θ and ∂(JQ)/∂θ from the generated kernels in forward mode
(:mod:`torch.autograd.forward_ad`; each parameter is a copy of the lanes with one
tangent).  The tangents' local errors (predictor against corrector, as the solution's,
each scaled by its parameter's magnitude so that S·θ is tested in the units of y) join
the step control.  That matters: through the SET runaway the implicit step amplifies a
tangent by 1/(1 − hλ), not e^{hλ}, and with steps sized for the solution alone the
derivative of V_set came out 2× too large (2.74 against 1.39 V/eV by finite
differences of full runs).  The states' tangents are tested relatively and absolutely
(the states themselves absolutely: a gap is bounded by l0, its tangent is not).

The tangents of the samples, of the device current and of the crossing events
(``tcross``: V_set) come with the run: :func:`sensitivities`.

The tangents solve with the Jacobian equilibrated (:func:`_solve_equilibrated`): its
entries span ~40 decades, and unscaled the algebraic nodes' tangents were rounding
noise at the SET's runaway, which the error control answered with steps down to
``hmin``.

Limit: through a SET the tangents are not yet derivatives.  dV_set/dea converges
slowly with the tolerance (1.57 V/eV at the default rtol 1e-3, 1.43 at 1e-4, 1.398 at
1e-5, against 1.391 by central differences of full runs), and after a pristine cell's
first SET the CF width's tangent by j0 is +41 nm against −0.013 nm by differences
(a loop fit's Jacobian from it did not move the fit): during the runaway that tangent
peaks at 2.3e4 nm (the time shift of a fast transient, −ẇ·dt_SET/dθ) and what is left
after it is a residue of 0.2 % of the peak, where the true value is ~0.  Relative
tolerances cannot resolve that; the SET needs its time as an event with a jump
condition on the tangents.  :func:`sensitivities` therefore
refuses runs in which a device SETs unless asked (``through_set=True``).  Runs without
a SET (RESETs, reads, disturbs, retention) match their finite differences to ~1e-4.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.autograd.forward_ad as fwad

from ..engine.run import Options, SimResult, electrodes
from ..engine.run import simulate as _simulate
from ..errors import InputError, SimulationError
from ..model import Circuit
from . import _device
from .transient import DTYPE, _columns, _error, _Lanes, _predict, integrate_arrays


def _dual(primal: torch.Tensor, tangent: torch.Tensor) -> torch.Tensor:
    # torch loads its forward-mode decompositions on the first dual tensor through the
    # deprecated torch.jit.script (torch 2.13): its warning is torch's, not the caller's
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "`torch.jit.script` is deprecated",
                                DeprecationWarning)
        return fwad.make_dual(primal, tangent)


def _solve_equilibrated(J: torch.Tensor, rhs: torch.Tensor
                        ) -> tuple[torch.Tensor, torch.Tensor]:
    """J·x = rhs with J's rows and columns scaled to unit maxima first: the circuit's
    Jacobian spans ~40 decades (a CF conductance of 1e15 S/m beside a thermal row of
    1e25), where an unscaled LU leaves the algebraic nodes' tangents as rounding noise
    (the step control then rejects every step)."""
    rows = 1.0 / J.abs().amax(dim=-1, keepdim=True).clamp_min(1e-300)
    Jr = J * rows
    cols = 1.0 / Jr.abs().amax(dim=-2, keepdim=True).clamp_min(1e-300)
    z, info = torch.linalg.solve_ex(Jr * cols, (rhs[..., None] * rows))
    return z[..., 0] * cols[..., 0, :], info


class Tangents:
    """The forward sensitivities of a lockstep run by the parameter columns ``columns``
    of ``P`` (lanes, parameters): the hooks :func:`rram.torch.transient.integrate_arrays`
    calls (``start``, ``candidate``, ``accept``, ``pairs``), and what they leave
    (``out``: sampled tangents (lanes, samples, p, unknowns); ``di``: the current's;
    ``d_tcross``: the crossing times')."""

    def __init__(self, circuit: Circuit, P: torch.Tensor, columns: Sequence[int],
                 options: Options):
        lay = circuit.layout
        self.n, self.p = P.shape[0], len(columns)
        self.lanes = _Lanes(circuit, P)
        self.charges = _device.CHARGES[circuit.name]
        dev = P.device
        self.Pr = P.repeat_interleave(self.p, 0)
        self.tangent = torch.zeros_like(self.Pr)
        self.tangent[torch.arange(self.n * self.p, device=dev),
                     torch.tensor(list(columns) * self.n, device=dev)] = 1.0
        # S·|θ| is tested in the units of y (a parameter at 0: as if it were 1)
        theta = P[:, list(columns)].abs().reshape(-1)
        self.theta = torch.where(theta > 0, theta, 1.0)[:, None]
        atol, errkind, _ = options.arrays(lay)
        self.atol = torch.as_tensor(atol, dtype=DTYPE, device=dev)
        # the states' own test is absolute (a gap is bounded by l0); a tangent is not
        # bounded (the gap's by ea is ~1e6 nm/eV within the SET): relative and absolute
        self.errkind = torch.as_tensor(np.where(errkind == 2, 0, errkind), dtype=torch.long,
                                       device=dev)
        self.rtol, self.chgtol = options.rtol, options.chgtol
        self.d_tcross: torch.Tensor | None = None

    def _rep(self, x: torch.Tensor) -> torch.Tensor:
        return x.repeat_interleave(self.p, 0)

    def _lanes_view(self, S: torch.Tensor) -> torch.Tensor:
        """(lanes·p, m) → (lanes, p, m)."""
        return S.reshape(self.n, self.p, -1)

    def _explicit(self, y: torch.Tensor, u: torch.Tensor):
        """JF, JQ at ``y`` (lanes·p copies) and the explicit derivatives of F and of Q
        (at fixed y) by each parameter (lanes·p, m)."""
        _, _, JF, JQ = self.lanes(y, u)
        with fwad.dual_level():
            P = _dual(self.Pr, self.tangent)
            F, Q = self.charges(_columns(self._rep(y)), _columns(self._rep(u)), _columns(P))
            F, Q = fwad.unpack_dual(F), fwad.unpack_dual(Q)
        tangents = [x.tangent if x.tangent is not None else torch.zeros_like(x.primal)
                    for x in (F, Q)]
        return self._rep(JF), self._rep(JQ), tangents[0], tangents[1]

    def _current(self, y, u, S):
        with fwad.dual_level():
            P = _dual(self.Pr, self.tangent)
            current = fwad.unpack_dual(self.lanes.probe_fn(
                _columns(_dual(self._rep(y), S)), _columns(self._rep(u)),
                _columns(P)))
        tangent = current.tangent if current.tangent is not None else torch.zeros_like(
            current.primal)
        # the events follow |I|
        return (torch.sign(current.primal) * tangent).reshape(self.n, self.p)

    def start(self, y, u, frozen, nout):
        """The operating point's tangents (the held states' are zero)."""
        JF, JQ, Ft, Qt = self._explicit(y, u)
        eye = torch.eye(y.shape[1], dtype=DTYPE, device=y.device)
        J = torch.where(frozen[None, :, None], eye, JF)
        rhs = torch.where(frozen, 0.0, Ft)
        self.S, _ = _solve_equilibrated(J, -rhs)
        self.S1 = self.S2 = self.S
        self.Sq0 = self.Sq1 = Qt + (JQ @ self.S[..., None])[..., 0]
        self.Sc, self.qc = self.S, self.Sq0
        self.di = self._current(y, u, self.S)
        self.out = torch.full((self.n, nout, self.p, y.shape[1]), np.nan, dtype=DTYPE,
                              device=y.device)

    def candidate(self, yc, u, a0, c1, c2, npts, h, h1, h2, cerr) -> torch.Tensor:
        """The step's tangents at its converged ``yc``; their error estimate per lane
        (1 = at tolerance)."""
        JF, JQ, Ft, Qt = self._explicit(yc, u)
        a0r, c1r, c2r = (self._rep(x)[:, None] for x in (a0, c1, c2))
        rhs = Ft + a0r * Qt + c1r * self.Sq0 + c2r * self.Sq1
        Sc, info = _solve_equilibrated(JF + a0r[..., None] * JQ, -rhs)
        self.Sc = Sc
        self.qc = Qt + (JQ @ self.Sc[..., None])[..., 0]
        Sp = _predict(*(self._rep(x) for x in (npts, h, h1, h2)), self.S, self.S1, self.S2)
        err = _error(self.Sc * self.theta, Sp * self.theta, self.S * self.theta, JQ,
                     self.atol, self.errkind, self.chgtol, self.rtol, self._rep(cerr))
        err = torch.where((info == 0) & torch.isfinite(err), err, torch.inf)
        return err.reshape(self.n, self.p).max(dim=1).values

    def accept(self, accept, yc, u):
        """Move the accepted lanes' tangents on (and their current's)."""
        a = self._rep(accept)[:, None]
        self.S2 = torch.where(a, self.S1, self.S2)
        self.S1 = torch.where(a, self.S, self.S1)
        self.S = torch.where(a, self.Sc, self.S)
        self.Sq1 = torch.where(a, self.Sq0, self.Sq1)
        self.Sq0 = torch.where(a, self.qc, self.Sq0)
        self.di = torch.where(accept[:, None], self._current(yc, u, self.S), self.di)

    def pairs(self, stepped: bool):
        """(before, after, out) of the sampled tangents, (lanes, p, m) each."""
        return [(self._lanes_view(self.S), self._lanes_view(self.Sc if stepped else self.S),
                 self.out)]


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
                  device: torch.device | str | None = None,
                  through_set: bool = False) -> Sensitivities:
    """Run the lockstep engine (:func:`rram.torch.transient.simulate`'s arguments) with
    the forward sensitivities by ``parameters`` (card or circuit parameter names).
    A run in which a device SETs raises :class:`SimulationError` (its tangents are
    wrong, the module's limit) unless ``through_set``."""
    names = tuple(parameters)
    holder: dict = {}
    opts = options or Options()

    def integrate(circ, P, *args, **kwargs):
        lay = circ.layout
        unknown = [nm for nm in names if nm not in lay.parameters]
        if unknown or not names:
            raise InputError(f"parameters {', '.join(unknown) or '(none given)'}: give "
                             f"card or circuit parameters; valid: {', '.join(lay.parameters)}")
        holder["t"] = Tangents(circ, torch.as_tensor(np.array(P), dtype=DTYPE,
                                                     device=device),
                               [lay.column(nm) for nm in names], opts)
        return integrate_arrays(circ, P, *args, **kwargs, device=device,
                                tangents=holder["t"])

    res = _simulate(circuit, stimuli, cards=cards, circuit_params=circuit_params,
                    options=opts, integrate=integrate)
    res.raise_on_failure()  # tangents of a failed run are not derivatives of anything
    if not through_set:
        sets = [(d, k) for d, st in enumerate(res.stimuli)
                for k in np.flatnonzero(np.array(st.phases) == "set")
                if np.isfinite(res.events["tcross"][d, k])]
        if sets:
            d, k = sets[0]
            raise SimulationError(
                f"device {d} SETs in segment {k}: the tangents through a SET are not "
                "derivatives yet (issue 40: the CF width's by j0 comes out +41 nm against "
                "-0.013 nm by finite differences); differentiate runs without a SET, or "
                "pass through_set=True to get them anyway")
    tan = holder["t"]
    d_samples = tan.out.permute(0, 2, 1, 3).cpu().numpy()
    # the device current at the samples: br_ctop = (te − ti)/rtop, differentiated
    d_current = _current_tangents(res, d_samples, names)
    return Sensitivities(res, names, d_samples, d_current, tan.d_tcross.cpu().numpy())


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


__all__ = ["Sensitivities", "Tangents", "sensitivities"]
