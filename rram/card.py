"""The parameters of the filament model and its default card.

Defaults follow the public Stanford–PKU v2.0 Beta parameter set (bcrafton/rram,
``RRAM_v_2_0_Beta.va``) and its "RRAM RC cell" bench where the physics is unchanged.
Every change is in the parameter's ``desc``, and ``docs/model.md`` (§ "The default card")
gives the reasons and the figures behind them:

* barriers raised for ten-year read immunity in both polarities (``ea``, ``ei``, ``eh``),
  with the barrier-lowering lengths that keep the switching voltages where they were;
* new physics: the Wiedemann–Franz heating ``kth`` (with ``rthox`` and ``tauth``), the
  lateral-growth field length ``alphaw``, CF thinning ``kwr``, the pristine oxide's
  leakage ``jox``, the metallic ``tcr``; ``wcf`` is the cell's width;
* the RC-cell extrinsics ``rtop``, ``rbot``, ``rshunt``, ``cp`` as card parameters, and
  ``polarity`` for devices that SET at negative bias;
* numerical widths (smoothing, bounds, the state anchor) are parameters too, small
  enough that results do not depend on them (tested: halving or doubling any one moves
  no switching figure by more than 3 %).

Each parameter has a ``role`` (:data:`rram.params.ROLES`): what may vary cycle to cycle,
what is an initial state, what is a numerical width.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .params import Card, Parameter, read_card_file

INF = math.inf

# Groups fix the section order of the generated files (CMC style).
GROUPS = (
    ("switch", "Switches"),
    ("instance", "Instance parameters: initial state and per-device variation"),
    ("geometry", "Geometry"),
    ("conduction", "Conduction"),
    ("kinetics", "Ion kinetics"),
    ("thermal", "Thermal"),
    ("extrinsic", "Extrinsic elements of the cell"),
    ("numerics", "Numerical widths and guards"),
)


def _p(name, default, unit, desc, group, lo=-INF, hi=INF, lo_open=False, hi_open=False,
       choices=(), kind="model", role="") -> Parameter:
    return Parameter(name, float(default), unit, desc, group, float(lo), float(hi),
                     lo_open, hi_open, tuple(float(c) for c in choices), kind, role)


PARAMETERS: tuple[Parameter, ...] = (
    # Switches
    _p("polarity", 1, "", "+1: SET at positive V(te,be); -1: SET at negative V(te,be)",
       "switch", choices=(-1, 1)),
    # Instance: initial state and variation hooks
    _p("x0", 3.5e-9, "m", "Initial gap (state at t = 0 and DC anchor); x0 = l0 is the "
       "pristine cell", "instance", 0, 5e-8, kind="instance", role="state"),
    _p("w0", 0.5e-9, "m", "Initial CF width (diameter)", "instance", 1e-11, 1e-7,
       kind="instance", role="state"),
    _p("dea", 0, "eV", "Offset on the vacancy-generation barrier ea (variation)", "instance",
       -1.0, 1.0, kind="instance", role="kinetic"),
    _p("deh", 0, "eV", "Offset on the ion-hopping barrier eh (variation)", "instance",
       -0.5, 0.5, kind="instance", role="kinetic"),
    _p("dei", 0, "eV", "Offset on the ion-release barrier ei (variation)", "instance",
       -1.0, 1.0, kind="instance", role="kinetic"),
    _p("kw", 1, "", "Factor on the lateral-growth rate (variation)", "instance", 1e-3, 1e3,
       kind="instance", role="kinetic"),
    _p("fw", 1, "", "Factor on the lateral-growth field term alphaw (variation of the CF "
       "surface field)", "instance", 0.05, 20, kind="instance", role="kinetic"),
    # Geometry
    _p("l0", 3.5e-9, "m", "Switching-layer thickness (v2.0 L0 3 nm: room for the gap a "
       "3 V RESET opens)", "geometry", 5e-10, 5e-8),
    _p("wcf", 30e-9, "m", "Cell (oxide) width: the area of the leakage and a geometric bound "
       "of the CF width, never reached in use", "geometry", 5e-10, 1e-6, role="bound"),
    _p("wmin", 0.1e-9, "m", "Minimum CF width (lower bound of RESET thinning)", "geometry",
       1e-11, 5e-9, role="bound"),
    # Conduction
    _p("j0", 1e13, "A/m^2", "Hopping current density prefactor of the gap (v2.0 I0)",
       "conduction", 1e6, 1e18),
    _p("xt", 0.4e-9, "m", "Hopping-current decay length (v2.0 XT)", "conduction",
       5e-11, 5e-9),
    _p("vt", 0.6, "V", "Hopping I-V nonlinearity voltage (v2.0 VT 0.4 V)", "conduction",
       0.01, 5),
    _p("rho0", 1.9635e-5, "Ohm*m", "CF resistivity at tamb (v2.0 rou)", "conduction",
       1e-9, 1e-1),
    _p("tcr", 1e-3, "1/K", "Temperature coefficient of the CF resistivity (metallic CF)",
       "conduction", 0, 5e-3),
    _p("jox", 5e6, "A/m^2", "Leakage current density of the pristine oxide around the CF "
       "(few traps; the gap's j0 is vacancy-rich)", "conduction", 0, 1e16),
    # Kinetics
    _p("a0", 0.25e-9, "m", "Vacancy/ion hopping distance (v2.0 a)", "kinetics", 1e-11, 1e-8,
       role="kinetic"),
    _p("f0", 1e13, "Hz", "Attempt frequency (v2.0 f)", "kinetics", 1e9, 1e15,
       role="kinetic"),
    _p("ea", 1.65, "eV", "Vacancy-generation barrier of vertical and lateral growth, SET "
       "(v2.0 0.7: raised for read immunity)", "kinetics", 0.1, 4, role="kinetic"),
    _p("eh", 1.4, "eV", "O2- hopping barrier across the gap, RESET (v2.0 1.12)", "kinetics",
       0.1, 4, role="kinetic"),
    _p("ei", 1.61, "eV", "O2- release barrier at the interface, RESET (v2.0 0.82: raised "
       "for read immunity in the RESET polarity)", "kinetics", 0.1, 4, role="kinetic"),
    _p("ri", 1.15, "", "Voltage enhancement factor on ei (v2.0 r 1.5)", "kinetics", 0, 10,
       role="kinetic"),
    _p("alpha", 2.46e-9, "m", "Barrier-lowering length of vertical growth in the gap field "
       "V_g/x (v2.0 0.75 nm: raised with ea)", "kinetics", 0, 1e-8, role="kinetic"),
    _p("alphah", 0.35e-9, "m", "Barrier-lowering length of ion hopping (v2.0 0.75 nm)",
       "kinetics", 0, 1e-8, role="kinetic"),
    _p("alphaw", 1.33e-9, "m", "Barrier-lowering length of lateral growth in the field "
       "V_body/l0 along the CF", "kinetics", 0, 1e-8, role="kinetic"),
    _p("zion", 1, "", "Ion charge number (v2.0 Z)", "kinetics", 0.1, 4, role="kinetic"),
    _p("weff", 2e-9, "m", "Lateral growth step (v2.0 0.5 nm)", "kinetics", 1e-11, 1e-8,
       role="kinetic"),
    _p("kwr", 0.25, "", "CF thinning per unit of the gap's opening during RESET",
       "kinetics", 0, 10, role="kinetic"),
    _p("vcap", 100, "m/s", "Smooth cap of every ion rate (v2.0 hard cap 100 m/s)",
       "kinetics", 1e-3, 1e6, role="kinetic"),
    # Thermal
    _p("tamb", 300, "K", "Ambient temperature", "thermal", 150, 700),
    _p("kth", 3200, "K/(W*Ohm)", "Thermal over electrical resistance of the CF body, "
       "R_th,CF = kth*rho0*(l0 - x)/area (Wiedemann-Franz: 1/(8*L*T) ~ 6e3 for a wire cooled "
       "at both ends, less for the heat lost into the oxide)", "thermal", 0, 1e6,
       role="filament"),
    _p("rthox", 2e9, "K/W", "Thermal resistance of the heat path through the oxide around "
       "the CF, in parallel with the CF's own", "thermal", 1e3, 1e13, role="kinetic"),
    _p("tauth", 1e-11, "s", "Thermal time constant of the CF (l0^2/D for HfO2: 10 ps)",
       "thermal", 1e-15, 1e-6, role="kinetic"),
    # Extrinsic
    # The CF's constriction at the top electrode, formed anew by each SET: an oxygen
    # reservoir that oxidises over cycling raises it (the LRS's slow upper mode).
    _p("rtop", 20, "Ohm", "Top contact resistance, CF to top electrode (v2.0 RC cell R1)",
       "extrinsic", 1e-3, 1e7, role="filament"),
    _p("rbot", 20, "Ohm", "Bottom contact resistance (v2.0 RC cell R2)", "extrinsic",
       1e-3, 1e7),
    _p("rshunt", 2e9, "Ohm", "Cell shunt leakage (v2.0 RC cell Rh)", "extrinsic", 1e3, 1e16),
    _p("cp", 1e-15, "F", "Parasitic capacitance across the cell (v2.0 RC cell C)",
       "extrinsic", 0, 1e-9),
    # Numerics
    _p("vs", 2e-3, "V", "Width of the polarity weights at V = 0", "numerics", 1e-6, 0.1,
       role="smoothing"),
    _p("xeps", 0.05e-9, "m", "Regularisation of 1/x in the field terms", "numerics",
       1e-12, 1e-9, role="smoothing"),
    _p("lmin", 1e-11, "m", "Soft floor of the CF body length (x -> l0; 0.01 nm keeps the CF's "
       "conductance in a Newton iterate that reaches l0 within a few siemens)", "numerics",
       1e-15, 1e-10, role="smoothing"),
    _p("xbound", 0.002e-9, "m", "Width of the state bounds (windows at 0, l0, wmin, wcf)",
       "numerics", 1e-13, 5e-10, role="smoothing"),
    _p("tfloor", 50, "K", "Soft floor of the local temperature (guards Newton iterates)",
       "numerics", 1, 150, role="guard"),
    _p("tceil", 4000, "K", "Soft ceiling of the local temperature (guards Newton iterates)",
       "numerics", 1000, 1e5, role="guard"),
    _p("xguard", 0.25e-9, "m", "Margin of the soft guards on x and w beyond their ranges "
       "(guards Newton iterates)", "numerics", 0.1e-9, 1e-9, role="guard"),
    _p("thold", 1e12, "s", "Anchor time constant of the states to x0, w0: gives the DC "
       "operating point; 0.03 % of (x - x0) in ten years", "numerics", 1e6, 1e15,
       role="guard"),
)

PARAMETER_NAMES = tuple(p.name for p in PARAMETERS)


def _state_within_geometry(values: Mapping[str, float]) -> str | None:
    if values["x0"] > values["l0"]:
        return (f"parameter x0: {values['x0']:g} m exceeds l0 = {values['l0']:g} m "
                "(valid 0 <= x0 <= l0)")
    if values["w0"] > values["wcf"]:
        return (f"parameter w0: {values['w0']:g} m exceeds wcf = {values['wcf']:g} m "
                "(valid w0 <= wcf)")
    if values["wmin"] >= values["wcf"]:
        return f"parameter wmin: {values['wmin']:g} m must be below wcf = {values['wcf']:g} m"
    return None


CONSTRAINTS = (_state_within_geometry,)


def default_card() -> Card:
    """The default card (v2.0 values where physical; see the module docstring)."""
    return Card.from_values(PARAMETERS, {}, name="rram-default", constraints=CONSTRAINTS)


def make_card(values: Mapping[str, Any] | None = None, **kwargs: Any) -> Card:
    """A card with the given values, the defaults elsewhere; validated."""
    merged = dict(values or {})
    merged.update(kwargs)
    return Card.from_values(PARAMETERS, merged, name="rram", constraints=CONSTRAINTS)


def load_card(path: str | Path) -> Card:
    """Read and validate a card JSON file (see :meth:`rram.params.Card.to_json`)."""
    return read_card_file(path, PARAMETERS, CONSTRAINTS)
