"""Variable-step BDF2 integration of ``F(y) + dQ(y)/dt = 0``, compiled with numba.

The same DAE form SPICE solves (currents plus time derivatives of charges), so the
Python engine and ngspice integrate identical equations.  Each device gets its own
adaptive step, which matters because devices switch at different times; devices run in
parallel over the machine's cores.

* Corrector: damped Newton (:mod:`rram.engine.newton`) from the predictor.
* Order: BDF1 (backward Euler) on the first step and after every breakpoint of the
  stimulus, BDF2 otherwise; both L-stable, so the ps-scale parasitic and thermal modes
  are damped exactly as SPICE's Gear integration damps them.
* Error control: Milne's estimate from the predictor (polynomial extrapolation through the
  last accepted points).  States are tested in their own units; node voltages through the
  charge of their capacitance against ``chgtol``, as SPICE does, so a node without
  capacitance is algebraic and takes no part.
* Step size: Gustafsson's predictive control (:func:`step_growth`): the next step
  follows the trend of the last two errors, so the accelerating SET runaway is met with
  shrinking steps instead of a rejection per step.
* The stimulus is piecewise linear; steps land exactly on its breakpoints.
* The step loop (:func:`_integrate`) runs in work arrays its caller allocates, with the
  helpers and the kernels' dispatchers inlined and numba's reference counting off: array
  arguments passed between compiled functions cost more than their arithmetic (1.4× the
  loops/s of the same code with calls, the same doubles).
* Per stimulus segment, events are recorded at the integrator's own steps (peak current,
  threshold crossing, peak temperature, end state); outputs are sampled on a caller-given
  time grid by linear interpolation between accepted steps.

``Q`` must be linear in ``y`` (capacitors and state "capacitors"); the engine relies on
it to get ``Q(y) = JQ·y`` without evaluating the kernel (tested).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._kernels import circuit_eval, circuit_probe
from ..events import DROP, DROP_FLOOR
from ..status import Stat, Status
from .dense import INLINE, NJIT_OPTIONS, NO_RUNTIME
from .newton import newton_dc, newton_tran

# numba reads module globals as compile-time constants: plain ints of the contract
OK, MAX_STEPS, STEP_TOO_SMALL, DC_FAILED, NON_FINITE, STOPPED = (
    int(Status.OK), int(Status.MAX_STEPS), int(Status.STEP_TOO_SMALL),
    int(Status.DC_FAILED), int(Status.NON_FINITE), int(Status.STOPPED))
STAT_STEPS, STAT_REJECTED, STAT_NEWTON, STAT_FAIL_TIME, STAT_STOP_TIME, STAT_JAC, \
    STAT_FORCED = (int(s) for s in Stat)
#: Steps in a row that may be accepted at that resolution with the error test failing.
MAX_FORCED = 200
#: Safety factor of the step-size controller (the new step aims at this fraction of the
#: step the error estimate allows).  With the predictive rule below, 0.9 takes the fewest
#: model evaluations of 0.75-0.95 on the default DC loop.
SAFETY = 0.9
#: Bounds of the factor of the step after an accepted one, and the factor after a Newton
#: failure (every engine that integrates as this one does takes them from here).
GROWTH_MIN, GROWTH_MAX = 0.2, 3.0
NEWTON_FAILED_SHRINK = 0.25
#: The corrector's convergence test (weighted max-norm of its step) and its budget of
#: residual evaluations; the operating point's relative tolerance and iterations.
NEWTON_TOL, NEWTON_MAX_EVALS = 0.2, 12
DC_RTOL, DC_MAX_ITERATIONS = 1e-9, 100


@njit(**INLINE)
def _elementary(err, order):
    """The step factor the error estimate allows: SAFETY·err^(-1/(p+1))."""
    return SAFETY * err ** (-1.0 / (order + 1))


@njit(**INLINE)
def step_shrink(err, its, order):
    """Factor of a rejected step: error above tolerance, or Newton failed (its < 0)."""
    return NEWTON_FAILED_SHRINK if its < 0 else max(GROWTH_MIN, _elementary(err, order))


@njit(**INLINE)
def step_growth(err, eprev, order, npts, h1, h2, held):
    """Factor of the step after an accepted one (``h1``; ``h2`` the one before).

    The elementary rule SAFETY·err^(-1/(p+1)) within [0.2, 3], capped by Gustafsson's
    predictive rule where the error grows from step to step (the accelerating SET
    runaway): the step that would pass is then smaller than the error alone says, and
    meeting it early replaces a rejection per step (511 → 419 attempts per default DC
    loop).  The predictive rule needs two BDF2 errors (``npts`` ≥ 4: a segment's first
    two steps are BDF1).  ``held``: no growth right after a rejection or a hard solve."""
    if err == 0.0:
        return 1.0 if held else GROWTH_MAX
    e = _elementary(err, order)
    fac = min(GROWTH_MAX, max(GROWTH_MIN, e))
    if eprev > 0.0 and npts >= 4:
        pred = e * (h1 / h2) * (eprev / err) ** (1.0 / (order + 1))
        fac = min(fac, max(GROWTH_MIN, pred))
    if held:
        fac = min(fac, 1.0)
    return fac


@njit(**INLINE)
def _inputs(tp, vp, iccp, vgate, k, t, u):
    """Stimulus at time t in segment k: v_app linear in the segment, gate and icc
    constant."""
    t0 = tp[k]
    t1 = tp[k + 1]
    frac = 0.0 if t1 <= t0 else (t - t0) / (t1 - t0)
    u[0] = vp[k] + (vp[k + 1] - vp[k]) * frac
    u[1] = vgate[k]
    u[2] = iccp[k]


@njit(**INLINE)
def _record(k, t, t_prev, i_now, i_prev, y, y_prev, gap_closed, igap, itemp, ev_thr,
            ev_imax,
            ev_timax, ev_tcross, ev_tmax, ev_tdrop, ev_tclose):
    """Per-segment events at an accepted point (the rules of :mod:`rram.events`): peak
    |I| and its time, first crossing of the segment's current threshold (interpolated),
    first fall of |I| below DROP times its peak so far, once that peak exceeds
    DROP_FLOOR (interpolated), first closure of the gap (unknown ``igap`` below
    ``gap_closed``, interpolated), peak temperature rise (unknown ``itemp``)."""
    g0 = y_prev[igap]
    g1 = y[igap]
    if np.isnan(ev_tclose[k]) and g1 < gap_closed <= g0 and t > t_prev:
        ev_tclose[k] = t_prev + (g0 - gap_closed) / (g0 - g1) * (t - t_prev)
    if i_now > ev_imax[k]:
        ev_imax[k] = i_now
        ev_timax[k] = t
    level = DROP * ev_imax[k]
    if np.isnan(ev_tdrop[k]) and ev_imax[k] >= DROP_FLOOR and i_now < level <= i_prev:
        ev_tdrop[k] = t_prev + (i_prev - level) / (i_prev - i_now) * (t - t_prev)
    if np.isnan(ev_tcross[k]) and i_now >= ev_thr[k]:
        if i_prev < ev_thr[k] and i_now > i_prev:
            ev_tcross[k] = t_prev + (ev_thr[k] - i_prev) / (i_now - i_prev) * (t - t_prev)
        else:
            ev_tcross[k] = t
    dt = y[itemp]
    if dt > ev_tmax[k]:
        ev_tmax[k] = dt


@njit(**INLINE)
def _predict(npts, h, h1, h2, y, y1, y2, yp, n):
    """Polynomial extrapolation through the accepted points since the last breakpoint.

    Written in the step sizes (h: this step, h1, h2: the last two accepted ones), not in
    differences of absolute times: steps far below the resolution of t stay exact."""
    if npts == 0:
        for i in range(n):
            yp[i] = y[i]
    elif npts == 1:
        r = h / h1
        for i in range(n):
            yp[i] = y[i] + r * (y[i] - y1[i])
    else:
        l0 = (h + h1) * (h + h1 + h2) / (h1 * (h1 + h2))
        l1 = -h * (h + h1 + h2) / (h1 * h2)
        l2 = h * (h + h1) / ((h1 + h2) * h2)
        for i in range(n):
            yp[i] = l0 * y[i] + l1 * y1[i] + l2 * y2[i]


@njit(**INLINE)
def _error(yc, yp, y, JQ, n, atol, errkind, chgtol, rtol, cerr):
    """Weighted max-norm of the local error estimate (1 = at tolerance)."""
    err = 0.0
    for i in range(n):
        d = abs(yc[i] - yp[i])
        ymax = max(abs(yc[i]), abs(y[i]))
        if errkind[i] == 0:
            e = cerr * d / (atol[i] + rtol * ymax)
        elif errkind[i] == 2:
            e = cerr * d / atol[i]
        else:
            c = abs(JQ[i, i])
            e = cerr * c * d / (chgtol + rtol * c * ymax)
        if e > err:
            err = e
    return err


#: Work vectors of :func:`_integrate` (rows of one array).
N_VECTORS = 13


@njit(**NJIT_OPTIONS)
def integrate_device(kind, p, tp, vp, iccp, vgate, y, out_t, out_y, atol, errkind, chgtol,
                     rtol, lim, hmax, hfrac, hmin, max_steps, i_stop, stats, ev_thr, ev_imax,
                     ev_timax, ev_tcross, ev_tmax, ev_yend, ev_iend, ev_tdrop, gap_closed,
                     igap, itemp, ev_tclose, frozen):
    """Integrate one device over the stimulus (tp, vp, iccp).  ``y`` holds the initial
    guess on entry; the unknowns marked ``frozen`` (the states) keep it at the operating
    point of t0, as a SPICE analysis holds them (``dc_hold``).  Returns a status code;
    fills ``out_y`` at ``out_t`` (NaN after a stop).  The run stops early when |device
    current| reaches ``i_stop``.

    Per stimulus segment it records (``ev_*``, pre-filled by the caller with -inf/NaN):
    the peak |I| and its time, the first time |I| reaches ``ev_thr``, the peak of the
    temperature rise (unknown ``itemp``), the unknowns and the (signed) device current at
    the segment's end.  Allocates the work arrays and runs :func:`_integrate`."""
    n = y.shape[0]
    return _integrate(kind, p, tp, vp, iccp, vgate, y, out_t, out_y, atol, errkind, chgtol,
                      rtol, lim, hmax, hfrac, hmin, max_steps, i_stop, stats, ev_thr,
                      ev_imax, ev_timax, ev_tcross, ev_tmax, ev_yend, ev_iend, ev_tdrop,
                      gap_closed, igap, itemp, ev_tclose, np.zeros((N_VECTORS, n)),
                      np.zeros((3, n, n)), np.zeros(n, np.int64), frozen, np.zeros(3))


@njit(**NO_RUNTIME)
def _integrate(kind, p, tp, vp, iccp, vgate, y, out_t, out_y, atol, errkind, chgtol, rtol,
               lim, hmax, hfrac, hmin, max_steps, i_stop, stats, ev_thr, ev_imax, ev_timax,
               ev_tcross, ev_tmax, ev_yend, ev_iend, ev_tdrop, gap_closed, igap, itemp, ev_tclose,
               vecs, mats, piv, frozen, u):
    """The step loop of :func:`integrate_device`, in the work arrays ``vecs``
    (:data:`N_VECTORS`, n), ``mats`` (3, n, n), ``piv``, ``frozen`` and ``u``, without
    numba's reference counting (the helpers are inlined; nothing is allocated)."""
    n = y.shape[0]
    nseg = tp.shape[0] - 1
    F, Q, dy, wt, qhist, yp, yc, trial, dyt = (vecs[0], vecs[1], vecs[2], vecs[3], vecs[4],
                                               vecs[5], vecs[6], vecs[7], vecs[8])
    q0, q1, y1, y2 = vecs[9], vecs[10], vecs[11], vecs[12]
    JF, JQ, LU = mats[0], mats[1], mats[2]
    # Operating point at t0 (the states sit at their anchors x0, w0).
    t = tp[0]
    k = 0
    _inputs(tp, vp, iccp, vgate, k, t, u)
    if not newton_dc(kind, y, u, p, frozen, F, Q, JF, JQ, LU, piv, dy, n, atol, DC_RTOL, lim,
                     DC_MAX_ITERATIONS, wt):
        stats[STAT_FAIL_TIME] = t
        return DC_FAILED
    circuit_eval(kind, y, u, p, F, Q, JF, JQ)
    i_prev = abs(circuit_probe(kind, y, u, p))
    _record(0, t, t, i_prev, i_prev, y, y, gap_closed, igap, itemp, ev_thr, ev_imax, ev_timax,
            ev_tcross, ev_tmax, ev_tdrop, ev_tclose)
    for i in range(n):
        q0[i] = Q[i]
        q1[i] = Q[i]
        y1[i] = y[i]
        y2[i] = y[i]
    t1 = t
    h1 = h2 = 0.0  # the last two accepted steps
    npts = 0  # accepted points since the last breakpoint
    forced = 0  # steps in a row accepted at the resolution of time
    iout = 0
    nout = out_t.shape[0]
    while iout < nout and out_t[iout] <= t:
        for i in range(n):
            out_y[iout, i] = y[i]
        iout += 1
    h = min(hmax, (tp[1] - tp[0]) * 1e-3)
    steps = 0
    seg_steps = 0  # accepted steps in this stimulus segment (max_steps bounds them)
    eprev = 0.0  # the last accepted step's error estimate (0: none in this segment)
    rejected = False
    while k < nseg:
        t_bp = tp[k + 1]
        if t_bp <= t:
            k += 1
            continue
        h = min(h, hfrac * (t_bp - tp[k]))
        hit = t + h >= t_bp - 1e-9 * h
        if hit:
            h = t_bp - t
        tn = t + h
        _inputs(tp, vp, iccp, vgate, k, tn, u)
        order = 2 if npts >= 2 else 1
        _predict(npts, h, h1, h2, y, y1, y2, yp, n)
        if order == 1:
            a0 = 1.0 / h
            for i in range(n):
                qhist[i] = -q0[i] / h
            cerr = 1.0 / 3.0
        else:
            w = h / h1
            a0 = (1.0 + 2.0 * w) / (h * (1.0 + w))
            a1 = -(1.0 + w) / h
            a2 = w * w / (h * (1.0 + w))
            for i in range(n):
                qhist[i] = a1 * q0[i] + a2 * q1[i]
            cerr = 2.0 / 7.0
        for i in range(n):
            yc[i] = yp[i]
            # the error test's weights: gap and width are absolute (errkind 2), so Newton
            # must converge them to atol, not rtol·|y| (8e-3 nm at a parked 8 nm gap,
            # whose leftover jitter the error test then rejected step after step)
            wt[i] = atol[i] + (0.0 if errkind[i] == 2 else rtol * abs(y[i]))
        its = newton_tran(kind, yc, u, p, a0, qhist, F, Q, JF, JQ, LU, piv, dy, n, wt, lim,
                          NEWTON_TOL, NEWTON_MAX_EVALS, stats, trial, dyt)
        stats[STAT_NEWTON] += abs(its)
        err = 0.0
        if its > 0 and npts >= 1:
            err = _error(yc, yp, y, JQ, n, atol, errkind, chgtol, rtol, cerr)
        floor = hmin
        if its > 0 and err > 1.0 and h <= 1.001 * floor and forced < MAX_FORCED:
            # At the minimum step, converged: taken with its error estimate above 1
            # (counted in STAT_FORCED; more than MAX_FORCED in a row is a failure).
            forced += 1
            stats[STAT_FORCED] += 1
        elif its < 0 or err > 1.0:
            stats[STAT_REJECTED] += 1
            rejected = True
            h_new = h * step_shrink(err, its, order)
            if h_new < floor:
                if h <= 1.001 * floor:
                    stats[STAT_FAIL_TIME] = t
                    return STEP_TOO_SMALL
                h_new = floor
            h = h_new
            continue
        else:
            forced = 0
        for i in range(n):
            if not np.isfinite(yc[i]):
                stats[STAT_FAIL_TIME] = tn
                return NON_FINITE
        # Accept.
        while iout < nout and out_t[iout] <= tn:
            f = (out_t[iout] - t) / h
            for i in range(n):
                out_y[iout, i] = y[i] + f * (yc[i] - y[i])
            iout += 1
        for i in range(n):
            q = 0.0
            for j in range(n):
                q += JQ[i, j] * yc[j]  # Q is linear in y: exact without an evaluation
            y2[i] = y1[i]
            y1[i] = y[i]
            y[i] = yc[i]
            q1[i] = q0[i]
            q0[i] = q
        t1 = t
        h2 = h1
        h1 = h
        t = tn
        steps += 1
        seg_steps += 1
        stats[STAT_STEPS] = steps
        i_now = abs(circuit_probe(kind, y, u, p))
        _record(k, t, t1, i_now, i_prev, y, y1, gap_closed, igap, itemp, ev_thr, ev_imax,
                ev_timax, ev_tcross, ev_tmax, ev_tdrop, ev_tclose)
        if i_now >= i_stop:
            f = (i_stop - i_prev) / (i_now - i_prev) if i_now > i_prev else 1.0
            stats[STAT_STOP_TIME] = t1 + f * (t - t1)
            return STOPPED
        i_prev = i_now
        if seg_steps >= max_steps:
            stats[STAT_FAIL_TIME] = t
            return MAX_STEPS
        if hit:
            seg_steps = 0
            for i in range(n):
                ev_yend[k, i] = y[i]
            ev_iend[k] = circuit_probe(kind, y, u, p)
            k += 1
            npts = 0
            eprev = 0.0
            if k < nseg:
                h = min(h, hmax, (tp[k + 1] - tp[k]) * 1e-3)
            continue
        npts += 1
        fac = step_growth(err, eprev, order, npts, h1, h2, rejected or its > 4)
        eprev = err
        rejected = False
        h = min(h * fac, hmax)
    while iout < nout:
        for i in range(n):
            out_y[iout, i] = y[i]
        iout += 1
    return OK


@njit(**NJIT_OPTIONS, parallel=True)
def integrate_batch(kind, P, TP, VP, ICCP, VGATE, Y0, OUT_T, OUT_Y, atol, errkind, chgtol,
                    rtol, lim, hmax, hfrac, hmin, max_steps, ISTOP, STATUS, STATS, THR, IMAX,
                    TIMAX, TCROSS, TMAX, YEND, IEND, TDROP, GAP_CLOSED, IGAP, ITEMP, TCLOSE,
                    FROZEN):
    """Integrate every device of a batch, in parallel.  Arrays are per device (first axis)."""
    for d in prange(P.shape[0]):
        y = Y0[d].copy()
        STATUS[d] = integrate_device(kind, P[d], TP[d], VP[d], ICCP[d], VGATE[d], y, OUT_T[d],
                                     OUT_Y[d], atol, errkind, chgtol, rtol, lim, hmax, hfrac,
                                     hmin, max_steps, ISTOP[d], STATS[d], THR[d], IMAX[d],
                                     TIMAX[d], TCROSS[d], TMAX[d], YEND[d], IEND[d],
                                     TDROP[d], GAP_CLOSED[d], IGAP, ITEMP, TCLOSE[d],
                                     FROZEN)


@njit(**NJIT_OPTIONS, parallel=True)
def dc_batch(kind, P, U, Y, frozen, atol, rtol, lim, STATUS):
    """Operating points of a batch: F(y) = 0 with the unknowns where ``frozen`` is set held
    at their value in ``Y`` (e.g. the states, for a read at fixed state).  In place."""
    n = Y.shape[1]
    for d in prange(P.shape[0]):
        F = np.zeros(n)
        Q = np.zeros(n)
        JF = np.zeros((n, n))
        JQ = np.zeros((n, n))
        LU = np.zeros((n, n))
        piv = np.zeros(n, np.int64)
        dy = np.zeros(n)
        ok = newton_dc(kind, Y[d], U[d], P[d], frozen, F, Q, JF, JQ, LU, piv, dy, n, atol,
                       rtol, lim, 100, np.zeros(n))
        STATUS[d] = OK if ok else DC_FAILED
