"""A verdict on every fit: each figure against its threshold, pass or fail, and what to
try when it fails.

``rram fit`` and ``rram fit-variation`` print the verdict and write it beside their
output (``<out>.verdict.json``).  A fit that fails a check exits 1 and writes no card or
spec unless ``--accept`` is given; an accepted card or spec carries its verdict in its
metadata, so a failed figure travels with it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from ..io import VERDICT_SUFFIX, write_text_atomic
from ..metrics import LOG_METRICS

#: The thresholds (issue 38): distributions, loops, failures.
KS_MAX = 0.10
MEDIAN_MAX = 0.10  # relative error of a median (resistances and voltages)
SPREAD_MAX = 0.15  # relative error of a spread
FAILURE_FACTOR = 2.0  # modelled over measured share of failed SETs/RESETs, either way
#: Below this share (of SETs or RESETs) a failure share is within a sample's noise: ≤ 0.5 % in
#: both the data and the model passes whatever their ratio.
FAILURE_FLOOR = 0.005
LOOP_RMS_MAX_DEC = 0.2
SWITCHING_VOLTAGE_MAX_V = 0.05
#: The read-noise law: log-log slope of the read-to-read spread against R, model − data.
NOISE_SLOPE_MAX = 0.25
#: A value within this relative distance of a finite bound sits on it.
AT_BOUND = 1e-3


@dataclass(frozen=True)
class Check:
    """One figure of a fit against its threshold."""

    figure: str
    value: float
    limit: str
    passed: bool
    advice: str = ""


@dataclass(frozen=True)
class Verdict:
    """Every check of one fit."""

    fit: str
    checks: tuple[Check, ...]
    #: what the user should know that fails no threshold
    notes: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failed(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if not c.passed)

    def lines(self) -> list[str]:
        width = max(len(c.figure) for c in self.checks)
        out = [f"verdict of the {self.fit}: {'PASS' if self.passed else 'FAIL'} "
               f"({len(self.checks) - len(self.failed)} of {len(self.checks)} checks)"]
        for c in self.checks:
            out.append(f"  {'pass' if c.passed else 'FAIL'}  {c.figure:{width}s}  "
                       f"{_number(c.value):>10s}  {c.limit}")
        out += [f"  try: {c.figure}: {c.advice}" for c in self.failed if c.advice]
        return out + [f"  note: {n}" for n in self.notes]

    def as_dict(self) -> dict:
        return {"fit": self.fit, "passed": self.passed, "notes": list(self.notes),
                "checks": [{**asdict(c), "value": c.value if math.isfinite(c.value)
                            else None} for c in self.checks]}

    def write(self, out: str | Path) -> Path:
        """Write the verdict beside ``out`` (``<out>.verdict.json``)."""
        return write_text_atomic(verdict_path(out), json.dumps(self.as_dict(), indent=2)
                                 + "\n")


def verdict_path(out: str | Path) -> Path:
    return Path(str(out) + VERDICT_SUFFIX)


def _number(x: float) -> str:
    return f"{x:.4g}" if math.isfinite(x) else "n/a"


def _check(figure: str, value: float, limit: float, advice: str, unit: str = "",
           within: bool = True) -> Check:
    ok = math.isfinite(value) and (abs(value) <= limit if within else value <= limit)
    return Check(figure, value, f"|x| <= {limit:g}{unit}" if within else f"<= {limit:g}{unit}",
                 bool(ok), advice)


def variation_verdict(data: Mapping[str, Mapping[str, float]],
                      model: Mapping[str, Mapping[str, float]], ks: Mapping[str, float],
                      failed_sets: tuple[float, float],
                      at_bounds: Mapping[str, str] | None = None,
                      failed_resets: tuple[float, float] = (math.nan, math.nan)) -> Verdict:
    """The verdict of a variation fit from its statistics (median, spread per metric),
    KS distances, (measured, modelled) shares of failed SETs, the carriers whose
    shift or spread ended at its limit (:func:`carriers_on_bounds`: each with what
    did), and the (measured, modelled) shares of failed RESETs (after a SET that
    switched; :func:`rram.metrics.failed_reset_share`)."""
    checks = []
    for m, d_ks in ks.items():
        d, s = data[m], model[m]
        if m in LOG_METRICS:
            median = s["median"] / d["median"] - 1
        else:
            median = (s["median"] - d["median"]) / abs(d["median"]) if d["median"] else math.nan
        checks += [
            _check(f"median {m}", median, MEDIAN_MAX,
                   "the card's nominal is off the data's centre: check that the protocol "
                   "is the measurement's (--protocol), then refit the card (rram fit) on "
                   "this device's loops"),
            _check(f"spread {m}", s["spread"] / d["spread"] - 1 if d["spread"] else math.nan,
                   SPREAD_MAX, "its carrier cannot reach the measured spread: more --rounds "
                   "or --polish, --weight on this metric, or --skip it"),
            _check(f"KS {m}", d_ks, KS_MAX, "the distribution's shape differs: if it has "
                   "two modes keep --modes; a metric the model cannot follow can be left "
                   "out with --skip", within=False)]
    checks += _failure_check("SETs", failed_sets, "the SETs fail at another rate than "
                             "measured: check the protocol's SET amplitude and compliance "
                             "(a weaker SET fails more often)")
    checks += _failure_check("RESETs", failed_resets, "the RESETs fail at another rate "
                             "than measured: check the protocol's RESET amplitude; a "
                             "carrier whose tail holds the current below the RESET (a "
                             "contact of many kOhm) needs a narrower spread")
    for p, what in (at_bounds or {}).items():
        checks.append(Check(f"carrier {p}", math.nan, "not at its limit", False,
                            f"the fit pushed {p}'s {what} to its limit: the data ask of "
                            "this carrier more than the model lets it give; refit the "
                            "card on this device, or --skip the metric it carries"))
    return Verdict("variation fit", tuple(checks))


def _failure_check(operations: str, shares: tuple[float, float], advice: str
                   ) -> list[Check]:
    """The modelled share of failed ``operations`` within :data:`FAILURE_FACTOR` of the
    measured one (both at most :data:`FAILURE_FLOOR` passes); none if not measured."""
    measured, modelled = shares
    if not math.isfinite(measured):
        return []
    if max(measured, modelled) <= FAILURE_FLOOR:
        ratio = 1.0
    else:  # none measured: any modelled share beyond the floor is infinitely many
        ratio = modelled / measured if measured > 0 else math.inf
    return [Check(f"failed {operations}, model/data", ratio,
                  f"within x{FAILURE_FACTOR:g} (measured {100 * measured:.2f} %, modelled "
                  f"{100 * modelled:.2f} %)", 1 / FAILURE_FACTOR <= ratio <= FAILURE_FACTOR,
                  advice)]


def noise_verdict(median_ratio: float, slopes: tuple[float, float],
                  at_bounds: Iterable[str] = (), notes: Iterable[str] = ()) -> Verdict:
    """The verdict of a read-noise fit: the median over cells of the model's
    read-to-read spread over the measured, the spread's slope against R (data, model),
    and the fitted parameters that ended on a bound."""
    data, model = slopes
    checks = [
        _check("read-to-read spread, model/data - 1", median_ratio - 1, SPREAD_MAX,
               "the traps cannot give this spread at these states: check the read "
               "voltage (--v-read) and the read times (--interval), then the card: its "
               "states must be the device's"),
        _check("slope of the spread against R, model - data", model - data,
               NOISE_SLOPE_MAX, "the spread grows with R unlike the law of traps at the CF "
               "(in proportion to R in the LRS, flat in the HRS): a card fitted to this "
               "device places its cells; noise that is not the cell's (the instrument's, a "
               "selector's) has another law")]
    for p in at_bounds:
        checks.append(Check(f"parameter {p}", math.nan, "not on a bound", False,
                            f"the fit pushed {p} to its bound: the measured spread is "
                            "beyond what traps at the CF give"))
    return Verdict("read-noise fit", tuple(checks), tuple(notes))


def loop_verdict(rms_dec: float, v_set: tuple[float, float], v_reset: tuple[float, float],
                 at_bounds: Iterable[str] = (), fit: str = "loop fit") -> Verdict:
    """The verdict of a loop fit: its RMS log₁₀ current error and the switching
    voltages' (data, model) mismatch; the fitted parameters that ended on a bound of the
    recipe are noted.  A pulse fit (``fit="pulse fit"``) is judged alike: the RMS
    log₁₀ error of its reads and its SET and RESET amplitudes (each where the record
    shows one)."""
    if fit == "pulse fit":
        advice = ("check the resistance and width units, the gate voltages or compliances "
                  "and the SET polarity; start from a card fitted to a loop of this device")
        what = "RMS log10 resistance error"
    else:
        advice = ("check the current and voltage units, the compliance and the SET "
                  "polarity; --starts 20 screens starts across the recipe's bounds")
        what = "RMS log10 current error"
    checks = [_check(what, rms_dec, LOOP_RMS_MAX_DEC, advice, " dec", within=False)]
    shown = []
    for name, (data, model) in (("V_set", v_set), ("V_reset", v_reset)):
        if fit == "pulse fit" and not math.isfinite(data):
            continue  # a record without a SET (or a RESET) staircase does not show it
        shown.append(name)
        checks.append(_check(f"{name} model - data", model - data, SWITCHING_VOLTAGE_MAX_V,
                             advice, " V"))
    # a bound of the recipe is the user's choice, and a loop fits well against it
    notes = tuple(f"{p} ended on an end of its range in the recipe: the data ask for a "
                  "value beyond it (widen the recipe's bounds to let it go)"
                  for p in at_bounds) + tuple(
        f"the data show no {n} (no staircase of that kind): not checked"
        for n in ("V_set", "V_reset") if n not in shown)
    return Verdict(fit, tuple(checks), notes)


def on_bound(value: float, lower: float, upper: float) -> bool:
    """Whether ``value`` sits on a finite end of [lower, upper] (:data:`AT_BOUND`)."""
    for end in (lower, upper):
        if math.isfinite(end) and abs(value - end) <= AT_BOUND * max(abs(end), abs(value),
                                                                    1e-300):
            return True
    return False


def parameters_on_bounds(card, recipe, names: Iterable[str]) -> list[str]:
    """The fitted ``names`` whose value in ``card`` sits on a bound of ``recipe``."""
    return [n for n in names if on_bound(card[n], *recipe.bounds_of(n))]


def carriers_on_bounds(spec, card) -> dict[str, str]:
    """The carriers of a fitted ``spec`` whose centre shift or σ ended at the limit the
    variation fit gives it (:func:`rram.fit.matching.shift_bounds`,
    :data:`rram.fit.carriers.MAX_SIGMA`), in either configuration: the upper one's
    centre (shift + mode_step) and σ factor (mode_scale, within
    :func:`rram.fit.matching.scale_bounds`) too.
    Each with what is at its limit."""
    from .carriers import MAX_SIGMA
    from .matching import scale_bounds, shift_bounds

    out: dict[str, list[str]] = {}
    for v in spec.variations:
        if v.parameter not in MAX_SIGMA:
            continue
        lo, hi = shift_bounds(v.parameter, card)
        sigma_max = MAX_SIGMA[v.parameter]
        limited = [what for what, at in (
            ("centre", on_bound(v.shift, lo, hi)),
            ("spread", bool(v.sigma) and on_bound(v.sigma, 0.0, sigma_max)),
            ("centre in the upper configuration",
             bool(v.mode_step) and on_bound(v.shift + v.mode_step, lo, hi)),
            ("spread in the upper configuration",
             bool(v.sigma) and v.mode_scale != 1 and on_bound(
                 v.mode_scale, *scale_bounds(v.parameter, v.sigma))))
            if at]
        if limited:
            out.setdefault(v.parameter, []).extend(limited)
    return {p: " and ".join(whats) for p, whats in out.items()}
