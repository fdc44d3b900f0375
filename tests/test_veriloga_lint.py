"""Lint of the generated Verilog-A: compact-model rules (rules document §1).

No hidden state, no idt, no $abstime stepping, no events, no $bound_step, no random
functions; every parameter has a range, units and a description; the module compiles
with OpenVAF-Reloaded.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from rram.card import PARAMETERS
from rram.generate import REPO_DIR
from rram.spice.models import openvaf

VA = REPO_DIR / "netlists" / "veriloga" / "rram.va"
FORBIDDEN = {
    "idt": r"\bidt\s*\(",
    "idtmod": r"\bidtmod\s*\(",
    "$abstime": r"\$abstime",
    "$bound_step": r"\$bound_step",
    "random functions": r"\$(random|rdist_\w+|dist_\w+|arandom)\b",
    "events": r"@\s*\(|\b(initial_step|final_step|cross|above|timer)\b",
    "hidden state (static/initial)": r"\b(initial|static)\b",
    "time derivatives other than ddt": r"\b(ddx|absdelay|transition|slew|laplace_\w+|zi_\w+)\s*\(",
    "system variables": r"\$(temperature|realtime|simparam)\b",
}


def code() -> str:
    """The module without comments and strings (the rules apply to code)."""
    text = VA.read_text()
    text = re.sub(r"\(\*.*?\*\)", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"[^"\n]*"', '""', text)


@pytest.mark.parametrize("rule", sorted(FORBIDDEN))
def test_no_forbidden_construct(rule):
    found = re.findall(FORBIDDEN[rule], code())
    assert not found, f"{rule}: {found[:3]}"


def test_every_parameter_has_range_units_and_desc():
    text = VA.read_text()
    declared = re.findall(r'\(\*(.*?)\*\)\s*\n\s*parameter real (\w+) = [^;]* from ([\[(][^;]*);',
                          text)
    names = {name for _, name, _ in declared}
    assert names == {p.name for p in PARAMETERS}
    for attrs, name, rng in declared:
        assert 'units="' in attrs and 'desc="' in attrs, name
        assert re.match(r"[\[(][^:]+:[^\])]+[\])]", rng), (name, rng)


def test_only_limexp_style_safe_exponentials():
    bare = re.findall(r"(?<![A-Za-z_`])exp\s*\(", code())
    # exp appears only inside the SAFE_EXP / SOFTPLUS macros, with bounded arguments
    macros = re.findall(r"`define[^\n]*", VA.read_text())
    assert len(bare) == sum(m.count("exp(") for m in macros)


def test_compiles_with_openvaf(tmp_path):
    proc = subprocess.run([openvaf(), str(VA), "-o", str(tmp_path / "rram.osdi")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in (proc.stdout + proc.stderr).lower()
