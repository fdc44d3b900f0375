"""Names a user may choose for a generated file: reserved words of every target.

A name chosen by the user (the module/subcircuit name of ``rram export``, the instance
name of ``rram netlist``) reaches a Verilog-A module and ngspice decks, so it must be a
plain identifier and no reserved word of *any* target: a valid ngspice subcircuit name
that is a Verilog-A keyword (``module``, ``analog``, ``exp``, ``ground``...) would make
the ``.va`` file fail to compile, and a Verilog-A-safe name that ngspice reads as a
dot-card or a control word (``end``, ``control``, ``shell``) breaks or subverts a deck.
Names are compared case-insensitively: SPICE folds case, so a name must be valid in every
spelling (``Module`` compiles in Verilog-A but is the same subcircuit as ``module``).

This module is data and one check; it imports nothing from the printers or the SPICE
layer, so both can use it.
"""

from __future__ import annotations

import re

#: A plain identifier, valid in Verilog-A, ngspice (node, subcircuit, instance and model
#: names) and Python: a letter first, then letters, digits and ``_``; ≤ 64 characters.
IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")



def _words(text: str) -> list[str]:
    return text.split()


#: IEEE 1364-2005 (Verilog-HDL) keywords, which Verilog-AMS 2.4 (Annex B) reserves.
VERILOG_KEYWORDS = frozenset(_words("""
always and assign automatic begin buf bufif0 bufif1 case casex casez cell cmos config
deassign default defparam design disable edge else end endcase endconfig endfunction
endgenerate endmodule endprimitive endspecify endtable endtask event for force forever
fork function generate genvar highz0 highz1 if ifnone incdir include initial inout input
instance integer join large liblist library localparam macromodule medium module nand
negedge nmos nor noshowcancelled not notif0 notif1 or output parameter pmos posedge
primitive pull0 pull1 pulldown pullup pulsestyle_onevent pulsestyle_ondetect rcmos real
realtime reg release repeat rnmos rpmos rtran rtranif0 rtranif1 scalared showcancelled
signed small specify specparam strong0 strong1 supply0 supply1 table task time tran
tranif0 tranif1 tri tri0 tri1 triand trior trireg unsigned use uwire vectored wait wand
weak0 weak1 while wire wor xnor xor
"""))

#: Keywords Verilog-AMS 2.4 (Annex B) adds, among them the analog operators and the
#: mathematical functions (``exp``, ``ln``, ``ddt``...), which are reserved too.
VERILOG_AMS_KEYWORDS = frozenset(_words("""
above abs absdelay absdelta abstol access acos acosh ac_stim aliasparam analog analysis
asin asinh atan atan2 atanh branch ceil connect connectmodule connectrules continuous cos
cosh cross ddt ddt_nature ddx discipline discrete domain driver_update endconnectmodule
endconnectrules enddiscipline endnature endparamset exclude exp final_step flicker_noise
floor flow from ground hypot idt idtmod idt_nature inf initial_step laplace_nd laplace_np
laplace_zd laplace_zp last_crossing limexp ln log max merged min nature net_resolution
noise_table noise_table_log paramset potential pow resolveto sin sinh slew split sqrt
string tan tanh timer transition units white_noise wreal zi_nd zi_np zi_zd zi_zp
"""))

#: Names ``disciplines.vams`` defines (disciplines, natures and their access functions:
#: ``V(...)``, ``I(...)``), which every generated module includes.
VERILOG_A_DISCIPLINES = frozenset(_words("""
logic electrical voltage current magnetic magneto_motive_force flux thermal temperature
power kinematic kinematic_v position velocity acceleration impulse force rotational
rotational_omega angle angular_velocity angular_acceleration angular_force
v i mmf phi temp pwr pos vel acc imp f theta omega alpha tau
"""))

#: Words ngspice reads as dot-cards, analyses or control commands, and ground's names:
#: none may be a subcircuit, instance, model or node name of a generated deck.
SPICE_RESERVED = frozenset(_words("""
0 gnd ground end ends subckt model param params include inc lib endl control endc
options option opt func global tran op dc ac noise pz tf sens disto four fourier print
plot save probe ic nodeset meas measure temp width title csparam if elseif else endif
let set unset shell system exec source run alter alterparam reset osdi pre_osdi
spiceinit time temper hertz
"""))

RESERVED = VERILOG_KEYWORDS | VERILOG_AMS_KEYWORDS | VERILOG_A_DISCIPLINES | SPICE_RESERVED


TARGETS = ("veriloga", "spice")


def reserved_in(name: str, targets: tuple[str, ...] = TARGETS) -> str | None:
    """Which of ``targets`` reserves ``name`` (case-insensitively), or None."""
    low = name.lower()
    if "veriloga" in targets:
        if low in VERILOG_KEYWORDS or low in VERILOG_AMS_KEYWORDS:
            return "a Verilog-A/Verilog-AMS keyword"
        if low in VERILOG_A_DISCIPLINES:
            return "a discipline, nature or access function of disciplines.vams"
    if "spice" in targets and low in SPICE_RESERVED:
        return "a reserved word of ngspice decks"
    return None


def problem(name: object, targets: tuple[str, ...] = TARGETS) -> str | None:
    """Why ``name`` cannot name something in ``targets`` (None if it can).

    A module/subcircuit name reaches both targets; an instance name only decks."""
    if not isinstance(name, str) or not IDENTIFIER.match(name):
        return ("is not a valid name: use letters, digits and '_', starting with a letter "
                "(at most 64 characters)")
    why = reserved_in(name, targets)
    if why:
        return f"is reserved ({why}; names are compared without case)"
    return None


__all__ = ["IDENTIFIER", "RESERVED", "SPICE_RESERVED", "TARGETS", "VERILOG_AMS_KEYWORDS",
           "VERILOG_A_DISCIPLINES", "VERILOG_KEYWORDS", "problem", "reserved_in"]
