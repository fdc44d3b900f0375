"""Lockstep structure-of-arrays integration: every device of a block advances together.

The same method as :mod:`rram.engine.integrator` (variable-step BDF1/2, damped Newton with
Deuflhard's test, Milne's error estimate, the same predictive step-size control, steps
landing on breakpoints, per-segment events), organised in *rounds*: in each round the
SoA kernels of :mod:`rram._kernels_soa` evaluate F, JF and JQ once for every unfinished
device of the block, at the point that device asked for, and each device then takes one
decision of its own (its Newton iteration, its error test, its step size, its events).  A device
whose Newton iteration needs another residual simply asks for another evaluation; one
whose step was rejected asks for its retried step.  Finished devices are compacted out
(their column swapped with the last one), so every evaluation serves a live device.

Because a device's arithmetic never mixes with another's, results do not depend on the
block a device lands in: bit-identical for any chunk and worker count.  The Jacobian
comes with every evaluation, so the Newton iteration refreshes its factors whenever the
contraction is slow at no extra evaluation.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._kernels_soa import circuit_eval_soa, circuit_probe_soa
from .dense import INLINE, NJIT_OPTIONS, NO_RUNTIME, lu_factor, lu_solve
from .integrator import (
    DC_FAILED,
    MAX_FORCED,
    MAX_STEPS,
    NON_FINITE,
    OK,
    STAT_FAIL_TIME,
    STAT_FORCED,
    STAT_JAC,
    STAT_NEWTON,
    STAT_REJECTED,
    STAT_STEPS,
    STAT_STOP_TIME,
    STEP_TOO_SMALL,
    STOPPED,
    _error,
    _inputs,
    _predict,
    _record,
    _wnorm,
    step_growth,
    step_shrink,
)

# Phases of a device (what its pending evaluation is for).
PH_DC, PH_FIRST, PH_TRIAL = 0, 1, 2
# Outcomes of a round's Newton decision.
GO_ON, ACCEPTED, RETRY, DC_DONE, FAILED = 0, 1, 2, 3, 4
# Rows of the per-device float scalars.
T, T1, H, H1, H2, A0, CERR, TN, LAM, SCALE, NORM, IPREV, EPREV = range(13)
NF = 13
# Rows of the per-device integer scalars.
DEV, SEG, NPTS, FORCED, STEPS, EVALS, PHASE, ORDER, HIT, REJ, IOUT, OUTCOME, CODE, ITS = \
    range(14)
NI = 14
#: Newton: tolerance (weighted norm) and evaluations per step, as the per-device engine.
NEWTON_TOL = 0.2
NEWTON_MAXIT = 12
DC_MAXIT = 100


@njit(**INLINE)
def _residual_step(F, JQ, z, a0, qhist, LU, piv, dy, c, n):
    """dy = -J⁻¹·(F(z) + α₀·JQ·z + qhist) at column c with the factors in LU."""
    for i in range(n):
        q = 0.0
        for j in range(n):
            q += JQ[i, j, c] * z[j]
        dy[i] = -(F[i, c] + a0 * q + qhist[i])
    lu_solve(LU, piv, dy, n)
    for i in range(n):  # noqa: SIM110 (a loop: np.all(np.isfinite(dy)) allocates)
        if not np.isfinite(dy[i]):
            return False
    return True


@njit(**INLINE)
def _factor_col(JF, JQ, a0, LU, piv, c, n):
    for i in range(n):
        for j in range(n):
            LU[i, j] = JF[i, j, c] + a0 * JQ[i, j, c]
    return lu_factor(LU, piv, n)


@njit(**INLINE)
def _trial(z, base, dy, lam, lim, n):
    """z = base + limited λ·dy; returns the scale used."""
    scale = lam
    for i in range(n):
        if abs(dy[i]) * scale > lim[i]:
            scale = lim[i] / abs(dy[i])
    for i in range(n):
        z[i] = base[i] + scale * dy[i]
    return scale


@njit(**INLINE)
def _newton_round(c, n, S, K, Z, F, JF, JQ, BASE, DY, DYT, QH, WT, LU, PIV, lim, atol,
                  stats):
    """One decision of device ``c`` from the evaluation at its point Z[:, c]."""
    z = Z[:, c]
    dy = DY[:, c]
    lu = LU[:, :, c]
    piv = PIV[:, c]
    a0 = S[A0, c]
    K[EVALS, c] += 1
    if K[PHASE, c] == PH_DC:  # full Newton on F(y) = 0 (a0 = 0), SPICE-limited updates
        wt = WT[:, c]
        for i in range(n):
            wt[i] = atol[i] + 1e-9 * abs(z[i])
            for j in range(n):
                lu[i, j] = JF[i, j, c]
            dy[i] = -F[i, c]
        if not lu_factor(lu, piv, n):
            return FAILED
        lu_solve(lu, piv, dy, n)
        scale = 1.0
        for i in range(n):
            if not np.isfinite(dy[i]):
                return FAILED
            if abs(dy[i]) * scale > lim[i]:
                scale = lim[i] / abs(dy[i])
        err = 0.0
        for i in range(n):
            z[i] += scale * dy[i]
            err = max(err, abs(scale * dy[i]) / wt[i])
        if scale == 1.0 and err <= 1e-3:
            return DC_DONE
        return FAILED if K[EVALS, c] >= DC_MAXIT else GO_ON
    qh = QH[:, c]
    wt = WT[:, c]
    base = BASE[:, c]
    if K[PHASE, c] == PH_FIRST:
        stats[STAT_JAC] += 1
        if not _factor_col(JF, JQ, a0, lu, piv, c, n) or not _residual_step(
                F, JQ, z, a0, qh, lu, piv, dy, c, n):
            K[ITS, c] = -1
            return RETRY
        norm = _wnorm(dy, wt, n)
        if norm <= NEWTON_TOL:
            for i in range(n):
                z[i] += dy[i]
            K[ITS, c] = K[EVALS, c]
            return ACCEPTED
        S[NORM, c] = norm
        for i in range(n):
            base[i] = z[i]
        S[SCALE, c] = _trial(z, base, dy, 1.0, lim, n)
        K[PHASE, c] = PH_TRIAL
        return GO_ON
    # PH_TRIAL: simplified Newton step at the trial point with the factors of the base
    dyt = DYT[:, c]
    scale = S[SCALE, c]
    norm = S[NORM, c]
    evals = K[EVALS, c]
    ok = _residual_step(F, JQ, z, a0, qh, lu, piv, dyt, c, n)
    norm_t = _wnorm(dyt, wt, n) if ok else np.inf
    if norm_t > (1.0 - scale / 4.0) * norm or not ok:
        if scale < 1.0 / 16.0 or evals >= NEWTON_MAXIT:
            K[ITS, c] = -evals
            return RETRY
        S[SCALE, c] = _trial(z, base, dy, 0.5 * scale, lim, n)
        return GO_ON
    if norm_t <= NEWTON_TOL and scale == 1.0:
        for i in range(n):
            z[i] += dyt[i]
        K[ITS, c] = evals
        return ACCEPTED
    for i in range(n):
        base[i] = z[i]
    if norm_t / norm > 0.3:  # slow contraction: the Jacobian at this point is at hand
        stats[STAT_JAC] += 1
        if not _factor_col(JF, JQ, a0, lu, piv, c, n) or not _residual_step(
                F, JQ, z, a0, qh, lu, piv, dy, c, n):
            K[ITS, c] = -evals
            return RETRY
        norm = _wnorm(dy, wt, n)
        if norm <= NEWTON_TOL:
            for i in range(n):
                z[i] += dy[i]
            K[ITS, c] = evals
            return ACCEPTED
    else:
        for i in range(n):
            dy[i] = dyt[i]
        norm = norm_t
    if evals >= NEWTON_MAXIT:
        K[ITS, c] = -evals
        return RETRY
    S[NORM, c] = norm
    S[SCALE, c] = _trial(z, base, dy, min(1.0, 2.0 * scale), lim, n)
    return GO_ON


@njit(**INLINE)
def _step_end(c, n, S, K, Z, Y, Y1, Y2, YP, JQ, Q0, Q1, atol, errkind, chgtol, rtol, hmin,
              out_t, out_y, stats):
    """Error test of a finished Newton solve (its > 0) or its failure: accept (histories
    shifted, samples written) -> ACCEPTED, or a smaller step -> RETRY, or FAILED."""
    its = K[ITS, c]
    h = S[H, c]
    stats[STAT_NEWTON] += abs(its)
    yc = Z[:, c]
    y = Y[:, c]
    order = K[ORDER, c]
    err = 0.0
    if its > 0 and K[NPTS, c] >= 1:
        err = _error(yc, YP[:, c], y, JQ[:, :, c], n, atol, errkind, chgtol, rtol, S[CERR, c])
    S[NORM, c] = err  # kept for the step-size update after the events
    if its > 0 and err > 1.0 and h <= 1.001 * hmin and K[FORCED, c] < MAX_FORCED:
        K[FORCED, c] += 1
        stats[STAT_FORCED] += 1
    elif its < 0 or err > 1.0:
        stats[STAT_REJECTED] += 1
        K[REJ, c] = 1
        h_new = h * step_shrink(err, its, order)
        if h_new < hmin:
            if h <= 1.001 * hmin:
                stats[STAT_FAIL_TIME] = S[T, c]
                K[CODE, c] = STEP_TOO_SMALL
                return FAILED
            h_new = hmin
        S[H, c] = h_new
        return RETRY
    else:
        K[FORCED, c] = 0
    tn = S[TN, c]
    for i in range(n):
        if not np.isfinite(yc[i]):
            stats[STAT_FAIL_TIME] = tn
            K[CODE, c] = NON_FINITE
            return FAILED
    t = S[T, c]
    iout = K[IOUT, c]
    while iout < out_t.shape[0] and out_t[iout] <= tn:
        f = (out_t[iout] - t) / h
        for i in range(n):
            out_y[iout, i] = y[i] + f * (yc[i] - y[i])
        iout += 1
    K[IOUT, c] = iout
    for i in range(n):
        q = 0.0
        for j in range(n):
            q += JQ[i, j, c] * yc[j]  # Q is linear in y: exact without an evaluation
        Y2[i, c] = Y1[i, c]
        Y1[i, c] = y[i]
        y[i] = yc[i]
        Q1[i, c] = Q0[i, c]
        Q0[i, c] = q
    S[T1, c] = t
    S[H2, c] = S[H1, c]
    S[H1, c] = h
    S[T, c] = tn
    K[STEPS, c] += 1
    stats[STAT_STEPS] = K[STEPS, c]
    return ACCEPTED


@njit(**INLINE)
def _setup_step(c, n, S, K, Z, U, Y, Y1, Y2, YP, Q0, Q1, QH, WT, tp, vp, iccp, vgate,
                atol, errkind, rtol, hfrac):
    """Next step of device c: breakpoint, order, predictor (its next evaluation point).
    False when the stimulus is done."""
    nseg = tp.shape[0] - 1
    t = S[T, c]
    k = K[SEG, c]
    while k < nseg and tp[k + 1] <= t:
        k += 1
    K[SEG, c] = k
    if k >= nseg:
        return False
    t_bp = tp[k + 1]
    h = min(S[H, c], hfrac * (t_bp - tp[k]))
    hit = t + h >= t_bp - 1e-9 * h
    if hit:
        h = t_bp - t
    S[H, c] = h
    K[HIT, c] = 1 if hit else 0
    tn = t + h
    S[TN, c] = tn
    _inputs(tp, vp, iccp, vgate, k, tn, U[:, c])
    npts = K[NPTS, c]
    order = 2 if npts >= 2 else 1
    K[ORDER, c] = order
    yp = YP[:, c]
    _predict(npts, h, S[H1, c], S[H2, c], Y[:, c], Y1[:, c], Y2[:, c], yp, n)
    if order == 1:
        S[A0, c] = 1.0 / h
        for i in range(n):
            QH[i, c] = -Q0[i, c] / h
        S[CERR, c] = 1.0 / 3.0
    else:
        w = h / S[H1, c]
        S[A0, c] = (1.0 + 2.0 * w) / (h * (1.0 + w))
        a1 = -(1.0 + w) / h
        a2 = w * w / (h * (1.0 + w))
        for i in range(n):
            QH[i, c] = a1 * Q0[i, c] + a2 * Q1[i, c]
        S[CERR, c] = 2.0 / 7.0
    for i in range(n):
        Z[i, c] = yp[i]
        WT[i, c] = atol[i] + (0.0 if errkind[i] == 2 else rtol * abs(Y[i, c]))
    K[PHASE, c] = PH_FIRST
    K[EVALS, c] = 0
    return True


@njit(**INLINE)
def _swap1(A, c, e):
    A[c] = A[e]


@njit(**INLINE)
def _swap2(A, c, e):
    for i in range(A.shape[0]):
        A[i, c] = A[i, e]


@njit(**INLINE)
def _swap3(A, c, e):
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            A[i, j, c] = A[i, j, e]


@njit(**INLINE)
def _events(c, n, S, K, Y, Y1, I, tp, hmax, max_steps, i_stop, stats, thr, imax, timax,
            tcross, tmax, yend, iend, tdrop, gap_closed, igap, tclose):
    """After an accepted step: events, stop current, step limit, breakpoint, next step
    size.  Returns a final status, or -1 to go on."""
    t = S[T, c]
    t1 = S[T1, c]
    k = K[SEG, c]
    i_now = abs(I[c])
    i_prev = S[IPREV, c]
    y = Y[:, c]
    _record(k, t, t1, i_now, i_prev, y, Y1[:, c], gap_closed, igap, thr, imax, timax,
            tcross, tmax, tdrop, tclose)
    if i_now >= i_stop:
        f = (i_stop - i_prev) / (i_now - i_prev) if i_now > i_prev else 1.0
        stats[STAT_STOP_TIME] = t1 + f * (t - t1)
        return STOPPED
    S[IPREV, c] = i_now
    if K[STEPS, c] >= max_steps:
        stats[STAT_FAIL_TIME] = t
        return MAX_STEPS
    h = S[H, c]
    if K[HIT, c] == 1:
        for i in range(n):
            yend[k, i] = y[i]
        iend[k] = I[c]
        k += 1
        K[SEG, c] = k
        K[NPTS, c] = 0
        S[EPREV, c] = 0.0
        if k < tp.shape[0] - 1:
            S[H, c] = min(h, hmax, (tp[k + 1] - tp[k]) * 1e-3)
        return -1
    K[NPTS, c] += 1
    err = S[NORM, c]
    eprev = S[EPREV, c]
    S[EPREV, c] = err
    fac = step_growth(err, eprev, K[ORDER, c], K[NPTS, c], S[H1, c], S[H2, c],
                      K[REJ, c] == 1 or K[ITS, c] > 4)
    K[REJ, c] = 0
    S[H, c] = min(h * fac, hmax)
    return -1


@njit(**NJIT_OPTIONS)
def _run_block(kind, a, b, P, TP, VP, ICCP, VGATE, Y0, OUT_T, OUT_Y, atol, errkind, chgtol,
               rtol, lim, hmax, hfrac, hmin, max_steps, ISTOP, STATUS, STATS, THR, IMAX,
               TIMAX, TCROSS, TMAX, YEND, IEND, TDROP, GAP_CLOSED, IGAP, TCLOSE):
    """Integrate devices a..b-1 in lockstep (see the module docstring): the block's work
    arrays, then :func:`_run_rounds`."""
    M = b - a
    n = Y0.shape[1]
    _run_rounds(kind, a, P, TP, VP, ICCP, VGATE, Y0, OUT_T, OUT_Y, atol, errkind, chgtol,
                rtol, lim, hmax, hfrac, hmin, max_steps, ISTOP, STATUS, STATS, THR, IMAX,
                TIMAX, TCROSS, TMAX, YEND, IEND, TDROP, GAP_CLOSED, IGAP, TCLOSE,
                np.empty((P.shape[1], M)), np.zeros((2, n, M)), np.zeros((3, M)),
                np.zeros((3, n, n, M)), np.zeros((12, n, M)), np.zeros(M),
                np.zeros((n, M), np.int64), np.zeros((NF, M)), np.zeros((NI, M), np.int64))


@njit(**NO_RUNTIME)
def _run_rounds(kind, a, P, TP, VP, ICCP, VGATE, Y0, OUT_T, OUT_Y, atol, errkind, chgtol,
                rtol, lim, hmax, hfrac, hmin, max_steps, ISTOP, STATUS, STATS, THR, IMAX,
                TIMAX, TCROSS, TMAX, YEND, IEND, TDROP, GAP_CLOSED, IGAP, TCLOSE, Pt, cols,
                U, jacs, vecs, I, PIV, S, K):
    """The rounds of :func:`_run_block` in its work arrays (``cols``: Z, F; ``jacs``: JF,
    JQ, LU; ``vecs``: the per-device vectors), without numba's reference counting (the
    helpers are inlined; nothing is allocated)."""
    M = Pt.shape[1]
    n = Y0.shape[1]
    Z, F = cols[0], cols[1]
    JF, JQ, LU = jacs[0], jacs[1], jacs[2]
    Y, Y1, Y2, YP, Q0, Q1 = vecs[0], vecs[1], vecs[2], vecs[3], vecs[4], vecs[5]
    QH, WT, BASE, DY, DYT = vecs[6], vecs[7], vecs[8], vecs[9], vecs[10]
    for c in range(M):
        d = a + c
        K[DEV, c] = d
        for i in range(P.shape[1]):
            Pt[i, c] = P[d, i]
        for i in range(n):
            Z[i, c] = Y0[d, i]
        S[T, c] = TP[d, 0]
        _inputs(TP[d], VP[d], ICCP[d], VGATE[d], 0, TP[d, 0], U[:, c])
    m = M
    while m > 0:
        circuit_eval_soa(kind, Z, U, Pt, F, JF, JQ, np.uint64(m))
        for c in range(m):
            d = K[DEV, c]
            dc = K[PHASE, c] == PH_DC
            out = _newton_round(c, n, S, K, Z, F, JF, JQ, BASE, DY, DYT, QH, WT, LU, PIV,
                                lim, atol, STATS[d])
            if dc:
                if out == DC_DONE:
                    for i in range(n):
                        Y[i, c] = Z[i, c]
                elif out == FAILED:
                    STATS[d, STAT_FAIL_TIME] = S[T, c]
                    K[CODE, c] = DC_FAILED
            elif out != GO_ON:
                out = _step_end(c, n, S, K, Z, Y, Y1, Y2, YP, JQ, Q0, Q1, atol, errkind,
                                chgtol, rtol, hmin, OUT_T[d], OUT_Y[d], STATS[d])
            K[OUTCOME, c] = out
        circuit_probe_soa(kind, Y, U, Pt, I, np.uint64(m))  # at accepted states, u(tn)
        c = 0
        while c < m:
            d = K[DEV, c]
            out = K[OUTCOME, c]
            status = -1
            if out == FAILED:
                status = K[CODE, c]
            elif out == DC_DONE:
                t = S[T, c]
                i0 = abs(I[c])
                _record(0, t, t, i0, i0, Y[:, c], Y[:, c], GAP_CLOSED[d], IGAP, THR[d],
                        IMAX[d], TIMAX[d], TCROSS[d], TMAX[d], TDROP[d], TCLOSE[d])
                S[IPREV, c] = i0
                for i in range(n):
                    q = 0.0
                    for j in range(n):
                        q += JQ[i, j, c] * Y[j, c]
                    Q0[i, c] = q
                    Q1[i, c] = q
                    Y1[i, c] = Y[i, c]
                    Y2[i, c] = Y[i, c]
                S[T1, c] = t
                iout = 0
                while iout < OUT_T.shape[1] and OUT_T[d, iout] <= t:
                    for i in range(n):
                        OUT_Y[d, iout, i] = Y[i, c]
                    iout += 1
                K[IOUT, c] = iout
                S[H, c] = min(hmax, (TP[d, 1] - TP[d, 0]) * 1e-3)
            elif out == ACCEPTED:
                status = _events(c, n, S, K, Y, Y1, I, TP[d], hmax, max_steps, ISTOP[d],
                                 STATS[d], THR[d], IMAX[d], TIMAX[d], TCROSS[d], TMAX[d],
                                 YEND[d], IEND[d], TDROP[d], GAP_CLOSED[d], IGAP, TCLOSE[d])
            if status < 0 and out != GO_ON and not _setup_step(
                    c, n, S, K, Z, U, Y, Y1, Y2, YP, Q0, Q1, QH, WT, TP[d], VP[d], ICCP[d],
                    VGATE[d], atol, errkind, rtol, hfrac):
                status = OK
                for iout in range(K[IOUT, c], OUT_T.shape[1]):
                    for i in range(n):
                        OUT_Y[d, iout, i] = Y[i, c]
            if status < 0:
                c += 1
                continue
            STATUS[d] = status
            e = m - 1  # compaction: the last live device takes this column
            if c != e:
                for A2 in (Pt, Z, U, F, S):
                    _swap2(A2, c, e)
                _swap2(K, c, e)
                _swap2(PIV, c, e)
                _swap1(I, c, e)
                for A3 in (JF, JQ, LU, vecs):
                    _swap3(A3, c, e)
            m -= 1


@njit(**NJIT_OPTIONS, parallel=True)
def integrate_batch_soa(kind, P, TP, VP, ICCP, VGATE, Y0, OUT_T, OUT_Y, atol, errkind,
                        chgtol, rtol, lim, hmax, hfrac, hmin, max_steps, ISTOP, STATUS, STATS,
                        THR, IMAX, TIMAX, TCROSS, TMAX, YEND, IEND, TDROP, GAP_CLOSED, IGAP,
                        TCLOSE, block):
    """:func:`rram.engine.integrator.integrate_batch` in lockstep blocks of ``block``
    devices, the blocks in parallel.  Same arguments and results."""
    nb = (P.shape[0] + block - 1) // block
    for ib in prange(nb):
        a = ib * block
        b = min(P.shape[0], a + block)
        _run_block(kind, a, b, P, TP, VP, ICCP, VGATE, Y0, OUT_T, OUT_Y, atol, errkind,
                   chgtol, rtol, lim, hmax, hfrac, hmin, max_steps, ISTOP, STATUS, STATS,
                   THR, IMAX, TIMAX, TCROSS, TMAX, YEND, IEND, TDROP, GAP_CLOSED, IGAP,
                   TCLOSE)
