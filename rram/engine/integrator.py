"""Variable-step BDF2 integration of ``F(y) + dQ(y)/dt = 0``, compiled with numba.

The same DAE form SPICE solves (currents plus time derivatives of charges), so the
Python engine and ngspice integrate identical equations.  Each device gets its own
adaptive step, which matters because devices switch at different times; devices run in
parallel over the machine's cores.

* Corrector: Newton with the analytic Jacobian ``JF + α₀·JQ`` (from the generated kernel),
  dense LU with partial pivoting (n ≈ 7), updates limited per unknown to keep the
  exponentials in range.
* Order: BDF1 (backward Euler) on the first step and after every breakpoint of the
  stimulus, BDF2 otherwise; both L-stable, so the ps-scale parasitic and thermal modes
  are damped exactly as SPICE's Gear integration damps them.
* Error control: Milne's estimate from the predictor (polynomial extrapolation through the
  last accepted points) against per-unknown absolute and relative tolerances.
* The stimulus is piecewise linear; steps land exactly on its breakpoints.
* Outputs are sampled on a caller-given time grid by linear interpolation between
  accepted steps.

Status codes are defined here and translated to typed errors by :mod:`rram.engine.run`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._kernels import circuit_eval, circuit_probe

OK = 0
MAX_STEPS = 1
STEP_TOO_SMALL = 2
DC_FAILED = 3
NON_FINITE = 4
STOPPED = 5  # success: the stop current was reached (see STAT_STOP_TIME)

STATUS_TEXT = {
    OK: "ok",
    MAX_STEPS: "the step limit was hit",
    STEP_TOO_SMALL: "the time step fell below the minimum (hmin, or 1e-14 of the time), "
    "Newton or the error test kept failing",
    DC_FAILED: "the initial operating point did not converge",
    NON_FINITE: "a non-finite value appeared in the solution",
    STOPPED: "stopped: the stop current was reached",
}

# Columns of the per-device statistics array.
STAT_STEPS, STAT_REJECTED, STAT_NEWTON, STAT_FAIL_TIME, STAT_STOP_TIME = 0, 1, 2, 3, 4
N_STATS = 5


@njit(cache=True, error_model="numpy")
def lu_solve(A, b, n):
    """Solve A·x = b in place (b becomes x); partial pivoting.  False if singular."""
    for k in range(n):
        piv = k
        big = abs(A[k, k])
        for i in range(k + 1, n):
            a = abs(A[i, k])
            if a > big:
                big = a
                piv = i
        if big == 0.0 or not np.isfinite(big):
            return False
        if piv != k:
            for j in range(n):
                tmp = A[k, j]
                A[k, j] = A[piv, j]
                A[piv, j] = tmp
            tmp = b[k]
            b[k] = b[piv]
            b[piv] = tmp
        inv = 1.0 / A[k, k]
        for i in range(k + 1, n):
            m = A[i, k] * inv
            if m != 0.0:
                for j in range(k + 1, n):
                    A[i, j] -= m * A[k, j]
                b[i] -= m * b[k]
    for k in range(n - 1, -1, -1):
        s = b[k]
        for j in range(k + 1, n):
            s -= A[k, j] * b[j]
        b[k] = s / A[k, k]
    return True


@njit(cache=True, error_model="numpy")
def _inputs(tp, vp, iccp, vgate, k, t, u):
    """Stimulus at time t in segment k: v_app linear in the segment, icc constant."""
    t0 = tp[k]
    t1 = tp[k + 1]
    frac = 0.0 if t1 <= t0 else (t - t0) / (t1 - t0)
    u[0] = vp[k] + (vp[k + 1] - vp[k]) * frac
    u[1] = vgate
    u[2] = iccp[k]


@njit(cache=True, error_model="numpy")
def _newton(kind, y, u, p, alpha0, qhist, F, Q, JF, JQ, A, dy, n, wt, lim, maxit, tol, dc):
    """Solve F(y) + α₀·Q(y) + qhist = 0 (or F(y) = 0 when dc) in place.

    Returns the number of iterations (> 0) on success, the negative count on failure.
    """
    for it in range(1, maxit + 1):
        circuit_eval(kind, y, u, p, F, Q, JF, JQ)
        for i in range(n):
            r = F[i] if dc else F[i] + alpha0 * Q[i] + qhist[i]
            dy[i] = -r
            for j in range(n):
                A[i, j] = JF[i, j] if dc else JF[i, j] + alpha0 * JQ[i, j]
        if not lu_solve(A, dy, n):
            return -it
        # Limit the update so exponentials stay in range (SPICE-style limiting).
        scale = 1.0
        for i in range(n):
            if not np.isfinite(dy[i]):
                return -it
            a = abs(dy[i])
            if a > lim[i] and lim[i] * scale < a * scale:
                scale = min(scale, lim[i] / a)
        err = 0.0
        for i in range(n):
            d = scale * dy[i]
            y[i] += d
            e = abs(d) / wt[i]
            if e > err:
                err = e
        if scale == 1.0 and err <= tol:
            return it
    return -maxit


@njit(cache=True, error_model="numpy")
def _record(k, t, t_prev, i_now, i_prev, y, ev_thr, ev_imax, ev_timax, ev_tcross, ev_tmax):
    """Per-segment events at an accepted point: peak |I| and its time, first crossing of
    the segment's current threshold (interpolated), peak temperature rise."""
    if i_now > ev_imax[k]:
        ev_imax[k] = i_now
        ev_timax[k] = t
    if np.isnan(ev_tcross[k]) and i_now >= ev_thr[k]:
        if i_prev < ev_thr[k] and i_now > i_prev:
            ev_tcross[k] = t_prev + (ev_thr[k] - i_prev) / (i_now - i_prev) * (t - t_prev)
        else:
            ev_tcross[k] = t
    dt = y[y.shape[0] - 1]
    if dt > ev_tmax[k]:
        ev_tmax[k] = dt


@njit(cache=True, error_model="numpy")
def integrate_device(kind, p, tp, vp, iccp, vgate, y, out_t, out_y, atol, errkind, chgtol,
                     rtol, lim, hmax, hfrac, hmin, max_steps, i_stop, stats, ev_thr, ev_imax,
                     ev_timax, ev_tcross, ev_tmax, ev_yend):
    """Integrate one device over the stimulus (tp, vp, iccp).  ``y`` holds the initial
    guess on entry.  Returns a status code; fills ``out_y`` at ``out_t`` (NaN after a
    stop).  The run stops early when |device current| reaches ``i_stop``.

    Per stimulus segment it records (``ev_*``, pre-filled by the caller with -inf/NaN):
    the peak |I| and its time, the first time |I| reaches ``ev_thr``, the peak of the
    last unknown (the temperature rise) and the unknowns at the segment's end.  These
    are resolved at the integrator's own steps, not the output grid."""
    n = y.shape[0]
    nseg = tp.shape[0] - 1
    F = np.zeros(n)
    Q = np.zeros(n)
    JF = np.zeros((n, n))
    JQ = np.zeros((n, n))
    A = np.zeros((n, n))
    dy = np.zeros(n)
    u = np.zeros(3)
    wt = np.zeros(n)
    qhist = np.zeros(n)
    # Operating point at t0.
    t = tp[0]
    k = 0
    _inputs(tp, vp, iccp, vgate, k, t, u)
    for i in range(n):
        wt[i] = atol[i] + rtol * abs(y[i])
    its = _newton(kind, y, u, p, 0.0, qhist, F, Q, JF, JQ, A, dy, n, wt, lim, 100, 1e-3, True)
    if its < 0:
        stats[STAT_FAIL_TIME] = t
        return DC_FAILED
    circuit_eval(kind, y, u, p, F, Q, JF, JQ)
    i_prev = abs(circuit_probe(kind, y, u, p))
    _record(0, t, t, i_prev, i_prev, y, ev_thr, ev_imax, ev_timax, ev_tcross, ev_tmax)
    q0 = Q.copy()
    q1 = Q.copy()  # Q at the previous accepted point
    y1 = y.copy()  # previous accepted point
    y2 = y.copy()  # the one before
    t1 = t
    t2 = t
    npts = 0  # accepted points since the last breakpoint (history depth)
    iout = 0
    nout = out_t.shape[0]
    while iout < nout and out_t[iout] <= t:
        for i in range(n):
            out_y[iout, i] = y[i]
        iout += 1
    h = min(hmax, (tp[1] - tp[0]) * 1e-3)
    yp = np.zeros(n)
    yc = np.zeros(n)
    steps = 0
    rejected = False
    while k < nseg:
        t_bp = tp[k + 1]
        if t_bp <= t:
            k += 1
            continue
        hit = False
        h = min(h, hfrac * (t_bp - tp[k]))
        if t + h >= t_bp - 1e-9 * h:
            h = t_bp - t
            hit = True
        tn = t + h
        _inputs(tp, vp, iccp, vgate, k, tn, u)
        # Predictor and BDF coefficients.
        order = 2 if npts >= 2 else 1
        if npts == 0:
            for i in range(n):
                yp[i] = y[i]
        elif order == 1:
            r = h / (t - t1)
            for i in range(n):
                yp[i] = y[i] + r * (y[i] - y1[i])
        else:
            # Quadratic extrapolation through (t2, y2), (t1, y1), (t, y).
            l0 = (tn - t1) * (tn - t2) / ((t - t1) * (t - t2))
            l1 = (tn - t) * (tn - t2) / ((t1 - t) * (t1 - t2))
            l2 = (tn - t) * (tn - t1) / ((t2 - t) * (t2 - t1))
            for i in range(n):
                yp[i] = l0 * y[i] + l1 * y1[i] + l2 * y2[i]
        if order == 1:
            a0 = 1.0 / h
            for i in range(n):
                qhist[i] = -q0[i] / h
            cerr = 1.0 / 3.0
        else:
            w = h / (t - t1)
            a0 = (1.0 + 2.0 * w) / (h * (1.0 + w))
            a1 = -(1.0 + w) / h
            a2 = w * w / (h * (1.0 + w))
            for i in range(n):
                qhist[i] = a1 * q0[i] + a2 * q1[i]
            cerr = 2.0 / 7.0
        for i in range(n):
            yc[i] = yp[i]
            wt[i] = atol[i] + rtol * abs(y[i])
        its = _newton(kind, yc, u, p, a0, qhist, F, Q, JF, JQ, A, dy, n, wt, lim, 6, 0.05,
                      False)
        stats[STAT_NEWTON] += abs(its)
        if its < 0:
            stats[STAT_REJECTED] += 1
            rejected = True
            h *= 0.25
            if h < hmin or h < 1e-14 * abs(t):
                stats[STAT_FAIL_TIME] = t
                return STEP_TOO_SMALL
            continue
        # Local error estimate (Milne), zero on the first step (no predictor information).
        # States are tested in their own units; electrical nodes through the charge of
        # their capacitance (SPICE's charge test), so a node without capacitance is
        # algebraic and a node with 1 fF is nearly so, as they should be.
        err = 0.0
        if npts >= 1:
            for i in range(n):
                d = abs(yc[i] - yp[i])
                ymax = max(abs(yc[i]), abs(y[i]))
                if errkind[i] == 0:
                    e = cerr * d / (atol[i] + rtol * ymax)
                else:
                    c = abs(JQ[i, i])
                    e = cerr * c * d / (chgtol + rtol * c * ymax)
                if e > err:
                    err = e
        if err > 1.0:
            stats[STAT_REJECTED] += 1
            rejected = True
            h *= max(0.2, 0.9 * err ** (-1.0 / (order + 1)))
            if h < hmin or h < 1e-14 * abs(t):
                stats[STAT_FAIL_TIME] = t
                return STEP_TOO_SMALL
            continue
        for i in range(n):
            if not np.isfinite(yc[i]):
                stats[STAT_FAIL_TIME] = tn
                return NON_FINITE
        # Accept.  Q is linear in y, so Q(yc) is exact from the last Jacobian.
        while iout < nout and out_t[iout] <= tn:
            f = (out_t[iout] - t) / h
            for i in range(n):
                out_y[iout, i] = y[i] + f * (yc[i] - y[i])
            iout += 1
        circuit_eval(kind, yc, u, p, F, Q, JF, JQ)
        for i in range(n):
            y2[i] = y1[i]
            y1[i] = y[i]
            y[i] = yc[i]
            q1[i] = q0[i]
            q0[i] = Q[i]
        t2 = t1
        t1 = t
        t = tn
        steps += 1
        stats[STAT_STEPS] = steps
        i_now = abs(circuit_probe(kind, y, u, p))
        _record(k, t, t1, i_now, i_prev, y, ev_thr, ev_imax, ev_timax, ev_tcross, ev_tmax)
        if i_now >= i_stop:
            f = (i_stop - i_prev) / (i_now - i_prev) if i_now > i_prev else 1.0
            stats[STAT_STOP_TIME] = t1 + f * (t - t1)
            return STOPPED
        i_prev = i_now
        if steps >= max_steps:
            stats[STAT_FAIL_TIME] = t
            return MAX_STEPS
        if hit:
            for i in range(n):
                ev_yend[k, i] = y[i]
            k += 1
            npts = 0
            if k < nseg:
                h = min(h, hmax, (tp[k + 1] - tp[k]) * 1e-3)
            continue
        npts += 1
        if err > 0.0:
            fac = 0.9 * err ** (-1.0 / (order + 1))
            fac = min(4.0, max(0.2, fac))
        else:
            fac = 4.0
        if rejected:  # no growth right after a rejection (avoids accept/reject cycling)
            fac = min(fac, 1.0)
        rejected = False
        h = min(h * fac, hmax)
    while iout < nout:
        for i in range(n):
            out_y[iout, i] = y[i]
        iout += 1
    return OK


@njit(cache=True, parallel=True, error_model="numpy")
def integrate_batch(kind, P, TP, VP, ICCP, VGATE, Y0, OUT_T, OUT_Y, atol, errkind, chgtol,
                    rtol, lim, hmax, hfrac, hmin, max_steps, ISTOP, STATUS, STATS, THR, IMAX,
                    TIMAX, TCROSS, TMAX, YEND):
    """Integrate every device of a batch, in parallel.  Arrays are per device (first axis)."""
    for d in prange(P.shape[0]):
        y = Y0[d].copy()
        STATUS[d] = integrate_device(kind, P[d], TP[d], VP[d], ICCP[d], VGATE[d], y, OUT_T[d],
                                     OUT_Y[d], atol, errkind, chgtol, rtol, lim, hmax, hfrac,
                                     hmin, max_steps, ISTOP[d], STATS[d], THR[d], IMAX[d],
                                     TIMAX[d], TCROSS[d], TMAX[d], YEND[d])


@njit(cache=True, parallel=True, error_model="numpy")
def dc_batch(kind, P, U, Y, frozen, atol, rtol, lim, STATUS):
    """Operating points of a batch: F(y) = 0 with the unknowns where ``frozen`` is set held
    at their value in ``Y`` (e.g. the states, for a read at fixed state).  In place."""
    n = Y.shape[1]
    for d in prange(P.shape[0]):
        F = np.zeros(n)
        Q = np.zeros(n)
        JF = np.zeros((n, n))
        JQ = np.zeros((n, n))
        A = np.zeros((n, n))
        dy = np.zeros(n)
        wt = np.zeros(n)
        y = Y[d]
        status = DC_FAILED
        for it in range(100):
            circuit_eval(kind, y, U[d], P[d], F, Q, JF, JQ)
            for i in range(n):
                if frozen[i]:
                    for j in range(n):
                        A[i, j] = 0.0
                    A[i, i] = 1.0
                    dy[i] = 0.0
                else:
                    for j in range(n):
                        A[i, j] = JF[i, j]
                    dy[i] = -F[i]
                wt[i] = atol[i] + rtol * abs(y[i])
            if not lu_solve(A, dy, n):
                break
            scale = 1.0
            for i in range(n):
                a = abs(dy[i])
                if a * scale > lim[i]:
                    scale = lim[i] / a
            err = 0.0
            for i in range(n):
                y[i] += scale * dy[i]
                e = abs(scale * dy[i]) / wt[i]
                if e > err:
                    err = e
            if scale == 1.0 and err <= 1e-3:
                status = OK
                break
        STATUS[d] = status
