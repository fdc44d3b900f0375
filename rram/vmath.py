"""Branch-free ``exp``, ``log``, ``log1p`` and ``tanh`` for the structure-of-arrays kernels.

The PyPI llvmlite has no SVML, so a loop calling libm's ``exp`` is never vectorised by
LLVM.  Written here with arithmetic, a floor and a bit cast only, these functions inline
into a loop over devices that LLVM turns into AVX2 code.  They are deterministic IEEE
arithmetic (no fast-math), so a device's result does not depend on whether it landed in a
vector lane or the scalar remainder of the loop: the bit-identity of a Monte Carlo across
chunk sizes holds.  Accuracy: a few ulp over the ranges the model uses (tested against
libm in ``tests/test_soa.py``).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.extending import intrinsic

_NJ = {"cache": True, "error_model": "numpy", "inline": "always"}

LN2_HI = 6.93147180369123816490e-01  # ln 2 split so that k·LN2_HI is exact
LN2_LO = 1.90821492927058770002e-10
LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
SQRT2 = 1.4142135623730951
# Integers travel through floats: AVX2 has no vector conversion between float64 and int64
# nor a 64-bit arithmetic right shift, so x + SHIFTER puts an integer-valued float's
# value in the low bits of its representation (|x| < 2**51) and back.
SHIFTER = 6755399441055744.0  # 2**52 + 2**51
SHIFTER_BITS = 0x4338000000000000


@intrinsic
def _int_bits_to_float(typingctx, i):
    """Reinterpret the bits of an int64 as a float64 (no conversion)."""
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return sig, codegen


@intrinsic
def _float_bits_to_int(typingctx, x):
    """Reinterpret the bits of a float64 as an int64."""
    sig = types.int64(types.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return sig, codegen


@njit(**_NJ)
def vexp(x):
    """e**x; 0 below −745, +inf above 709.78 (as libm), NaN for NaN."""
    xc = min(max(x, -745.2), 709.79)
    k = np.floor(xc * LOG2E + 0.5)
    r = (xc - k * LN2_HI) - k * LN2_LO  # |r| <= ln2/2
    # Taylor to r**13/13!: truncation < 2e-17 relative on |r| <= 0.347
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    # 2**k in two factors, each a normal number, so results down to the subnormals and
    # up to the overflow are exact scalings
    k1 = np.floor(0.5 * k)
    k2 = k - k1
    s1 = _int_bits_to_float((_float_bits_to_int(k1 + SHIFTER) - SHIFTER_BITS + 1023) << 52)
    s2 = _int_bits_to_float((_float_bits_to_int(k2 + SHIFTER) - SHIFTER_BITS + 1023) << 52)
    y = p * s1 * s2
    y = np.inf if x > 709.79 else y
    return x if x != x else y


@njit(**_NJ)
def _log_core(m):
    """ln(1 + m) for m in [sqrt(1/2) − 1, sqrt(2) − 1] via 2·atanh(m / (2 + m))."""
    s = m / (2.0 + m)
    s2 = s * s
    # odd series of atanh to s**23: truncation < 1e-18 for |s| <= 0.1716
    p = 1.0 / 23.0
    p = p * s2 + 1.0 / 21.0
    p = p * s2 + 1.0 / 19.0
    p = p * s2 + 1.0 / 17.0
    p = p * s2 + 1.0 / 15.0
    p = p * s2 + 1.0 / 13.0
    p = p * s2 + 1.0 / 11.0
    p = p * s2 + 1.0 / 9.0
    p = p * s2 + 1.0 / 7.0
    p = p * s2 + 1.0 / 5.0
    p = p * s2 + 1.0 / 3.0
    return 2.0 * s + 2.0 * s * s2 * p


@njit(**_NJ)
def vlog(x):
    """ln x for x > 0 (normal numbers); NaN below 0, −inf at 0, +inf at +inf."""
    xs = max(x, 2.2250738585072014e-308)  # subnormals are not used by the model
    bits = _float_bits_to_int(xs)
    # the exponent field (sign bit is 0) as an integer-valued float
    e = _int_bits_to_float(((bits & 0x7FF0000000000000) >> 52) + SHIFTER_BITS) - SHIFTER
    e = e - 1023.0
    mant = _int_bits_to_float((bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000)  # [1, 2)
    big = mant > SQRT2
    mant = mant * 0.5 if big else mant
    e = e + 1.0 if big else e
    y = e * LN2_HI + (_log_core(mant - 1.0) + e * LN2_LO)
    y = -np.inf if x == 0.0 else y
    y = x if x == np.inf else y
    return np.nan if not x >= 0.0 else y


@njit(**_NJ)
def vlog1p(z):
    """ln(1 + z) for z >= 0 (the softplus' use), accurate for tiny z."""
    big = z > SQRT2 - 1.0
    # above sqrt2 − 1: ln(1 + z) = ln 2 + ln((1 + z)/2), whose argument − 1 is exact
    m = (z - 1.0) * 0.5 if big else z
    off = LN2 if big else 0.0
    small = _log_core(m) + off
    return vlog(1.0 + z) if z > 1.0 else small


@njit(**_NJ)
def vtanh(x):
    """tanh x: odd Taylor series below |x| = 1/16 (no cancellation), exp above."""
    a = abs(x)
    e = vexp(-2.0 * a)
    big = (1.0 - e) / (1.0 + e)
    x2 = x * x
    # tanh series to x**11: truncation < 2e-17 relative for |x| <= 1/16
    p = -1382.0 / 155925.0
    p = p * x2 + 62.0 / 2835.0
    p = p * x2 + -17.0 / 315.0
    p = p * x2 + 2.0 / 15.0
    p = p * x2 + -1.0 / 3.0
    small = a + a * x2 * p
    r = small if a < 0.0625 else big
    return -r if x < 0.0 else r


class NoAliasCompiler(CompilerBase):
    """numba's pipeline with every array argument marked ``noalias`` for LLVM.

    A kernel loop reads ~55 rows of its inputs and writes ~50 outputs.  Each output is its
    own 1-D row argument (:mod:`rram.printers.soa_printer`), so with ``noalias`` LLVM
    needs no run-time overlap check to vectorise the loop (rows of one 2-D array would
    need one per pair, more than it allows).  Callers guarantee that the rows do not
    overlap (distinct rows of separately allocated arrays)."""

    def define_pipelines(self):
        self.state.flags.noalias = True
        return [DefaultPassBuilder.define_nopython_pipeline(self.state)]
