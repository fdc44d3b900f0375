"""Every command against every class of bad input, as a user and an attacker would try.

Each case runs the real ``rram`` command (in this process, or in a child process for the
cases that once hung, so that a hang fails through the timeout) and asserts: exit status
2, exactly one line on standard error, beginning with ``Error:``, no traceback, no file
created, changed or removed in the working folder, and no output written outside it.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rram.card import default_card
from rram.variation import default_variation

DATA = Path(__file__).resolve().parent.parent / "fitting" / "data" / "tud_H16248L_M12"
TUD = DATA / "tud_H16248L_M12"
MC = ["mc", "--devices", "2", "--cycles", "1", "--seed", "1"]
NOT_UTF8 = b'{"parameters": {"ea": {"value": 1.4, "desc": "caf\xe9"}}}'


def _sweeps_csv(name: str, cycles: int = 2, scale: float = 1.0) -> str:
    """The first ``cycles`` measured sweeps of one polarity of the TUD device."""
    text = Path(f"{TUD}_{name}.csv").read_text().splitlines()
    lines = [text[0]]
    for row in text[1:]:
        cells = row.split(",")
        if int(cells[0]) <= cycles:
            cells[-1] = repr(float(cells[-1]) * scale)
            lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


def _variation(**change) -> str:
    data = json.loads(default_variation().to_json())
    first = data["variations"][0]
    first.update(change)
    return json.dumps(data)


def _distribution(v_reset: str | None = None, cycle: str | None = None,
                  resistance: str | None = None) -> str:
    text = Path(f"{TUD}_distribution.csv").read_text().splitlines()[:41]
    rows = [text[0]]
    for row in text[1:]:
        cells = row.split(",")
        if v_reset is not None:
            cells[5] = v_reset
        rows.append(",".join(cells))
    cells = rows[1].split(",")
    if cycle is not None:
        cells[1] = cycle
    if resistance is not None:
        cells[3] = resistance
    rows[1] = ",".join(cells)
    return "\n".join(rows) + "\n"


def _files() -> dict[str, str | bytes]:
    card = default_card().to_json()
    card_unit = json.loads(card)
    card_unit["parameters"]["ea"]["unit"] = "J"
    spec = json.loads(default_variation().to_json())
    dup = dict(spec, variations=[*spec["variations"], spec["variations"][0]])
    mixed = dict(spec, variations=[
        {"parameter": "eh", "kind": "d2d", "distribution": "lognormal", "sigma": 0.02},
        {"parameter": "eh", "kind": "c2c", "distribution": "normal", "sigma": 0.05}])
    return {
        "c.json": card,
        "unit.json": json.dumps(card_unit),
        "v.json": default_variation().to_json(),
        "huge_sigma.json": _variation(distribution="lognormal", parameter="kth", sigma=1000),
        "bool_sigma.json": _variation(sigma=True),
        "slow_d2d.json": _variation(slow=0.5, memory=10.0),
        "slow_above_one.json": _variation(kind="c2c", parameter="dea", slow=1.5, memory=10.0),
        "dup.json": json.dumps(dup),
        "mixed.json": json.dumps(mixed),
        "latin1.json": NOT_UTF8,
        "latin1.csv": b"cycle,time_s,V_V,I_A\n1,0,0,1e-9 \xb5A\n",
        "empty.csv": "",
        "endurance_flat.csv": "cycle,lrs,hrs\n" + "".join(f"{c},5e3,7e4\n" for c in range(10)),
        "endurance_neg.csv": "cycle,lrs,hrs\n0,5e3,7e4\n1,-5e3,7e4\n",
        "header.csv": "cycle,time_s,V_V,I_A\n",
        "iv.csv": _sweeps_csv("set_IV_101cyc"),
        "reset.csv": _sweeps_csv("reset_IV_105cyc"),
        "huge_iv.csv": _sweeps_csv("set_IV_101cyc", scale=1e30),
        "dist.csv": _distribution(),
        "flat.csv": _distribution(v_reset="1.0"),
        "twice.csv": _distribution() + _distribution().splitlines()[1] + "\n",
        "half_cycle.csv": _distribution(cycle="0.5"),
        "garbage_cycle.csv": _distribution(cycle="garbage"),
        "negative_cycle.csv": _distribution(cycle="-3"),
        "huge_resistance.csv": _distribution(resistance="1e300"),
        "no_stages.json": json.dumps({"stages": []}),
        "afile": "not a folder\n",
        # the strict JSON reader (issue 35)
        "digits.json": card.replace('"value": 1.', '"value": 1.' + "0" * 5000, 1),
        "deep_card.json": '{"parameters": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "deep_spec.json": '{"variations": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "deep_recipe.json": '{"stages": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "dup_key.json": card.replace("{", '{"name": "a", "name": "b", ', 1),
        "pulses.csv": "sequence,v_pulse,width_s,v_gate,r\na,-2,1e-6,3,\na,1,1e-6,1.2,2e5\n"
                      "a,1.5,1e-6,1.2,5e3\nb,-1.5,1e-6,3,5e4\n",
        "pulses_icc.csv": "v_pulse,width_s,icc_uA,r\n1,1e-6,100,2e5\n1.5,1e-6,100,5e3\n",
        "pulses_apart.csv": "sequence,v_pulse,width_s,v_gate,r\na,1,1e-6,1.2,2e5\n"
                            "b,1.5,1e-6,1.2,5e3\na,-1.5,1e-6,3,5e4\n",
        "reads_two.csv": "cell,time_ms,r_kohm\na,0,5\na,1,5.1\nb,0,7\nb,1,7.2\nb,2,7.1\n",
        "reads_back.csv": "cell,time_ms,r_kohm\na,0,5\na,2,5.1\na,1,5.2\n",
        "reads_zero.csv": "cell,read,r\na,0,5e3\na,1,0\na,2,5.1e3\n",
        "reads_far.csv": "cell,time_s,r\na,0,5e12\na,1,5.1e12\na,2,5.2e12\n",
        "drift_short.csv": "cell,time_s,r\na,0.1,5e4\na,0.2,4.9e4\na,0.3,4.8e4\n",
        "drift_up.csv": "cell,time_s,r\na,0.01,5e4\na,1,5.5e4\na,100,6e4\n",
    }


# (id, arguments) — every one must be refused with exit 2 before anything is written
CASES = [
    # 1. an output that is an input
    ("fit-out-is-data", ["fit", "iv.csv", "reset.csv", "--out", "iv.csv"]),
    ("fit-plot-is-data", ["fit", "iv.csv", "reset.csv", "--out", "o.json", "--plot",
                          "reset.csv"]),
    ("sweep-out-is-card", ["sweep", "--card", "c.json", "--out", "c.json"]),
    ("export-out-is-card", ["export", "--format", "spice", "--card", "c.json", "--out",
                            "c.json"]),
    ("netlist-out-is-card", ["netlist", "dc-loop", "--card", "c.json", "--out", "c.json"]),
    ("mc-out-is-card", [*MC, "--card", "c.json", "--out", "c.json"]),
    ("mc-out-is-variation", [*MC, "--variation", "v.json", "--out", "v.json"]),
    ("mc-sidecar-is-card", [*MC, "--card", "c.json", "--out", "c"]),
    ("fit-cycles-out-is-card", ["fit-cycles", "iv.csv", "reset.csv", "--card", "c.json",
                                "--out", "c.json"]),
    ("fit-variation-out-is-data", ["fit-variation", "dist.csv", "--out", "dist.csv"]),
    ("array-out-is-card", ["array", "read", "--card", "c.json", "--out", "c.json"]),
    ("array-rows-0", ["array", "read", "--rows", "0", "--out", "r.csv"]),
    ("array-after-negative", ["array", "read", "--after", "-1", "--out", "r.csv"]),
    ("array-bake-hot", ["array", "read", "--after", "10", "--bake", "900", "--out", "r.csv"]),
    ("array-bake-without-after", ["array", "read", "--bake", "85", "--out", "r.csv"]),
    ("array-rho-negative", ["array", "netlist", "--rho", "-1e-8", "--out", "a.cir"]),
    ("array-vmm-parent-is-file", ["array", "vmm", "--out", "afile/v.csv"]),
    ("array-margin-cell-outside", ["array", "margin", "--search", "--cell", "8,0", "--out",
                                   "w.csv"]),
    ("array-em-limit-negative", ["array", "read", "--em-limit", "-1", "--em-out", "e.csv"]),
    ("array-beta-huge", ["array", "read", "--heat", "--beta", "5", "--em-out", "e.csv"]),
    ("array-em-sidecar-is-card", ["array", "read", "--card", "c.json", "--em-out", "c"]),
    ("array-em-out-is-plot", ["array", "read", "--em-out", "x.png", "--plot", "x.png"]),
    ("array-margin-cell-garbage", ["array", "margin", "--cell", "a,b"]),
    ("array-margin-out-no-search", ["array", "margin", "--out", "w.csv"]),
    ("array-margin-sidecar-is-card", ["array", "margin", "--search", "--card", "c.json",
                                      "--out", "c"]),
    ("array-write-cell-outside", ["array", "write", "--rows", "4", "--cols", "4", "--cell",
                                  "9,0", "--out", "w.csv"]),
    ("array-write-amplitude-0", ["array", "write", "--amplitude", "0", "--out", "w.csv"]),
    ("array-write-width-negative", ["array", "write", "--width", "-1e-6", "--out", "w.csv"]),
    ("array-write-count-0", ["array", "write", "--count", "0", "--out", "w.csv"]),
    ("array-write-sidecar-is-card", ["array", "write", "--card", "c.json", "--out", "c"]),
    ("array-disturb-1t1r", ["array", "disturb", "--topology", "1t1r", "--out", "d.csv"]),
    ("array-disturb-budget-no-sizes", ["array", "disturb", "--budget", "0.01", "--out",
                                       "b.csv"]),
    ("array-disturb-budget-bad-sizes", ["array", "disturb", "--budget", "0.01", "--sizes",
                                        "4;8", "--out", "b.csv"]),
    ("array-disturb-budget-0", ["array", "disturb", "--budget", "0", "--sizes", "4",
                                "--out", "b.csv"]),
    ("array-disturb-budget-out-is-card", ["array", "disturb", "--budget", "0.01", "--sizes",
                                          "4", "--card", "c.json", "--out", "c.json"]),
    ("array-disturb-budget-plot", ["array", "disturb", "--budget", "0.01", "--sizes", "4",
                                   "--plot", "b.png"]),
    ("array-disturb-pulse-short-for-rc", ["array", "disturb", "--r-driver", "1e6",
                                          "--r-sense", "1e6", "--rho", "1e-4", "--width",
                                          "1e-9", "--out", "d.csv"]),
    ("array-disturb-scheme-bogus", ["array", "disturb", "--scheme", "v/4", "--out", "d.csv"]),
    ("array-disturb-plot-parent-is-file", ["array", "disturb", "--plot", "afile/d.png"]),
    ("array-disturb-out-is-variation", ["array", "disturb", "--variation", "v.json", "--out",
                                        "v.json"]),
    # 2. stimulus out of range (mc hung on it)
    ("mc-v-set-1e6", [*MC, "--v-set", "1e6", "--out", "m.parquet"]),
    ("mc-rate-1e300", [*MC, "--rate", "1e300", "--out", "m.parquet"]),
    ("sweep-v-set-1e6", ["sweep", "--v-set", "1e6", "--out", "s.csv"]),
    # 5. outputs that cannot be written
    ("sweep-parent-is-file", ["sweep", "--out", "afile/s.csv"]),
    ("card-parent-is-file", ["card", "--out", "afile/c.json"]),
    ("export-parent-is-file", ["export", "--format", "veriloga", "--out", "afile/r.va"]),
    ("netlist-parent-is-file", ["netlist", "dc-loop", "--out", "afile/d.cir"]),
    ("mc-parent-is-file", [*MC, "--out", "afile/m.parquet"]),
    ("fit-parent-is-file", ["fit", "iv.csv", "reset.csv", "--out", "afile/o.json"]),
    ("fit-cycles-parent-is-file", ["fit-cycles", "iv.csv", "reset.csv", "--card", "c.json",
                                   "--out", "afile/o.csv"]),
    ("demo-parent-is-file", ["demo", "--out", "afile/demo"]),
    ("card-read-only", ["card", "--out", "/sys/rram-card.json"]),
    ("export-read-only", ["export", "--format", "spice", "--out", "/sys/rram.lib"]),
    # 5. inputs that cannot be read
    ("card-not-utf8", ["sweep", "--card", "latin1.json", "--out", "s.csv"]),
    ("variation-not-utf8", [*MC, "--variation", "latin1.json", "--out", "m.parquet"]),
    ("recipe-not-utf8", ["fit", "iv.csv", "reset.csv", "--recipe", "latin1.json", "--out",
                         "o.json"]),
    ("iv-not-utf8", ["fit", "latin1.csv", "--out", "o.json"]),
    ("dist-not-utf8", ["fit-variation", "latin1.csv", "--out", "o.json"]),
    ("scatter-not-utf8", ["fit-variation", "dist.csv", "--scatter", "latin1.csv", "--out",
                          "o.json"]),
    ("fit-empty", ["fit", "empty.csv", "--out", "o.json"]),
    ("fit-header-only", ["fit", "header.csv", "--out", "o.json"]),
    ("fit-cycles-empty", ["fit-cycles", "empty.csv", "--card", "c.json", "--out", "o.csv"]),
    ("fit-variation-empty", ["fit-variation", "empty.csv", "--out", "o.json"]),
    ("fit-pulses-empty", ["fit-pulses", "empty.csv", "--out", "o.json"]),
    ("fit-pulses-is-iv", ["fit-pulses", "iv.csv", "--out", "o.json"]),
    ("fit-pulses-out-is-data", ["fit-pulses", "pulses.csv", "--out", "pulses.csv"]),
    ("fit-pulses-holdout-unknown", ["fit-pulses", "pulses.csv", "--holdout", "zz", "--out",
                                    "o.json"]),
    ("fit-pulses-transistor-of-1r", ["fit-pulses", "pulses_icc.csv", "--kp", "1e-4", "--out",
                                     "o.json"]),
    ("fit-pulses-apart", ["fit-pulses", "pulses_apart.csv", "--out", "o.json"]),
    ("fit-pulses-read-gate", ["fit-pulses", "pulses.csv", "--read-gate", "50", "--out",
                              "o.json"]),
    ("fit-noise-empty", ["fit-noise", "empty.csv", "--out", "o.json"]),
    ("endurance-no-cycles", ["endurance", "--out", "e.csv"]),
    ("endurance-v-set-negative", ["endurance", "--cycles", "10", "--v-set", "-1", "--out",
                                  "e.csv"]),
    ("endurance-out-is-card", ["endurance", "--card", "c.json", "--cycles", "10", "--out",
                               "c.json"]),
    ("endurance-width-nan", ["endurance", "--cycles", "10", "--width", "nan", "--out",
                             "e.csv"]),
    ("fit-endurance-empty", ["fit-endurance", "empty.csv", "--out", "o.json"]),
    ("fit-endurance-is-iv", ["fit-endurance", "iv.csv", "--out", "o.json"]),
    ("fit-endurance-never-closes", ["fit-endurance", "endurance_flat.csv", "--out", "o.json"]),
    ("fit-endurance-negative-ohm", ["fit-endurance", "endurance_neg.csv", "--out", "o.json"]),
    ("fit-noise-is-iv", ["fit-noise", "iv.csv", "--out", "o.json"]),
    ("fit-noise-two-reads", ["fit-noise", "reads_two.csv", "--out", "o.json"]),
    ("fit-noise-time-back", ["fit-noise", "reads_back.csv", "--out", "o.json"]),
    ("fit-noise-zero-ohm", ["fit-noise", "reads_zero.csv", "--interval", "1e-3", "--out",
                            "o.json"]),
    ("fit-noise-no-interval", ["fit-noise", "reads_zero.csv", "--out", "o.json"]),
    ("fit-noise-beyond-card", ["fit-noise", "reads_far.csv", "--out", "o.json"]),
    ("fit-noise-v-read", ["fit-noise", "reads_far.csv", "--v-read", "9", "--out", "o.json"]),
    ("fit-noise-layout", ["fit-noise", "reads_far.csv", "--layout", "tall", "--out",
                          "o.json"]),
    ("fit-noise-out-is-data", ["fit-noise", "reads_far.csv", "--out", "reads_far.csv"]),
    ("fit-relaxation-empty", ["fit-relaxation", "empty.csv", "--out", "o.json"]),
    ("fit-relaxation-short", ["fit-relaxation", "drift_short.csv", "--out", "o.json"]),
    ("fit-relaxation-rising", ["fit-relaxation", "drift_up.csv", "--out", "o.json"]),
    ("fit-relaxation-time-back", ["fit-relaxation", "reads_back.csv", "--out", "o.json"]),
    ("fit-relaxation-out-is-data", ["fit-relaxation", "drift_up.csv", "--out",
                                    "drift_up.csv"]),
    ("scatter-empty", ["fit-variation", "dist.csv", "--scatter", "empty.csv", "--out",
                       "o.json"]),
    ("scatter-is-iv", ["fit-variation", "dist.csv", "--scatter", "iv.csv", "--out",
                       "o.json"]),
    ("mc-sigma-1000", [*MC, "--variation", "huge_sigma.json", "--out", "m.parquet"]),
    ("mc-slow-d2d", [*MC, "--variation", "slow_d2d.json", "--out", "m.parquet"]),
    ("mc-slow-above-one", [*MC, "--variation", "slow_above_one.json", "--out", "m.parquet"]),
    ("mc-scheduler-bogus", [*MC, "--scheduler", "bogus", "--out", "m.parquet"]),
    ("mc-scheduler-unreachable", [*MC, "--scheduler", "tcp://127.0.0.1:9", "--out",
                                  "m.parquet"]),
    # 6. a measured spread of zero
    ("fit-variation-zero-spread", ["fit-variation", "flat.csv", "--out", "o.json"]),
    ("fit-variation-row-twice", ["fit-variation", "twice.csv", "--out", "o.json"]),
    # 7. a recipe with no stages
    ("fit-no-stages", ["fit", "iv.csv", "reset.csv", "--recipe", "no_stages.json", "--out",
                       "o.json"]),
    # 8. nonsense data
    ("fit-currents-1e30", ["fit", "huge_iv.csv", "reset.csv", "--out", "o.json"]),
    ("fit-compliance-1", ["fit", "iv.csv", "reset.csv", "--compliance", "1", "--out",
                          "o.json"]),
    # 9. names that break a target
    ("export-name-module", ["export", "--format", "veriloga", "--name", "module", "--out",
                            "r.va"]),
    ("export-name-analog", ["export", "--format", "veriloga", "--name", "analog", "--out",
                            "r.va"]),
    ("export-name-exp", ["export", "--format", "veriloga", "--name", "exp", "--out", "r.va"]),
    ("netlist-instance-gnd", ["netlist", "dc-loop", "--instance", "0", "--out", "d.cir"]),
    # 10. silent leniency
    ("card-unit-joule", ["sweep", "--card", "unit.json", "--out", "s.csv"]),
    ("variation-sigma-true", [*MC, "--variation", "bool_sigma.json", "--out", "m.parquet"]),
    ("variation-duplicate", [*MC, "--variation", "dup.json", "--out", "m.parquet"]),
    ("variation-mixed", [*MC, "--variation", "mixed.json", "--out", "m.parquet"]),
    ("dist-cycle-half", ["fit-variation", "half_cycle.csv", "--out", "o.json"]),
    ("dist-cycle-garbage", ["fit-variation", "garbage_cycle.csv", "--out", "o.json"]),
    ("option-reltol-negative", ["netlist", "dc-loop", "--option", "reltol=-1", "--out",
                                "d.cir"]),
    ("option-reltol-zero", ["netlist", "dc-loop", "--option", "reltol=0", "--out", "d.cir"]),
    ("option-unknown", ["netlist", "dc-loop", "--option", "bogusopt=1", "--out", "d.cir"]),
    ("tmax-tiny", ["netlist", "dc-loop", "--tmax", "1e-30", "--out", "d.cir"]),
    ("sweep-missing-folder", ["sweep", "--out", "nope/s.csv"]),
    ("mc-missing-folder", [*MC, "--out", "nope/m.parquet"]),
    ("demo-missing-parent", ["demo", "--out", "nope/deeper"]),
    ("fit-variation-plots-missing-parent", ["fit-variation", "dist.csv", "--out", "o.json",
                                            "--plots", "nope/deeper"]),
    # -- round 2 (issue 35) --
    # 11. JSON a parser chokes on: numbers of 5000 digits, nesting 1e5 deep, a key twice
    ("card-5000-digits", ["sweep", "--card", "digits.json", "--out", "s.csv"]),
    ("card-nested-1e5", ["sweep", "--card", "deep_card.json", "--out", "s.csv"]),
    ("variation-nested-1e5", [*MC, "--variation", "deep_spec.json", "--out", "m.parquet"]),
    ("recipe-nested-1e5", ["fit", "iv.csv", "reset.csv", "--recipe", "deep_recipe.json",
                           "--out", "o.json"]),
    ("card-key-twice", ["sweep", "--card", "dup_key.json", "--out", "s.csv"]),
    # 12. numbers that overflow where they enter
    ("fit-holdout-denormal", ["fit", "iv.csv", "reset.csv", "--holdout", "1e-320", "--out",
                              "o.json"]),
    ("fit-variation-holdout-denormal", ["fit-variation", "dist.csv", "--holdout", "1e-320",
                                        "--out", "o.json"]),
    ("fit-variation-weight-1e308", ["fit-variation", "dist.csv", "--weight", "v_set_V=1e308",
                                    "--out", "o.json"]),
    ("fit-variation-weight-negative", ["fit-variation", "dist.csv", "--weight",
                                       "v_set_V=-1", "--out", "o.json"]),
    ("fit-variation-cycle-negative", ["fit-variation", "negative_cycle.csv", "--out",
                                      "o.json"]),
    ("fit-variation-resistance-1e300", ["fit-variation", "huge_resistance.csv", "--out",
                                        "o.json"]),
    # 13. options that would do nothing
    ("fit-variation-weight-skipped", ["fit-variation", "dist.csv", "--skip", "v_set_V",
                                      "--weight", "v_set_V=2", "--out", "o.json"]),
    ("array-v-gate-on-1r", ["array", "read", "--v-gate", "1.0", "--out", "r.csv"]),
    ("array-selector-on-1t1r", ["array", "netlist", "--topology", "1t1r", "--selector-i0",
                                "1e-8", "--out", "a.cir"]),
    ("array-beta-without-heat", ["array", "read", "--beta", "0.001", "--out", "r.csv"]),
    ("mc-workers-with-scheduler", [*MC, "--workers", "2", "--scheduler", "tcp://127.0.0.1:9",
                                   "--out", "m.parquet"]),
    ("export-name-of-the-array-cells", ["export", "--format", "veriloga", "--name",
                                        "rram_frozen", "--out", "r.va"]),
    # 14. sizes within the accepted ranges that no machine here holds: refused at once
    ("array-read-4096", ["array", "read", "--rows", "4096", "--cols", "4096", "--out",
                         "r.csv"]),
    ("array-read-1024-256-segments", ["array", "read", "--rows", "1024", "--cols", "1024",
                                      "--segments", "256", "--out", "r.csv"]),
    ("array-netlist-2048-256-segments", ["array", "netlist", "--rows", "2048", "--cols",
                                         "2048", "--segments", "256", "--out", "a.cir"]),
    ("array-vmm-4096", ["array", "vmm", "--rows", "4096", "--cols", "4096"]),
    ("mc-1e8-devices-1e6-cycles", ["mc", "--devices", "100000000", "--cycles", "1000000",
                                   "--seed", "1", "--out", "m.parquet"]),
    ("mc-chunk-of-1e6-devices", ["mc", "--devices", "1000000", "--cycles", "20", "--seed",
                                 "1", "--chunk", "1000000", "--out", "m.parquet"]),
    ("mc-workers-1024", [*MC, "--workers", "1024", "--out", "m.parquet"]),
]


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            if p.is_file() else "dir" for p in sorted(folder.rglob("*"))}


#: Cases that once hung: run in a child process, so that a regression fails on the timeout.
IN_A_PROCESS = {"mc-v-set-1e6", "mc-rate-1e300", "mc-scheduler-unreachable"}


def _run(case: str, args: list[str], cwd: Path) -> tuple[int, str]:
    """(exit status, standard error) of ``rram ARGS`` run in ``cwd``."""
    if case in IN_A_PROCESS:
        run = subprocess.run([sys.executable, "-m", "rram.cli", *args], cwd=cwd,
                             capture_output=True, text=True, timeout=120)
        return run.returncode, run.stderr
    from click.testing import CliRunner

    from rram.cli import main

    result = CliRunner().invoke(main, args)  # in this process: seconds saved per case
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        return 1, "".join(traceback.format_exception(result.exception))
    return result.exit_code, result.stderr


@pytest.mark.parametrize("case, args", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_refused_in_one_line_and_nothing_is_written(case, args, tmp_path,
                                                                 monkeypatch):
    for name, content in _files().items():
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    before = _snapshot(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, stderr = _run(case, args, tmp_path)
    lines = stderr.strip().splitlines()
    assert code == 2, (code, stderr[-2000:])
    assert len(lines) == 1 and lines[0].startswith("Error: "), stderr[-2000:]
    assert "Traceback" not in stderr
    assert _snapshot(tmp_path) == before
    assert not Path("/sys/rram-card.json").exists()


def test_every_command_has_a_case():
    from rram.cli import main

    tried = {c[1][0] for c in CASES}
    assert set(main.commands) - {"generate"} <= tried


@pytest.mark.parametrize("args", [
    ["card", "--out", "special"],
    ["sweep", "--out", "special"],
    ["export", "--format", "spice", "--out", "special"],
    ["sweep", "--card", "special", "--out", "s.csv"],
], ids=["card-out", "sweep-out", "export-out", "card-in"])
def test_a_fifo_is_neither_written_over_nor_read(args, tmp_path, monkeypatch):
    """An output is only ever a regular file (an atomic write would replace a device
    node or a FIFO by a file); an input FIFO would block its reader forever."""
    import os

    os.mkfifo(tmp_path / "special")
    monkeypatch.chdir(tmp_path)
    code, stderr = _run("fifo", args, tmp_path)
    lines = stderr.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "not a regular file" in lines[0], stderr
    assert Path("special").is_fifo() and sorted(os.listdir(tmp_path)) == ["special"]
