"""The command line: --help everywhere, exit code 2 naming the bad input, atomic output."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from rram.card import default_card
from rram.cli import main
from rram.engine.run import COLUMNS


@pytest.fixture
def run():
    runner = CliRunner()
    return lambda *args: runner.invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize("cmd", [[], ["card"], ["sweep"], ["demo"], ["generate"]])
def test_help_on_every_command(run, cmd):
    r = run(*cmd, "--help")
    assert r.exit_code == 0 and "Usage:" in r.output


def test_card_prints_and_writes_json(run, tmp_path):
    r = run("card")
    assert r.exit_code == 0
    data = json.loads(r.output)
    assert data["parameters"]["ea"]["value"] == default_card()["ea"]
    out = tmp_path / "c.json"
    assert run("card", "--out", str(out)).exit_code == 0
    assert json.loads(out.read_text()) == data


def test_sweep_writes_the_columns(run, tmp_path):
    out = tmp_path / "loop.csv"
    r = run("sweep", "--cycles", "2", "--compliance", "5e-5", "--out", str(out))
    assert r.exit_code == 0, r.output
    df = pd.read_csv(out)
    assert list(df.columns) == list(COLUMNS)
    assert set(df["cycle"]) == {0, 1}
    assert df["current_A"].max() == pytest.approx(5e-5, rel=0.02)


def test_sweep_negative_set_for_reversed_devices(run, tmp_path):
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"parameters": {"polarity": -1}}))
    out = tmp_path / "loop.csv"
    r = run("sweep", "--card", str(card), "--v-set", "-2", "--v-reset", "2", "--out", str(out))
    assert r.exit_code == 0, r.output
    df = pd.read_csv(out)
    assert df["current_A"].min() == pytest.approx(-1e-4, rel=0.02)  # SET at negative bias


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--v-set", "nan"], "--v-set"),
        (["--rate", "0"], "rate must be > 0"),
        (["--cycles", "0"], "--cycles"),
        (["--compliance", "-1"], "--compliance must be a finite number > 0"),
        (["--v-set", "1", "--v-reset", "1"], "opposite signs"),
        (["--engine", "spectre"], "--engine"),
    ],
)
def test_bad_sweep_options_exit_2_naming_the_input(run, tmp_path, args, fragment):
    out = tmp_path / "x.csv"
    r = run("sweep", *args, "--out", str(out))
    assert r.exit_code == 2
    assert fragment in r.output
    assert not out.exists()


def test_bad_card_exits_2_naming_parameter_and_range(run, tmp_path):
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"parameters": {"ea": {"value": 12}}}))
    out = tmp_path / "x.csv"
    r = run("sweep", "--card", str(card), "--out", str(out))
    assert r.exit_code == 2
    assert "parameter ea: 12 is outside [0.1, 4] eV" in r.output
    assert not out.exists()
    card.write_text(json.dumps({"parameters": {"eaa": 1}}))
    r = run("sweep", "--card", str(card), "--out", str(out))
    assert r.exit_code == 2 and "unknown parameter(s) eaa" in r.output


def test_failed_simulation_leaves_no_partial_output(run, tmp_path, monkeypatch):
    import rram.engine.run
    from rram.engine.run import Options, simulate

    def starved(*args, **kwargs):
        return simulate(*args, **{**kwargs, "options": Options(max_steps=20)})

    monkeypatch.setattr(rram.engine.run, "simulate", starved)
    out = tmp_path / "x.csv"
    out.write_text("previous content\n")
    r = run("sweep", "--out", str(out))
    assert r.exit_code == 1
    assert "step limit" in r.output
    assert out.read_text() == "previous content\n"
    assert not list(tmp_path.glob(".x.csv.*"))


@pytest.mark.parametrize(
    "weight, fragment",
    [("r_lrs=1", "unknown metric(s) r_lrs"), ("v_set_V=-1", "weight v_set_V=-1.0"),
     ("v_set_V", "expected METRIC=W"), ("v_set_V=abc", "expected METRIC=W")],
)
def test_bad_variation_weight_exits_2_naming_it(run, tmp_path, weight, fragment):
    dist = (Path(__file__).resolve().parents[1] / "fitting" / "data" / "tud_H16248L_M12"
            / "tud_H16248L_M12_distribution.csv")
    out = tmp_path / "v.json"
    r = run("fit-variation", str(dist), "--weight", weight, "--out", str(out))
    assert r.exit_code == 2
    assert fragment in r.output
    assert not out.exists()


def _default_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_ctrl_c_a_library_swallowed_comes_again_until_the_command_stops():
    """rram.interrupt: the command line's SIGINT handler repeats a Ctrl-C every RETRY_S
    until the command stops on it, and not after (a fresh clone's run once saw `rram
    array disturb` run on for 20 minutes after its Ctrl-C)."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import os, signal, time
        from rram import interrupt
        assert interrupt.install()
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:
            pass  # swallowed, as C code that clears every error does
        t0 = time.monotonic()
        try:
            while time.monotonic() - t0 < 30:
                sum(range(1000))
        except KeyboardInterrupt:
            interrupt.handled()
            print(f"again after {time.monotonic() - t0:.2f} s")
        time.sleep(3 * interrupt.RETRY_S)  # handled: no more
        print("done")
    """)
    # a background job inherits SIGINT ignored, and Python then keeps out of it: the
    # child starts with the default disposition, as a command typed at a terminal does
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=60, preexec_fn=_default_sigint)
    assert r.returncode == 0, r.stderr
    first, last = r.stdout.split("\n")[:2]
    assert first.startswith("again after") and float(first.split()[2]) <= 2.5
    assert last == "done"
