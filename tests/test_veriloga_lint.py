"""Lint of the generated Verilog-A: compact-model rules (rules document §1).

No hidden state, no idt, no $abstime stepping, no events, no random functions, and no
$bound_step or ddx outside the model's step hint (one guarded block: a fraction of the
SET runaway's e-folding time, rram.model.StepBound); ``analysis`` and ``$abstime`` only
in the simulator's symbols (a DC analysis holds the states); every parameter has a
range, units and a description; the module compiles with OpenVAF-Reloaded, with and
without the hint.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from rram.generate import REPO_DIR
from rram.model import MODEL
from rram.printers.veriloga_printer import NO_BOUND_STEP, SIMULATOR
from rram.spice.models import openvaf

VA = REPO_DIR / "netlists" / "veriloga" / "rram.va"
FORBIDDEN = {
    "idt": r"\bidt\s*\(",
    "idtmod": r"\bidtmod\s*\(",
    "$abstime": r"\$abstime",
    "analysis()": r"\banalysis\s*\(",
    "$bound_step": r"\$bound_step",
    "random functions": r"\$(random|rdist_\w+|dist_\w+|arandom)\b",
    "events": r"@\s*\(|\b(initial_step|final_step|cross|above|timer)\b",
    "hidden state (static/initial)": r"\b(initial|static)\b",
    "time derivatives other than ddt": r"\b(ddx|absdelay|transition|slew|laplace_\w+|zi_\w+)\s*\(",
    "system variables": r"\$(temperature|realtime|simparam)\b",
}


STEP_HINT = re.compile(rf"`ifndef {NO_BOUND_STEP}\n(.*?)`endif\n", re.S)


def code() -> str:
    """The module without comments and strings (the rules apply to code), and without
    its step hint (checked by :func:`test_the_step_hint_is_one_bound_per_runaway`)."""
    text = STEP_HINT.sub("", VA.read_text())
    for name, value in SIMULATOR.items():
        text = text.replace(f"{name} = {value};", "")
    text = re.sub(r"\(\*.*?\*\)", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"[^"\n]*"', '""', text)


def test_the_step_hint_is_one_bound_per_runaway():
    """Inside the guarded block: only one ``$bound_step`` per hint of the model, the
    smaller of its two growth-rate bounds (``ddx`` of the state's rate at a fixed drive
    potential, and at a fixed current through the drive), on a state node; nothing else."""
    blocks = STEP_HINT.findall(VA.read_text())
    assert len(blocks) == 1
    statements = [line.strip() for line in blocks[0].splitlines()
                  if line.strip() and not line.strip().startswith("//")]
    number = r"[0-9.eE+-]+"
    # groups: 1 the rate, 2 the state node, 3 the drive node, 4 the current,
    # 5 its conductance to the drive
    pattern = (rf"\$bound_step\(min\({number}/max\(ddx\((\w+), V\((\w+)\)\), {number}\), "
               rf"{number}/max\(ddx\(\1, V\(\2\)\) - ddx\(\1, V\((\w+)\)\)"
               rf"\*ddx\((\w+), V\(\2\)\)\*(ddx\(\4, V\(\3\)\))/\(\5\*\5 \+ {number}\), "
               rf"{number}\)\)\);")
    found = [re.fullmatch(pattern, s) for s in statements]
    assert all(found), statements
    assert [(m.group(2), m.group(3)) for m in found] == [(b.node, b.drive)
                                                         for b in MODEL.step_bounds]
    assert {m.group(2) for m in found} <= {"dgap", "dwidth", "dtemp"}


def test_the_simulator_symbols_are_set_once_first():
    """The simulator's symbols are set at the top of the analog block, once each."""
    text = VA.read_text()
    body = text.split("analog begin\n", 1)[1].splitlines()
    assert [line.strip() for line in body[:len(SIMULATOR)]] == [
        f"{name} = {value};" for name, value in SIMULATOR.items()]
    for name, value in SIMULATOR.items():
        assert text.count(f"{name} = {value};") == 1


@pytest.mark.parametrize("rule", sorted(FORBIDDEN))
def test_no_forbidden_construct(rule):
    found = re.findall(FORBIDDEN[rule], code())
    assert not found, f"{rule}: {found[:3]}"


def test_every_parameter_has_range_units_and_desc():
    text = VA.read_text()
    declared = re.findall(r'\(\*(.*?)\*\)\s*\n\s*parameter real (\w+) = [^;]* from ([\[(][^;]*);',
                          text)
    names = {name for _, name, _ in declared}
    assert names == {p.name for p in MODEL.parameters if p.kind != "environment"}
    for attrs, name, rng in declared:
        assert 'units="' in attrs and 'desc="' in attrs, name
        assert re.match(r"[\[(][^:]+:[^\])]+[\])]", rng), (name, rng)


def test_only_limexp_style_safe_exponentials():
    bare = re.findall(r"(?<![A-Za-z_`])exp\s*\(", code())
    # exp appears only inside the SAFE_EXP / SOFTPLUS macros, with bounded arguments
    macros = re.findall(r"`define[^\n]*", VA.read_text())
    assert len(bare) == sum(m.count("exp(") for m in macros)


@pytest.mark.parametrize("defines", [[], ["-D", NO_BOUND_STEP]], ids=["hint", "no-hint"])
def test_compiles_with_openvaf(tmp_path, defines):
    proc = subprocess.run([openvaf(), *defines, str(VA), "-o", str(tmp_path / "rram.osdi")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in (proc.stdout + proc.stderr).lower()
