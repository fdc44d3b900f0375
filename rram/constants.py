"""Physical and mathematical constants, with the ``constants.vams`` name each maps to,
and the largest arrays the package accepts (read by the command line at start-up,
before the array package is imported).

The Verilog-A rendering must use ``constants.vams`` (CMC rule) and the three renderings
must agree to 1e-6 on Arrhenius rates with E/kT ≈ 60, so every target uses the values that
OpenVAF(-Reloaded) compiles in for ``P_K`` and ``P_Q`` (the NIST 1998 set; measured by
compiling ``P_K/P_Q`` and reading it back through ngspice).
"""

from __future__ import annotations

import math

#: Boltzmann constant, J/K (constants.vams ``P_K`` as compiled by OpenVAF).
P_K = 1.3806503e-23
#: Elementary charge, C (constants.vams ``P_Q`` as compiled by OpenVAF).
P_Q = 1.602176462e-19
#: Boltzmann constant in eV/K: ``P_K/P_Q`` (8.6173423e-5).
KB_EV = P_K / P_Q
#: π (constants.vams ``M_PI``).
PI = math.pi

#: Name of each constant in the Verilog-A rendering.
VERILOGA_NAMES = {"kb_ev": "(`P_K/`P_Q)", "pi": "`M_PI"}

#: Nanometre in metres: the gap and width states are stored in nm (O(1) node values).
NM = 1e-9

#: How far (m) a simulator leaves a state beyond a bound it stops at: its integrator
#: overshoots (ngspice left a SET's gap at −0.006 nm; issue 37).  An instance's ``x0``
#: takes a gap this far below 0, and the arrays put a state this far beyond a bound on
#: it, so a state a simulation produced is always a valid start.
STATE_OVERSHOOT_M = 1e-11

#: Largest array side and wire sections per cell pitch an array spec accepts (the
#: native linear path is measured to 1024; what fits in memory is checked per run).
ARRAY_MAX_SIDE = 4096
ARRAY_MAX_SEGMENTS = 256

#: 0 °C in kelvin: SPICE temperatures (.temp, temper) are in °C, the model's in K.
CELSIUS_ZERO = 273.15

#: Longest wait between writing an array and reading it (s): ten years, the retention
#: horizon (rram.array.aging).
MAX_WAIT_S = 10 * 365.25 * 86400.0
#: Temperatures (°C) an array may wait at (a bake).
BAKE_RANGE_C = (-55.0, 300.0)
