"""Calibrate wear-out (``kwear``, ``xres``, ``ews``) on an endurance record.

An endurance record is R_LRS and R_HRS read after the SET and the RESET of cycles of a
pulsed endurance test (any subset of cycles, log-spaced as instruments keep them), per
device or for one, and it may end in a failure: the window closed with the cell reading
low after its RESET (stuck-LRS) or high after its SET (stuck-HRS).

**The law** (:mod:`rram.equations.wear`; :func:`rram.mc.endurance.closure_cycle`).  The
RESET's gap stays at the fresh cell's x_R until the depleted reservoir's bound meets it
at the cycle N_on; from then on 1/x_HRS grows by 2·kwear per cycle.  The record's windows
R_HRS/R_LRS give each cycle's gap through the card's own reads
(:class:`rram.mc.endurance.FreshCycle`: the card must already be calibrated on the fresh
cell's cycles), so

    x(N) = x_R  (N ≤ N_on),   1/x(N) = 1/x_R + 2·kwear·(N − N_on)  (N > N_on)

is fitted to them (lmfit, in ln x) for ``kwear`` and N_on, and N_on gives ``xres``
(N_on < 0: a reservoir that bounds the RESET from the first cycle, xres < x_R)
(:func:`rram.mc.endurance.reservoir_at_onset`).  A record that ends stuck-HRS sets
``ews``: the smallest that fails the card's SET at the recorded cycle, found by
bisection on :func:`rram.mc.endurance.run_endurance`.  A record with a ``device`` column
is fitted per device; the card takes the medians and the fit reports the ln-σ of
``kwear`` over the devices.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import lmfit
import numpy as np
import pandas as pd

from ..card import Card, in_model
from ..engine.stimulus import PulseCycle
from ..errors import InputError
from ..io import read_table
from ..mc.endurance import (
    STUCK_HRS,
    STUCK_LRS,
    Endurance,
    FreshCycle,
    failure_of,
    reservoir_at_onset,
    run_endurance,
)
from ..model import wearing_model

#: Column names an endurance record's quantities go by (case-insensitive).
ALIASES = {"cycle": ("cycle", "cycles", "n", "n_cycle"),
           "r_lrs": ("r_lrs_ohm", "r_lrs", "lrs", "lrs_ohm", "rlrs"),
           "r_hrs": ("r_hrs_ohm", "r_hrs", "hrs", "hrs_ohm", "rhrs"),
           "device": ("device", "cell", "die")}
#: Fewest cycles of a record (per device) whose window has started to close, and what
#: closing is: a RESET gap below this share of the fresh cell's.
MIN_CLOSING, CLOSING = 3, 0.95
#: Bisection steps of ews (each one endurance run).
EWS_STEPS = 12


@dataclass(frozen=True)
class EnduranceRecord:
    """R_LRS and R_HRS (Ω) against the cycle, per ``device`` (0 for a one-device record)."""

    frame: pd.DataFrame
    source: str = "record"

    @classmethod
    def of(cls, frame: pd.DataFrame, source: str = "record") -> EnduranceRecord:
        lower = {str(c).strip().lower(): c for c in frame.columns}
        found = {}
        for role, names in ALIASES.items():
            hit = next((lower[n] for n in names if n in lower), None)
            if hit is None and role != "device":
                raise InputError(f"{source}: no {role} column (one of {', '.join(names)}; "
                                 f"found {', '.join(map(str, frame.columns))})")
            found[role] = hit
        out = pd.DataFrame({
            "device": frame[found["device"]].astype(str) if found["device"] else "0",
            "cycle": pd.to_numeric(frame[found["cycle"]], errors="coerce"),
            "r_lrs_ohm": pd.to_numeric(frame[found["r_lrs"]], errors="coerce"),
            "r_hrs_ohm": pd.to_numeric(frame[found["r_hrs"]], errors="coerce")})
        for col in ("cycle", "r_lrs_ohm", "r_hrs_ohm"):
            bad = ~np.isfinite(out[col].to_numpy(float))
            if bad.any():
                raise InputError(f"{source}: row {int(np.flatnonzero(bad)[0]) + 1}: {col} "
                                 "is not a finite number")
        if (out["cycle"] < 0).any():
            raise InputError(f"{source}: cycles must be >= 0")
        if (out[["r_lrs_ohm", "r_hrs_ohm"]] <= 0).any().any():
            raise InputError(f"{source}: resistances must be > 0 Ohm")
        out = out.sort_values(["device", "cycle"], kind="stable").reset_index(drop=True)
        return cls(out, source)

    @classmethod
    def load(cls, path: str | Path) -> EnduranceRecord:
        return cls.of(read_table(Path(path), "endurance record"), str(path))


@dataclass(frozen=True)
class EnduranceFit:
    """The fitted card and its figures: ``kwear`` (1/m) and ``xres`` (m, medians over the
    devices), ``kwear_sigma`` (their ln-σ), ``ews`` (eV), the record's failure ``mode``
    and the per-device table (``kwear``, ``onset_cycle``, ``xres``, ``closure_cycle`` of
    the record, ``rms`` of the fit in ln x)."""

    card: Card
    kwear: float
    xres: float
    kwear_sigma: float
    ews: float
    mode: str
    devices: pd.DataFrame

    def report(self) -> str:
        lines = [f"kwear = {self.kwear:.4g} /m (ln-sigma over devices {self.kwear_sigma:.3g})",
                 f"xres  = {self.xres:.4g} m", f"ews   = {self.ews:.4g} eV",
                 f"failure mode: {self.mode or 'none in the record'}"]
        return "\n".join(lines)


def _law(cycles: np.ndarray, kwear: float, onset: float, x_reset: float) -> np.ndarray:
    after = np.clip(cycles - onset, 0.0, None)
    return 1.0 / (1.0 / x_reset + 2.0 * kwear * after)


def _gaps(t: pd.DataFrame, fresh: FreshCycle) -> np.ndarray:
    """The RESET's gap (m) of each row, from its window through the card's reads."""
    window = (t["r_hrs_ohm"] / t["r_lrs_ohm"]).to_numpy(float)
    return np.array([fresh.gap_of(w * fresh.r_lrs) for w in window])


def _closing(t: pd.DataFrame, fresh: FreshCycle) -> bool:
    return int((_gaps(t, fresh) < CLOSING * fresh.x_reset).sum()) >= MIN_CLOSING


def _fit_device(t: pd.DataFrame, fresh: FreshCycle) -> dict[str, float]:
    """kwear and the onset of one device's record (the rows before any stuck-HRS)."""
    n = t["cycle"].to_numpy(float)
    x = _gaps(t, fresh)
    closing = x < CLOSING * fresh.x_reset
    if closing.sum() < MIN_CLOSING:
        raise InputError(f"device {t['device'].iloc[0]}: fewer than {MIN_CLOSING} cycles "
                         "whose window has started to close; a record that never closes "
                         "bounds kwear only from above")
    x = np.clip(x, 1e-13, None)
    # start: the slope of 1/x against N on the closing rows, the onset where it meets 1/x_R
    slope, intercept = np.polyfit(n[closing], 1.0 / x[closing], 1)
    k0 = max(slope / 2.0, 1e-3)
    # an onset before the first cycle: a reservoir that bounds the RESET from the start
    # (xres below the gap the fresh RESET opens), its first HRS already below the card's
    first = -10.0 * float(n.max()) - 10.0
    on0 = float(np.clip((1.0 / fresh.x_reset - intercept) / slope, first, n.max()))
    params = lmfit.Parameters()
    params.add("log_k", value=math.log10(k0), min=-3, max=12)
    params.add("onset", value=on0, min=first, max=float(n.max()))

    def residual(p: lmfit.Parameters) -> np.ndarray:
        return np.log(_law(n, 10 ** p["log_k"].value, p["onset"].value, fresh.x_reset)) \
            - np.log(x)

    out = lmfit.minimize(residual, params, method="least_squares")
    k, onset = 10 ** out.params["log_k"].value, out.params["onset"].value
    return {"kwear": float(k), "onset_cycle": float(onset),
            "rms": float(np.sqrt(np.mean(residual(out.params) ** 2)))}


def _fit_ews(card: Card, protocol: PulseCycle, cycle: float) -> float:
    """The ews (eV) whose SET fails at ``cycle``: bisection in ln ews over endurance runs."""
    def fails_by(ews: float) -> bool:
        r = run_endurance(Endurance(card=card.replace(ews=ews), cycles=int(cycle) + 1,
                                    protocol=protocol))
        f = r.failures()
        return bool((f["mode"] == STUCK_HRS).any())

    lo, hi = 1e-3, 10.0
    if not fails_by(hi):
        raise InputError(f"the card's SET does not fail by cycle {cycle:g} at ews = {hi:g} "
                         "eV (its range): the record's stuck-HRS is not this model's")
    for _ in range(EWS_STEPS):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if fails_by(mid) else (mid, hi)
    return hi


def fit_endurance(record: EnduranceRecord, card: Card,
                  protocol: PulseCycle | None = None) -> EnduranceFit:
    """Fit the wear block on ``record`` (module docstring) from ``card``, calibrated on
    the fresh cell; a card without the wear block is taken into the wearing model."""
    protocol = protocol or PulseCycle()
    card = in_model(card, wearing_model())
    fresh = FreshCycle.of(card, protocol)
    rows, fails = [], []
    for device, t in record.frame.groupby("device", sort=True):
        closure, how = failure_of(t)
        failed = closure if how == STUCK_HRS else None
        fails.append(failed)
        used = t if failed is None else t[t["cycle"] < failed]
        if failed is not None and not _closing(used, fresh):
            # the SET failed before the window began to close: the record sets ews for
            # the card's depletion rate, not the rate itself
            if card["kwear"] <= 0:
                raise InputError(f"device {device}: the record fails stuck-HRS at cycle "
                                 f"{failed:g} before its window closes, which sets ews only "
                                 "for a given kwear: give a card with kwear > 0")
            rows.append({"device": device, "kwear": card["kwear"], "onset_cycle": math.nan,
                         "rms": math.nan, "xres": card["xres"], "closure_cycle": math.nan})
            continue
        fit = _fit_device(used, fresh)
        fit["xres"] = min(reservoir_at_onset(fit["kwear"], fit["onset_cycle"],
                                             fresh.x_reset, card["x0"]), card["l0"])
        fit["closure_cycle"] = closure
        rows.append({"device": device, **fit})
    devices = pd.DataFrame(rows)
    kwear = float(np.median(devices["kwear"]))
    xres = float(np.median(devices["xres"]))
    sigma = float(np.std(np.log(devices["kwear"]))) if len(devices) > 1 else 0.0
    fitted = card.replace(kwear=kwear, xres=xres, wear0=0.0)
    failed = [f for f in fails if f is not None]
    ews, mode = fitted["ews"], ""
    if failed:
        ews = _fit_ews(fitted, protocol, float(np.median(failed)))
        fitted, mode = fitted.replace(ews=ews), STUCK_HRS
    elif devices["closure_cycle"].notna().any():
        mode = STUCK_LRS
    return EnduranceFit(fitted, kwear, xres, sigma, float(ews), mode, devices)


__all__ = ["EnduranceFit", "EnduranceRecord", "fit_endurance"]
