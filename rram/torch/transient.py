"""The device transient in torch: the Python engine's integrator in lockstep, a device
per lane.

:mod:`rram.engine.integrator` integrates each device on its own (scalar code, one core
per device).  Here every device of a batch is a lane of the same tensors, and each round
every live lane attempts one step of its own size: the same variable-step BDF1/BDF2,
the same predictor, Milne error estimate, step-size rules (the integrator's constants:
:data:`~rram.engine.integrator.SAFETY`, :data:`~rram.engine.integrator.GROWTH_MIN`, ...),
breakpoints, operating point at t0 with the states held, and per-segment events
(:mod:`rram.events`), on the equations of the generated torch rendering
(:mod:`rram.torch._device`, the numba kernels' expressions).  A round's work is a few
hundred tensor operations whatever the number of lanes, so the engine pays off on wide
batches, and on a GPU, where the same code runs unchanged (``device="cuda"``).

The corrector is Newton's method with a fresh Jacobian every iteration and SPICE-style
limiting (the compiled engine reuses its factors while the iteration contracts; both
converge to the same tolerance).  Time and the states are float64 whatever the device.

:func:`simulate` returns the :class:`~rram.engine.run.SimResult` of the compiled engine
(:func:`rram.engine.run.simulate` with this integration), so every metric, table and
plot reads it unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ..engine import integrator as steps
from ..engine.newton import DC_STEP_TOL
from ..engine.run import Options, circuit_kind, gap_closure_threshold
from ..engine.run import simulate as _simulate
from ..errors import InputError
from ..events import DROP, DROP_FLOOR, SET_FRACTION
from ..model import Circuit, Model
from ..status import N_STATS, Stat, Status
from . import _device
from .dual import central_jvp, dual, has_tangent, implicit_solution, primal, tangent

DTYPE = torch.float64
#: The largest relative motion of a step (d ln h / d ln θ) the derivative of the step
#: control may take (:func:`integrate_tensors`).  Through the SET's runaway the control
#: sits at its fixed point and the grid moves with the runaway (|d ln h / d ln θ| ≲ 10,
#: measured); at a knee (the compliance's release) the control answers the knee's
#: position within a step, 6000 there, and the grid's time derivative random-walked to
#: 0.7 s/eV where the physics moves 1e-5: the CF width's derivative 30 % off.
GRID_RATE = 100.0


def _columns(x: torch.Tensor) -> list[torch.Tensor]:
    return list(x.T)


class _Lanes:
    """The circuit's kernels over every lane: (F, Q, JF, JQ) at ``y`` (lanes, m).  When
    the card tensor ``P`` or the arguments carry forward-mode tangents, the results
    carry their derivatives along them (:func:`rram.torch.dual.central_jvp`)."""

    def __init__(self, circuit: Circuit, P: torch.Tensor):
        if circuit.name not in _device.CIRCUITS:
            raise InputError(f"circuit {circuit.name!r} has no torch rendering; valid: "
                             + ", ".join(_device.CIRCUITS))
        self.evaluate, self.probe_fn, unknowns = _device.CIRCUITS[circuit.name]
        if unknowns != circuit.unknowns:
            raise InputError("the circuit's model is not the one rram/torch/_device.py was "
                             "generated from (run `rram generate`)")
        self.P = P
        self.p = _columns(P)
        self.differentiated = has_tangent(P)

    def _apply(self, fn, y: torch.Tensor, u: torch.Tensor):
        if self.differentiated or has_tangent(y) or has_tangent(u):
            # the unknowns and inputs (V, nm, K) at 1e-3 of their units at least
            return central_jvp(lambda y, u, P: fn(_columns(y), _columns(u), _columns(P)),
                               y, u, self.P, floors=(1e-3, 1e-3))
        return fn(_columns(y), _columns(u), self.p)

    def __call__(self, y: torch.Tensor, u: torch.Tensor):
        return self._apply(self.evaluate, y, u)

    def probe(self, y: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        return self._apply(self.probe_fn, y, u)


def _limit(dy: torch.Tensor, lim: torch.Tensor) -> torch.Tensor:
    """The factor (≤ 1) that keeps every unknown's change within its Newton limit."""
    ratio = lim / dy.abs().clamp_min(1e-300)
    return ratio.min(dim=1).values.clamp(max=1.0)


def operating_point(lanes: _Lanes, y: torch.Tensor, u: torch.Tensor, frozen: torch.Tensor,
                    atol: torch.Tensor, lim: torch.Tensor) -> torch.Tensor:
    """Newton on F(y) = 0 with the ``frozen`` unknowns held, every lane at once (in
    place); the lanes that converged (:func:`rram.engine.newton.newton_dc`'s test)."""
    eye = torch.eye(y.shape[1], dtype=y.dtype, device=y.device)
    done = torch.zeros(y.shape[0], dtype=torch.bool, device=y.device)
    failed = torch.zeros_like(done)
    for _ in range(steps.DC_MAX_ITERATIONS):
        F, _, JF, _ = lanes(y, u)
        J = torch.where(frozen[None, :, None], eye, JF)
        rhs = torch.where(frozen, 0.0, -F)
        dy, info = torch.linalg.solve_ex(J, rhs[..., None])
        dy = dy[..., 0]
        todo = ~done & ~failed
        ok = (info == 0) & torch.isfinite(dy).all(dim=1)
        failed |= todo & ~ok
        todo &= ok
        dy = torch.where(todo[:, None], dy, 0.0)
        scale = _limit(dy, lim)
        step = scale[:, None] * dy
        y += step
        wt = atol + steps.DC_RTOL * y.abs()
        err = (step.abs() / wt).max(dim=1).values
        done |= todo & (scale >= 1.0) & (err <= DC_STEP_TOL)
        if not bool((~done & ~failed).any()):
            break
    return done


def corrector(lanes: _Lanes, yc: torch.Tensor, u: torch.Tensor, a0: torch.Tensor,
              qhist: torch.Tensor, wt: torch.Tensor, lim: torch.Tensor, live: torch.Tensor
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Newton on F(y) + α₀·JQ·y + qhist = 0 from the predictor ``yc`` (in place): the
    lanes that converged, their residual evaluations, and JQ."""
    done = torch.zeros_like(live)
    failed = ~live
    evals = torch.zeros(yc.shape[0], dtype=torch.long, device=yc.device)
    JQ = None
    for _ in range(steps.NEWTON_MAX_EVALS):
        F, _, JF, JQ = lanes(yc, u)
        todo = ~done & ~failed
        evals += todo
        R = F + a0[:, None] * (JQ @ yc[..., None])[..., 0] + qhist
        dy, info = torch.linalg.solve_ex(JF + a0[:, None, None] * JQ, -R[..., None])
        dy = dy[..., 0]
        ok = (info == 0) & torch.isfinite(dy).all(dim=1)
        failed |= todo & ~ok
        todo &= ok
        dy = torch.where(todo[:, None], dy, 0.0)
        scale = _limit(dy, lim)
        yc += scale[:, None] * dy
        norm = (dy.abs() / wt).max(dim=1).values
        done |= todo & (scale >= 1.0) & (norm <= steps.NEWTON_TOL)
        if not bool((~done & ~failed).any()):
            break
    return done & live, evals, JQ


def step_shrink(err: torch.Tensor, newton_failed: torch.Tensor, order: torch.Tensor
                ) -> torch.Tensor:
    """:func:`rram.engine.integrator.step_shrink` over lanes."""
    e = steps.SAFETY * err.clamp_min(1e-300) ** (-1.0 / (order + 1))
    return torch.where(newton_failed, steps.NEWTON_FAILED_SHRINK, e.clamp_min(steps.GROWTH_MIN))


def step_growth(err, eprev, order, npts, h1, h2, held) -> torch.Tensor:
    """:func:`rram.engine.integrator.step_growth` over lanes."""
    safe = err.clamp_min(1e-300)
    e = steps.SAFETY * safe ** (-1.0 / (order + 1))
    fac = e.clamp(steps.GROWTH_MIN, steps.GROWTH_MAX)
    pred = e * (h1 / torch.where(h2 > 0, h2, 1.0)) * (eprev / safe) ** (1.0 / (order + 1))
    fac = torch.where((eprev > 0) & (npts >= 4), torch.minimum(fac, pred.clamp_min(
        steps.GROWTH_MIN)), fac)
    fac = torch.where(held, fac.clamp(max=1.0), fac)
    return torch.where(err == 0, torch.where(held, 1.0, steps.GROWTH_MAX), fac)


def _predict(npts, h, h1, h2, y, y1, y2) -> torch.Tensor:
    """The integrator's polynomial extrapolation, per lane by its accepted points."""
    h1s = torch.where(h1 > 0, h1, 1.0)
    h2s = torch.where(h2 > 0, h2, 1.0)
    r = (h / h1s)[:, None]
    linear = y + r * (y - y1)
    l0 = (h + h1) * (h + h1 + h2) / (h1s * (h1 + h2s))
    l1 = -h * (h + h1 + h2) / (h1s * h2s)
    l2 = h * (h + h1) / ((h1 + h2s) * h2s)
    quad = l0[:, None] * y + l1[:, None] * y1 + l2[:, None] * y2
    n = npts[:, None]
    return torch.where(n == 0, y, torch.where(n == 1, linear, quad))


def _error(yc, yp, y, JQ, atol, errkind, chgtol, rtol, cerr) -> torch.Tensor:
    """The integrator's weighted max-norm of the local error (1 = at tolerance)."""
    d = (yc - yp).abs()
    ymax = torch.maximum(yc.abs(), y.abs())
    c = torch.diagonal(JQ, dim1=1, dim2=2).abs()
    by_kind = torch.where(errkind == 0, d / (atol + rtol * ymax),
                          torch.where(errkind == 2, d / atol,
                                      c * d / (chgtol + rtol * c * ymax)))
    return cerr * by_kind.max(dim=1).values


class _Events:
    """The per-segment events of :mod:`rram.events` (lanes, segments), recorded at the
    lanes' accepted points (the rules of the integrator's ``_record``)."""

    def __init__(self, n, nseg, m, thr, gap_closed, igap, like):
        def full(v, *shape):
            return torch.full((n, nseg, *shape), v, dtype=DTYPE, device=like.device)

        self.imax, self.timax, self.tcross = full(-np.inf), full(np.nan), full(np.nan)
        self.dtmax, self.tdrop, self.tclose = full(-np.inf), full(np.nan), full(np.nan)
        self.yend, self.iend = full(np.nan, m), full(np.nan)
        self.thr = torch.as_tensor(thr, dtype=DTYPE, device=like.device)
        self.gap_closed = torch.as_tensor(gap_closed, dtype=DTYPE, device=like.device)
        self.igap = igap
        self.rows = torch.arange(n, device=like.device)

    def record(self, mask, k, t, t_prev, i_now, i_prev, y, y_prev):
        r, kk = self.rows, k.clamp(max=self.imax.shape[1] - 1)

        def put(a, cond, value):
            a[r, kk] = torch.where(mask & cond, value, a[r, kk])

        g0, g1, gc = y_prev[:, self.igap], y[:, self.igap], self.gap_closed
        dt = t - t_prev
        put(self.tclose, self.tclose[r, kk].isnan() & (g1 < gc) & (gc <= g0) & (dt > 0),
            t_prev + (g0 - gc) / torch.where(g0 > g1, g0 - g1, 1.0) * dt)
        up = i_now > self.imax[r, kk]
        put(self.timax, up, t)
        put(self.imax, up, i_now)
        peak = self.imax[r, kk]
        level = DROP * peak
        put(self.tdrop, self.tdrop[r, kk].isnan() & (peak >= DROP_FLOOR) & (i_now < level)
            & (level <= i_prev),
            t_prev + (i_prev - level) / torch.where(i_prev > i_now, i_prev - i_now, 1.0) * dt)
        thr = self.thr[r, kk]
        rising = (i_prev < thr) & (i_now > i_prev)
        crossed = mask & self.tcross[r, kk].isnan() & (i_now >= thr)
        rise = torch.where(rising, i_now - i_prev, 1.0)
        put(self.tcross, crossed, torch.where(rising, t_prev + (thr - i_prev) / rise * dt, t))
        put(self.dtmax, y[:, -1] > self.dtmax[r, kk], y[:, -1])

    NAMES = ("imax", "timax", "tcross", "dtmax", "yend", "iend", "tdrop", "tclose")

    def tensors(self) -> dict[str, torch.Tensor]:
        return {k: getattr(self, k) for k in self.NAMES}


def integrate_arrays(circuit: Circuit, P: np.ndarray, TP: np.ndarray, VP: np.ndarray,
                     ICC: np.ndarray, VG: np.ndarray, OUT: np.ndarray, model: Model,
                     options: Options | None = None,
                     stop_current: float | Sequence[float] | np.ndarray | None = None,
                     thresholds: np.ndarray | None = None,
                     gap_closed: np.ndarray | None = None, progress: bool = False, *,
                     device: torch.device | str | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """:func:`rram.engine.run.integrate_arrays` in torch, every device a lane (same
    arguments and results; ``device``: where the lanes run)."""
    out_y, status, stats, events = integrate_tensors(
        circuit, torch.as_tensor(np.array(P), dtype=DTYPE, device=device), TP, VP, ICC, VG,
        OUT, model, options, stop_current, thresholds, gap_closed, progress)
    return (out_y.cpu().numpy(), status.cpu().numpy(), stats.cpu().numpy(),
            {k: v.cpu().numpy() for k, v in events.items()})


def integrate_tensors(circuit: Circuit, P: torch.Tensor, TP: np.ndarray, VP: np.ndarray,
                      ICC: np.ndarray, VG: np.ndarray, OUT: np.ndarray, model: Model,
                      options: Options | None = None,
                      stop_current: float | Sequence[float] | np.ndarray | None = None,
                      thresholds: np.ndarray | None = None,
                      gap_closed: np.ndarray | None = None, progress: bool = False
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                                 dict[str, torch.Tensor]]:
    """:func:`integrate_arrays` on the card tensor ``P`` (lanes, parameters), its results
    as tensors on ``P``'s device.  ``P`` may carry a forward-mode tangent (inside
    :func:`torch.autograd.forward_ad.dual_level`): every result then carries its
    derivative along that tangent — the derivative of the whole adaptive integration,
    step sizes, rejections, sample interpolation and events included (Newton's
    iterations run on the primals; each converged solution takes its tangent from the
    implicit function theorem; the step control's derivative is capped at
    :data:`GRID_RATE`)."""
    opts = options or Options()
    lay = circuit.layout
    n, m = P.shape[0], len(lay.unknowns)
    device = P.device

    def T(a, dtype=DTYPE):
        return torch.as_tensor(np.array(a), dtype=dtype, device=device)

    lanes = _Lanes(circuit, P)
    differentiated = has_tangent(P)
    newton_lanes = _Lanes(circuit, primal(P)) if differentiated else lanes
    P_in, P = P, primal(P)
    atol_np, errkind_np, lim_np = opts.arrays(lay)
    atol, errkind, lim = T(atol_np), T(errkind_np, torch.long), T(lim_np)
    TPt, VPt, ICCt, VGt, OUTt = T(TP), T(VP), T(ICC), T(VG), T(OUT)
    nseg, nout = TP.shape[1] - 1, OUT.shape[1]
    rows = torch.arange(n, device=device)
    thr = SET_FRACTION * ICC if thresholds is None else thresholds
    if gap_closed is None:
        gap_closed = gap_closure_threshold(lay, P)
    events = _Events(n, nseg, m, thr, gap_closed, lay.unknown("dgap"), atol)
    i_stop = T(np.broadcast_to(np.asarray(np.inf if stop_current is None else stop_current,
                                          float), (n,)))
    status = torch.full((n,), int(Status.OK), dtype=torch.long, device=device)
    stats = torch.zeros((n, N_STATS), dtype=DTYPE, device=device)
    out_y = torch.full((n, nout, m), np.nan, dtype=DTYPE, device=device)
    frozen = torch.zeros(m, dtype=torch.bool, device=device)
    frozen[lay.held()] = True

    def inputs(k, t):
        t0, t1 = TPt[rows, k], TPt[rows, k + 1]
        frac = torch.where(t1 <= t0, 0.0, (t - t0) / torch.where(t1 > t0, t1 - t0, 1.0))
        v0, v1 = VPt[rows, k], VPt[rows, k + 1]
        return torch.stack([v0 + (v1 - v0) * frac, VGt[rows, k], ICCt[rows, k]], dim=1)

    # the operating point at t0, the states held at x0, w0 (dc_hold)
    k = torch.zeros(n, dtype=torch.long, device=device)
    t = TPt[:, 0].clone()
    y = torch.zeros((n, m), dtype=DTYPE, device=device)
    u = inputs(k, t)
    live = operating_point(newton_lanes, y, u, frozen, atol, lim)
    status[~live] = int(Status.DC_FAILED)
    stats[~live, Stat.FAIL_TIME] = t[~live]
    if differentiated:  # the held states' tangents are zero
        eye = torch.eye(m, dtype=DTYPE, device=device)
        y, _ = implicit_solution(lanes, y, u, lambda F, JQ: torch.where(frozen, 0.0, F),
                                 lambda JF, JQ: torch.where(frozen[None, :, None], eye, JF))
    _, Q, _, JQ = lanes(y, u)
    i_prev = lanes.probe(y, u).abs()
    events.record(live, k, t, t, i_prev, i_prev, y, y)
    q0, q1, y1, y2 = Q.clone(), Q.clone(), y.clone(), y.clone()
    h1 = torch.zeros(n, dtype=DTYPE, device=device)
    h2 = h1.clone()
    npts = torch.zeros(n, dtype=torch.long, device=device)
    forced = torch.zeros_like(npts)
    seg_steps = torch.zeros_like(npts)
    iout = torch.zeros_like(npts)
    eprev = h1.clone()
    rejected = torch.zeros(n, dtype=torch.bool, device=device)

    def sample(mask, t_from, h, y_from, y_to, t_until):
        """Write the output times in (t_from, t_until] of the ``mask`` lanes."""
        while nout:
            at = OUTt[rows, iout.clamp(max=nout - 1)]
            due = mask & (iout < nout) & (at <= t_until)
            if not bool(due.any()):
                return
            d = torch.nonzero(due)[:, 0]
            f = (at[d] - t_from[d]) / torch.where(h[d] > 0, h[d], 1.0)
            out_y[d, iout[d]] = y_from[d] + f[:, None] * (y_to[d] - y_from[d])
            iout[d] += 1

    sample(live, t, torch.zeros_like(t), y, y, t)
    if differentiated:  # each lane's parameter value (1 for a parameter at 0)
        theta = (P.abs() * tangent(P_in).abs()).sum(dim=1)
        theta = torch.where(theta > 0, theta, 1.0)
    h = torch.clamp((TPt[:, 1] - TPt[:, 0]) * 1e-3, max=opts.hmax)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=n, unit="device", desc=f"{circuit_kind(circuit)} x{n} (torch)",
                   disable=None)

    def finish(mask, code=None, when=None):
        nonlocal live
        if code is not None:
            status[mask] = int(code)
            stats[mask, Stat.FAIL_TIME] = when[mask]
        live = live & ~mask
        if bar is not None:
            bar.update(int(mask.sum()))

    while bool(live.any()):
        # past breakpoints (zero-length padded segments) and lanes at their end
        while True:
            skip = live & (k < nseg) & (TPt[rows, (k + 1).clamp(max=nseg)] <= t)
            if not bool(skip.any()):
                break
            k += skip
        ended = live & (k >= nseg)
        if bool(ended.any()):
            sample(ended, t, torch.zeros_like(t), y, y, torch.full_like(t, np.inf))
            finish(ended)
        if not bool(live.any()):
            break
        kk = k.clamp(max=nseg - 1)
        t_bp = TPt[rows, kk + 1]
        h = torch.minimum(h, opts.hfrac * (t_bp - TPt[rows, kk]))
        hit = t + h >= t_bp - 1e-9 * h
        h = torch.where(hit, t_bp - t, h)
        if differentiated:  # the step control's derivative, within its smooth part
            cap = GRID_RATE * primal(h) / theta
            h = torch.where(hit, h, dual(primal(h), tangent(h).clamp(-cap, cap)))
        tn = t + h
        u = inputs(kk, tn)
        order = torch.where(npts >= 2, 2, 1)
        yp = _predict(npts, h, h1, h2, y, y1, y2)
        w = h / torch.where(h1 > 0, h1, 1.0)
        # BDF: dQ/dt ≈ a0·Q(y) + c1·Q(y_prev) + c2·Q(y_prev2)
        a0 = torch.where(order == 2, (1 + 2 * w) / (h * (1 + w)), 1.0 / h)
        c1 = torch.where(order == 2, -(1 + w) / h, -1.0 / h)
        c2 = torch.where(order == 2, w * w / (h * (1 + w)), 0.0)
        qhist = c1[:, None] * q0 + c2[:, None] * q1
        cerr = torch.where(order == 2, 2.0 / 7.0, 1.0 / 3.0)
        wt = atol + torch.where(errkind == 2, 0.0, opts.rtol * y.abs())
        yc = primal(yp).clone()
        converged, evals, JQ = corrector(newton_lanes, yc, primal(u), primal(a0),
                                         primal(qhist), primal(wt), lim, live)
        if differentiated:
            def step_residual(F, JQ, y0=yc, a0=a0, qhist=qhist):
                return F + a0[:, None] * (JQ @ y0[..., None])[..., 0] + qhist

            def step_jacobian(JF, JQ, a0=a0):
                return JF + primal(a0)[:, None, None] * JQ

            yc, JQ = implicit_solution(lanes, yc, u, step_residual, step_jacobian)
        stats[:, Stat.NEWTON] += evals
        stats[:, Stat.JAC] += evals
        err = torch.where(converged & (npts >= 1),
                          _error(yc, yp, y, JQ, atol, errkind, opts.chgtol, opts.rtol, cerr),
                          0.0)
        at_floor = h <= 1.001 * opts.hmin
        forced_ok = live & converged & (err > 1) & at_floor & (forced < steps.MAX_FORCED)
        reject = live & ~forced_ok & (~converged | (err > 1))
        stats[:, Stat.FORCED] += forced_ok
        stats[:, Stat.REJECTED] += reject
        h_new = h * step_shrink(err, ~converged, order)
        too_small = reject & (h_new < opts.hmin) & at_floor
        finish(too_small, Status.STEP_TOO_SMALL, t)
        h = torch.where(reject, h_new.clamp_min(opts.hmin), h)
        rejected |= reject
        accept = live & ~reject
        forced = torch.where(forced_ok, forced + 1, torch.where(accept, 0, forced))
        bad = accept & ~torch.isfinite(yc).all(dim=1)
        finish(bad, Status.NON_FINITE, tn)
        accept &= ~bad
        if not bool(accept.any()):
            continue
        sample(accept, t, h, y, yc, tn)
        a = accept[:, None]
        q = (JQ @ yc[..., None])[..., 0]
        y2, y1 = torch.where(a, y1, y2), torch.where(a, y, y1)
        y = torch.where(a, yc, y)
        q1, q0 = torch.where(a, q0, q1), torch.where(a, q, q0)
        t_prev = t
        h2, h1 = torch.where(accept, h1, h2), torch.where(accept, h, h1)
        t = torch.where(accept, tn, t)
        stats[:, Stat.STEPS] += accept
        seg_steps += accept
        current = lanes.probe(y, u)
        i_now = current.abs()
        events.record(accept, kk, t, t_prev, i_now, i_prev, y, y1)
        stopped = accept & (i_now >= i_stop)
        if bool(stopped.any()):
            rising = i_now > i_prev
            f = torch.where(rising, (i_stop - i_prev) / torch.where(rising, i_now - i_prev,
                                                                      1.0), 1.0)
            stats[:, Stat.STOP_TIME] = torch.where(stopped, t_prev + f * (t - t_prev),
                                                   stats[:, Stat.STOP_TIME])
            status[stopped] = int(Status.STOPPED)
            finish(stopped)
            accept &= ~stopped
        i_prev = torch.where(accept, i_now, i_prev)
        over = accept & (seg_steps >= opts.max_steps)
        finish(over, Status.MAX_STEPS, t)
        accept &= ~over
        end = accept & hit
        events.yend[rows, kk] = torch.where(end[:, None], y, events.yend[rows, kk])
        events.iend[rows, kk] = torch.where(end, current, events.iend[rows, kk])
        seg_steps = torch.where(end, 0, seg_steps)
        k = k + end
        npts = torch.where(end, 0, npts)
        eprev = torch.where(end, 0.0, eprev)
        nxt = k.clamp(max=nseg - 1)
        h = torch.where(end & (k < nseg), torch.minimum(
            h, (TPt[rows, nxt + 1] - TPt[rows, nxt]) * 1e-3).clamp(max=opts.hmax), h)
        grow = accept & ~hit
        npts = npts + grow
        fac = step_growth(err, eprev, order, npts, h1, h2, rejected | (evals > 4))
        eprev = torch.where(grow, err, eprev)
        rejected = torch.where(grow, False, rejected)
        h = torch.where(grow, (h * fac).clamp(max=opts.hmax), h)
    if bar is not None:
        bar.close()
    return out_y, status, stats, events.tensors()


def simulate(circuit: str, stimuli, cards=None, circuit_params=None,
             options: Options | None = None, *, device: torch.device | str | None = None,
             **kw):
    """:func:`rram.engine.run.simulate` with the lockstep torch integration (``device``:
    ``"cpu"``, ``"cuda"``, ...): the same arguments, the same
    :class:`~rram.engine.run.SimResult`."""

    def integrate(*args, **kwargs):
        return integrate_arrays(*args, **kwargs, device=device)

    return _simulate(circuit, stimuli, cards=cards, circuit_params=circuit_params,
                     options=options, integrate=integrate, **kw)


__all__ = ["corrector", "integrate_arrays", "integrate_tensors", "operating_point", "simulate",
           "step_growth", "step_shrink"]
