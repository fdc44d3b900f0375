"""Parameters and cards: metadata, validation that names the culprit, JSON round trip."""

from __future__ import annotations

import json
import math

import pytest

from rram import CardError, default_card, load_card, make_card
from rram.model import MODEL
from rram.params import RESERVED


def test_every_parameter_is_documented_with_unit_range_and_group():
    names = [p.name for p in MODEL.parameters]
    assert len(names) == len(set(names))
    for p in MODEL.parameters:
        assert p.desc and p.group and p.unit is not None
        assert p.choices or (p.lower > -math.inf and p.upper < math.inf), p.name
        assert p.name not in RESERVED
        assert p.check(p.default) is None


def test_default_card_follows_v2_where_the_physics_is_unchanged():
    c = default_card()
    # v2.0 values kept
    for name, v in {"a0": 0.25e-9, "f0": 1e13, "xt": 0.4e-9, "j0": 1e13, "rho0": 1.9635e-5,
                    "zion": 1, "vcap": 100, "tnom": 300, "rtop": 20, "rbot": 20,
                    "rshunt": 2e9, "cp": 1e-15}.items():
        assert c[name] == pytest.approx(v), name
    # documented changes: every changed value says so in its description
    for name in ("ea", "eh", "ei", "ri", "alpha", "alphah", "vt", "l0", "weff"):
        assert "v2.0" in default_card().parameter(name).desc, name


def test_every_parameter_has_a_role_and_the_lists_derive_from_it():
    from rram.model import MODEL
    from rram.variation import held, kinetic

    assert set(MODEL.with_role("state")) == {"x0", "w0"}
    assert set(MODEL.with_role("smoothing")) == {"vs", "xeps", "lmin", "xbound", "swt"}
    assert set(MODEL.with_role("kinetic")) == kinetic(MODEL)
    assert held(MODEL) == {"l0": "reset", "wmin": "reset", "wcf": "reset", "kth": "set",
                           "rtop": "set"}
    # the recipe may fit structure and kinetics, never a variation hook or a guard
    assert "dea" not in MODEL.fittable and "tceil" not in MODEL.fittable
    assert {"ea", "x0", "kth", "rtop"} <= set(MODEL.fittable)


@pytest.mark.parametrize(
    "values, fragment",
    [
        ({"bogus": 1.0}, "unknown parameter(s) bogus"),
        ({"ea": 9.0}, "parameter ea: 9 is outside [0.1, 4] eV"),
        ({"ea": float("nan")}, "parameter ea: nan is not finite"),
        ({"vt": float("inf")}, "parameter vt: inf is not finite"),
        ({"polarity": 0.5}, "parameter polarity: 0.5 is not one of {-1, 1}"),
        ({"l0": "3e-9"}, "parameter l0: '3e-9' is not a number"),
        ({"x0": 4e-9}, "x0: 4e-09 m exceeds l0"),
    ],
)
def test_bad_values_name_the_parameter_and_the_range(values, fragment):
    with pytest.raises(CardError) as exc:
        make_card(values)
    assert fragment in str(exc.value)


def test_card_is_immutable_and_replace_validates():
    c = default_card()
    with pytest.raises(TypeError):
        c.values["ea"] = 1.0  # type: ignore[index]
    c2 = c.replace(ea=1.5)
    assert c2["ea"] == 1.5 and c["ea"] == default_card()["ea"] != 1.5
    with pytest.raises(CardError, match="ea"):
        c.replace(ea=-1.0)


def test_json_round_trip_and_file_errors(tmp_path):
    c = make_card(ea=1.4, kw=2.0)
    p = tmp_path / "card.json"
    p.write_text(c.to_json())
    back = load_card(p)
    assert back.values == c.values
    assert back.digest == c.digest
    data = json.loads(c.to_json())
    assert data["parameters"]["ea"] == {"value": 1.4, "unit": "eV"}
    bad = tmp_path / "bad.json"
    bad.write_text('{"parameters": {"ea": {"value": 99}}}')
    with pytest.raises(CardError, match=r"bad.json: parameter ea: 99 is outside"):
        load_card(bad)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(CardError, match="not valid JSON"):
        load_card(broken)


def test_the_equations_refuse_undeclared_symbols():
    from rram.equations.scope import Symbols
    from rram.expr import ZERO, sym
    from rram.model import MODEL, Branch, check_symbols

    P = Symbols(MODEL.parameter_names)
    with pytest.raises(AttributeError, match="'rth' is not a parameter"):
        _ = P.rth  # a typo, or a parameter the physics no longer has
    typo = Branch("br", "ti", "bi", sym("jo") * sym("n_ti"), ZERO, "a typo of j0")
    with pytest.raises(ValueError, match="undeclared symbols jo"):
        check_symbols((*MODEL.branches, typo), MODEL.outputs, MODEL.parameters, MODEL.nodes)
