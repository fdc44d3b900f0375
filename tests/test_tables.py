"""Issue 38 §1: resistance records in the shapes users keep them (state rows, cycle
rows, one row per device; comma, semicolon, tab or blank separated; headerless; unit
suffixes) load as the same long table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from rram.cli import main
from rram.errors import InputError
from rram.fit.data import load_distribution, load_iv

#: 3 devices x 4 cycles, R_LRS ~5 kOhm after each SET, R_HRS ~100 kOhm after each RESET
#: (ohms); as state rows, a cycle's HRS row is the state its SET starts from: the HRS the
#: previous cycle's RESET left
RNG = np.random.default_rng(3)
LRS = np.round(5e3 * np.exp(RNG.normal(0, 0.1, (3, 4))), 1)
HRS = np.round(1e5 * np.exp(RNG.normal(0, 0.8, (3, 4))), 1)
DEVICES = ("d1", "d2", "d3")


def _rows():
    for d, name in enumerate(DEVICES):
        for c in range(4):
            yield name, c + 1, LRS[d, c], HRS[d, c]


def _state_rows(sep=",", unit="ohm", scale=1.0):
    lines = [sep.join(("device", "cycle", "state", f"resistance_{unit}"))]
    for name, c, lrs, hrs in _rows():
        lines += [sep.join((name, str(c), "LRS", str(float(lrs / scale)))),
                  sep.join((name, str(c + 1), "HRS", str(float(hrs / scale))))]
    return "\n".join(lines) + "\n"


def _reference(tmp_path) -> pd.DataFrame:
    (tmp_path / "ref.csv").write_text(_state_rows())
    return load_distribution(tmp_path / "ref.csv")


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    key = ["device", "cycle", "state"]
    a, b = (f.sort_values(key).reset_index(drop=True) for f in (a, b))
    assert a[key].astype(str).equals(b[key].astype(str))
    np.testing.assert_allclose(a["resistance_ohm"], b["resistance_ohm"], rtol=1e-12)


def _cycle_rows(sep=";"):
    lines = [sep.join(("device", "cycle", "r_lrs_kohm", "R_HRS (Ω)"))]
    lines += [sep.join((n, str(c), str(float(lrs / 1e3)), str(float(hrs))))
              for n, c, lrs, hrs in _rows()]
    return "\n".join(lines) + "\n"


def _wide(header: bool, scale: float = 1e3, sep: str = ","):
    lines = [sep.join(["device"] + [f"{s}{c + 1}" for c in range(4) for s in ("L", "H")])] \
        if header else []
    for d, name in enumerate(DEVICES):
        values = [str(float(x / scale)) for c in range(4) for x in (LRS[d, c], HRS[d, c])]
        lines.append(sep.join(([name] if header else []) + values))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("shape, text, kwargs", [
    ("tsv, kohm", _state_rows("\t", "kohm", 1e3), {}),
    ("semicolon, MΩ", _state_rows(";", "MΩ", 1e6).replace("resistance_MΩ", "R (MΩ)"), {}),
    ("blank-aligned", _state_rows("   "), {}),
    ("cycle rows", _cycle_rows(), {}),
    ("headerless long", _state_rows()[_state_rows().index("\n") + 1:],
     {"columns": ("device", "cycle", "state", "resistance_ohm")}),
    ("wide with labels", _wide(True), {"layout": "wide:LRS,HRS:kohm"}),
])
def test_every_shape_loads_as_the_same_record(tmp_path, shape, text, kwargs):
    path = tmp_path / "record.txt"
    path.write_text(text, encoding="utf-8")
    _same(load_distribution(path, **kwargs), _reference(tmp_path))


def test_a_headerless_wide_table_numbers_its_devices_by_row(tmp_path):
    path = tmp_path / "wide.tsv"
    path.write_text(_wide(False, sep="\t"))
    n = 1 + 2 * 4
    got = load_distribution(path, columns=[f"c{k}" for k in range(n - 1)],
                            layout="wide:LRS,HRS:kohm")
    ref = _reference(tmp_path).replace({"device": {"d1": "1", "d2": "2", "d3": "3"}})
    _same(got, ref)


def test_a_wide_table_of_one_state_and_a_ragged_record(tmp_path):
    path = tmp_path / "hrs.csv"
    rows = ["device,c1,c2,c3", "a,1e5,2e5,", "b,3e5,4e5,5e5"]
    path.write_text("\n".join(rows) + "\n")
    got = load_distribution(path, layout="wide:HRS")
    assert list(got["state"].unique()) == ["HRS"]
    # an empty cell is a read not taken
    assert len(got) == 5 and got["resistance_ohm"].max() == 5e5


@pytest.mark.parametrize("text, kwargs, message", [
    ("1,2,LRS,5000\n1,3,HRS,9e4\n", {},
     "line 1 is numbers (1, 2, LRS, 5000), not column names: name the columns of a "
     "headerless file (--columns NAME,NAME,...)"),
    ("5000," * 600 + "1\n", {}, "(601 values)"),
    ("device,cycle,state,resistance_mohm\na,1,LRS,5\n", {},
     "unknown resistance unit 'mohm' (a milliohm? write Mohm for megohms)"),
    ("device,cycle,state,resistance_ohm\na,1,LRS,5000\n", {"columns": ("a", "b", "c")},
     "line 1 has 4 fields, and 3 column names were given"),
    ("device,l1,h1,l2\na,1,2,3\n", {"layout": "wide:LRS,HRS"},
     "3 value columns are not a whole number of cycles of 2 state(s) (LRS, HRS)"),
    ("device,l1\na,1\n", {"layout": "wide:LRS,XRS"}, "the states are LRS and/or HRS"),
    ("device,l1\na,1\n", {"layout": "tall"}, "layout 'tall': valid are long and wide"),
    ("device,l1,h1\na,5000,x\n", {"layout": "wide:LRS,HRS"},
     "line 2, value 2: column 'resistance_ohm': 'x' is not a finite number"),
    ("device,cycle,resistance_ohm\na,1,5000\n", {}, "missing column 'state'"),
    ("device,cycle,r_lrs,r_hrs\na,1,5000,-1\n", {}, "line 2: resistance -1 Ohm must be > 0"),
])
def test_a_table_the_loader_cannot_read_is_named_with_the_reason(tmp_path, text, kwargs,
                                                                 message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        load_distribution(path, **kwargs)
    assert message in str(err.value)


def test_a_headerless_iv_file_with_its_columns_named(tmp_path):
    v = np.r_[np.linspace(0, 1, 6), np.linspace(1, 0, 6)[1:]]
    body = "\n".join(f"{k * 1e-3}\t{float(x)}\t{float(x) * 10}" for k, x in enumerate(v)) + "\n"
    path = tmp_path / "iv.tsv"
    path.write_text(body)
    (curve,) = load_iv(path, columns=("time_s", "voltage_V", "current_uA"))
    np.testing.assert_allclose(curve.current, v * 1e-5)
    with pytest.raises(InputError, match="line 1 is numbers"):
        load_iv(path)


def test_fit_variation_takes_the_shape_from_the_command_line(tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text(_wide(True))
    r = CliRunner().invoke(main, ["fit-variation", str(path), "--layout", "wide:LRS,ZRS",
                                  "--out", str(tmp_path / "s.json")])
    assert r.exit_code == 2 and "the states are LRS and/or HRS" in r.output
    r = CliRunner().invoke(main, ["fit-variation", str(path), "--columns", "a,,b",
                                  "--out", str(tmp_path / "s.json")])
    assert r.exit_code == 2 and "no empty name" in r.output
    assert not (tmp_path / "s.json").exists()


def test_a_monte_carlo_table_loads_as_the_record_it_simulates(tmp_path):
    """``rram mc``'s rows (a cycle's R after its SET and after its RESET) load as the
    measured record they stand for: each HRS is the state the next SET starts from."""
    from rram.mc import MonteCarlo, run_devices

    frame = run_devices(MonteCarlo(devices=3, cycles=3, seed=2), range(3))
    frame.to_csv(tmp_path / "mc.csv", index=False)
    got = load_distribution(tmp_path / "mc.csv")
    lrs = got[got["state"] == "LRS"].set_index(["device", "cycle"])["resistance_ohm"]
    hrs = got[got["state"] == "HRS"].set_index(["device", "cycle"])["resistance_ohm"]
    for row in frame.itertuples():
        assert lrs[str(row.device), row.cycle] == pytest.approx(row.r_lrs_ohm)
        assert hrs[str(row.device), row.cycle + 1] == pytest.approx(row.r_hrs_ohm)
    # every simulated SET and RESET switched, and the record judges them so
    assert (got["reason"] == "").all()
