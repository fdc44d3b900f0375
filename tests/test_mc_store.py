"""The Monte Carlo output store: one run per ``--out`` (lock), verified parts on resume,
the sweep's input checks, bounded variation spreads, scheduler addresses, no leftovers,
and an all-failed study that does not pass for a success."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pandas as pd
import pytest

from rram.card import default_card
from rram.errors import InputError
from rram.experiment import DCLoop
from rram.mc import MonteCarlo, run_devices
from rram.mc import backend as mc_backend
from rram.mc.backend import run_mc
from rram.mc.report import check_outcome
from rram.mc.store import chunk_path, parts_dir, write_part
from rram.variation import Variation, VariationSpec, default_variation, load_variation

STUDY = {"devices": 6, "cycles": 1, "seed": 3}


class StopError(Exception):
    """Raised by a patched simulation to interrupt a run."""


def interrupted(tmp_path, monkeypatch):
    """(out, its parts folder, the devices of each simulation since): a run of STUDY in
    chunks of 2 devices interrupted after its first chunk; later simulations are
    recorded in the list."""
    out = tmp_path / "m.parquet"
    real, calls = run_devices, []

    def stopping(mc, devices):
        calls.append(list(devices))
        if len(calls) == 2 and stopping.armed:
            raise StopError
        return real(mc, devices)

    stopping.armed = True
    monkeypatch.setattr(mc_backend, "run_devices", stopping)
    with pytest.raises(StopError):
        run_mc(MonteCarlo(**STUDY), out, chunk=2, progress=False)
    stopping.armed = False
    calls.clear()
    return out, parts_dir(out), calls


# -- 1. one run per --out -------------------------------------------------------------------

HOLD = """
import sys, time
from pathlib import Path
from rram.mc.store import lock
out = Path(sys.argv[1])
lock(out.with_name(out.name + ".parts"), out)
print("locked", flush=True)
time.sleep(120)
"""


@pytest.mark.parametrize("resume", [False, True])
def test_a_second_run_is_refused_naming_the_holder_until_it_dies(tmp_path, resume):
    out = tmp_path / "m.parquet"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(InputError) as err:
            run_mc(MonteCarlo(**STUDY), out, resume=resume, progress=False)
        assert f"pid {holder.pid} on {socket.gethostname()}" in str(err.value)
        assert "--out" in str(err.value) and not out.exists()
    finally:
        holder.kill()
        holder.wait()
    # the kernel released the dead holder's lock: the next run goes ahead
    info = run_mc(MonteCarlo(**STUDY), out, resume=resume, progress=False)
    assert info.rows == 6 and not parts_dir(out).exists()


def test_the_lock_is_held_through_the_merge(tmp_path, monkeypatch):
    out = tmp_path / "m.parquet"
    seen = []
    real = mc_backend._assemble

    def assemble(mc, parts, bounds, target):
        # a second run while the first merges: refused
        try:
            run_mc(MonteCarlo(**STUDY), out, resume=True, progress=False)
        except InputError as exc:
            seen.append(str(exc))
        return real(mc, parts, bounds, target)

    monkeypatch.setattr(mc_backend, "_assemble", assemble)
    info = run_mc(MonteCarlo(**STUDY), out, progress=False)
    assert len(seen) == 1 and f"pid {os.getpid()}" in seen[0]
    assert info.rows == 6 and len(pd.read_parquet(out)) == 6


# -- 2. parts are verified before anything is simulated -------------------------------------

def _foreign(path, part):
    pd.read_parquet(part).to_parquet(path, index=False)  # valid Parquet, no provenance


def _other_study(path, part):
    other = MonteCarlo(**{**STUDY, "seed": 4})  # a valid part, of another seed
    write_part(other, run_devices(other, range(2, 4)), 2, 4, path)


def _truncated(path, part):
    data = part.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _garbage(path, part):
    path.write_bytes(b"not a parquet file at all")


def _renamed(path, part):
    path.write_bytes(part.read_bytes())  # the part of devices 0-1 under the name of 2-3


def _rewrite(path, change) -> None:
    """Rewrite the part at ``path`` with ``change`` applied to its rows, its provenance
    (the metadata) kept: what a bit flip inside a value, a tool or a hand edit leaves."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    frame = change(table.to_pandas())
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False)
                   .replace_schema_metadata(table.schema.metadata), path)


def _edited(change):
    """A genuine part of devices 2-3 of the study, then edited by ``change``."""
    def make(path, part):
        mc = MonteCarlo(**STUDY)
        write_part(mc, run_devices(mc, range(2, 4)), 2, 4, path)
        _rewrite(path, change)
    return make


def _flip_bit(frame):
    bits = frame["r_hrs_ohm"].to_numpy().view("u8").copy()
    bits[0] ^= 1 << 52  # the exponent's lowest bit: R_HRS doubles
    return frame.assign(r_hrs_ohm=bits.view("f8"))


@pytest.mark.parametrize("make, reason", [
    (_foreign, "no provenance"),
    (_other_study, "different study"),
    (_truncated, "not a readable Parquet file"),
    (_garbage, "not a readable Parquet file"),
    (_renamed, "holds devices [0, 2]"),
    (_edited(_flip_bit), "checksum mismatch"),
    (_edited(lambda f: f.assign(r_lrs_ohm=f["r_lrs_ohm"].where(f.index != 0))),
     "checksum mismatch"),
    (_edited(lambda f: f.assign(r_hrs_ohm=f["r_hrs_ohm"] * 1000)), "checksum mismatch"),
    (_edited(lambda f: f.assign(cycle=f["cycle"].astype("float64"))),
     "the type of column 'cycle' differs"),
    (_edited(lambda f: f.assign(reason=f["reason"].str.len())),
     "the type of column 'reason' differs"),
])
def test_a_bad_part_is_named_and_nothing_is_simulated(tmp_path, monkeypatch, make, reason):
    out, parts, calls = interrupted(tmp_path, monkeypatch)
    good = chunk_path(parts, 0, 2)
    assert good.exists()
    bad = chunk_path(parts, 2, 4)
    make(bad, good)
    with pytest.raises(InputError) as err:
        run_mc(MonteCarlo(**STUDY), out, resume=True, progress=False)
    message = str(err.value)
    assert str(bad) in message and reason in message and "delete" in message
    assert calls == [] and not out.exists()
    assert bad.exists() and good.exists()  # nothing of the user's removed
    # deleting the named part resumes: its chunk is simulated again, nothing duplicated
    bad.unlink()
    info = run_mc(MonteCarlo(**STUDY), out, resume=True, progress=False)
    assert (info.chunks_reused, info.chunks_run) == (1, 2) and calls == [[2, 3], [4, 5]]
    monkeypatch.undo()
    assert pd.read_parquet(out).equals(run_devices(MonteCarlo(**STUDY), range(6)))


def test_a_part_rewritten_unchanged_is_accepted(tmp_path, monkeypatch):
    """The control of the edits above: the same rows rewritten keep their checksum."""
    out, parts, _ = interrupted(tmp_path, monkeypatch)
    _rewrite(chunk_path(parts, 0, 2), lambda f: f)
    info = run_mc(MonteCarlo(**STUDY), out, resume=True, progress=False)
    assert (info.chunks_reused, info.chunks_run) == (1, 2)


def test_resume_refuses_other_files_and_another_chunking(tmp_path, monkeypatch):
    out, parts, calls = interrupted(tmp_path, monkeypatch)
    with pytest.raises(InputError, match=r"--chunk 3: the run .* used --chunk 2"):
        run_mc(MonteCarlo(**STUDY), out, resume=True, chunk=3, progress=False)
    stray = parts / "notes.parquet"
    stray.write_text("mine")
    with pytest.raises(InputError, match=r"notes\.parquet: not a part of this run"):
        run_mc(MonteCarlo(**STUDY), out, resume=True, progress=False)
    assert calls == [] and stray.read_text() == "mine"


@pytest.mark.parametrize("name", ["chunk-000000002-000000003.parquet", "manifest.json"])
def test_a_fifo_in_the_parts_folder_is_refused_without_blocking(tmp_path, monkeypatch,
                                                                 name):
    out, parts, calls = interrupted(tmp_path, monkeypatch)
    target = parts / name
    target.unlink(missing_ok=True)
    os.mkfifo(target)  # opening it to read would wait for a writer forever
    with pytest.raises(InputError, match="not a regular file"):
        run_mc(MonteCarlo(**STUDY), out, resume=True, progress=False)
    assert calls == []


@pytest.mark.parametrize("chunk", [0, "10", 2.5, True, -2])
def test_a_manifest_with_an_impossible_chunk_is_refused(tmp_path, monkeypatch, chunk):
    out, parts, calls = interrupted(tmp_path, monkeypatch)
    manifest = parts / "manifest.json"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**data, "chunk": chunk}))
    with pytest.raises(InputError, match="'chunk' must be a positive whole number"):
        run_mc(MonteCarlo(**STUDY), out, resume=True, progress=False)
    assert calls == []


def test_a_killed_write_leaves_no_trace_in_the_result(tmp_path, monkeypatch):
    out, parts, _ = interrupted(tmp_path, monkeypatch)
    (parts / ".chunk-000000002-000000003.parquet.abc123.part").write_bytes(b"half")
    info = run_mc(MonteCarlo(**STUDY), out, resume=True, progress=False)
    assert info.rows == 6 and not parts.exists()


# -- 3. the sweep's checks, shared ----------------------------------------------------------

@pytest.mark.parametrize("kwargs, fragment", [
    ({"v_set": 1e6}, "|v_set| and |v_reset| must be at most 20 V"),
    ({"v_reset": -21.0}, "|v_set| and |v_reset| must be at most 20 V"),
    ({"rate": 1e300}, "rate must be within [1e-06, 1e+09] V/s"),
    ({"rate": 1e-9}, "rate must be within [1e-06, 1e+09] V/s"),
])
def test_mc_and_sweep_refuse_the_same_loops_with_the_same_message(kwargs, fragment):
    with pytest.raises(InputError) as sweep_err:
        DCLoop.of_sweep(**kwargs)
    with pytest.raises(InputError) as mc_err:
        MonteCarlo(devices=1, cycles=1, protocol=DCLoop(**kwargs))
    assert fragment in str(sweep_err.value)
    assert str(mc_err.value) == str(sweep_err.value)


def test_compliance_out_of_range_is_refused_by_both():
    with pytest.raises(InputError, match=r"icc_set must be within \[1e-09, 0\.1\] A"):
        DCLoop(icc_set=10.0)
    with pytest.raises(InputError, match=r"--compliance must be within \[1e-09, 0\.1\] A"):
        DCLoop.of_sweep(compliance=10.0)


def test_cli_mc_refuses_a_huge_v_set_at_once(tmp_path):
    out = tmp_path / "m.parquet"
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "rram.cli", "mc", "--devices", "1",
                        "--cycles", "1", "--seed", "1", "--v-set", "1e6", "--out", str(out)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "must be at most 20 V" in r.stderr
    assert "Traceback" not in r.stderr and time.perf_counter() - t0 < 60
    assert list(tmp_path.iterdir()) == []


# -- 4. bounded spreads; no empty parts folder ----------------------------------------------

@pytest.mark.parametrize("entry, fragment", [
    (("kth", "d2d", "lognormal", 1000.0), "lognormal variation of kth: sigma must be within "
                                          "[0, 3]"),
    (("dea", "c2c", "normal", 1.1), "normal variation of dea: sigma must be within [0, 0.7]"),
    (("kth", "c2c", "lognormal", 0.1, "", 800.0), "shift must be within [-30, 30]"),
])
def test_spreads_beyond_their_bounds_are_refused_naming_the_entry(tmp_path, entry, fragment):
    with pytest.raises(InputError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        Variation(*entry)
    keys = ("parameter", "kind", "distribution", "sigma", "desc", "shift")
    items = [*json.loads(default_variation().to_json())["variations"],
             dict(zip(keys, entry, strict=False))]
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"variations": items}))
    with pytest.raises(InputError) as err:
        load_variation(path)
    assert str(path) in str(err.value) and f"variation {len(items) - 1}:" in str(err.value)


def test_a_run_that_fails_before_any_part_leaves_nothing(tmp_path):
    # a centre outside dea's range: every draw is rejected, the first chunk fails
    spec = VariationSpec((Variation("dea", "d2d", "normal", 0.01, shift=1.3),))
    out = tmp_path / "m.parquet"
    with pytest.raises(InputError, match="cannot be drawn"):
        run_mc(MonteCarlo(spec=spec, **STUDY), out, progress=False)
    assert list(tmp_path.iterdir()) == []


# -- 5. scheduler addresses ------------------------------------------------------------------

@pytest.mark.parametrize("address", ["bogus", "tcp://", "tcp://host:0", "http://h:8786",
                                     "tcp://h:99999"])
def test_a_malformed_scheduler_address_is_refused_up_front(tmp_path, address):
    out = tmp_path / "m.parquet"
    with pytest.raises(InputError, match=r"--scheduler .*host:port"):
        run_mc(MonteCarlo(**STUDY), out, scheduler=address, progress=False)
    assert list(tmp_path.iterdir()) == []


def test_an_unreachable_scheduler_fails_within_seconds(tmp_path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "m.parquet"
    t0 = time.perf_counter()
    with pytest.raises(InputError, match=f"--scheduler tcp://127.0.0.1:{port}: cannot connect"):
        run_mc(MonteCarlo(**STUDY), out, scheduler=f"tcp://127.0.0.1:{port}", progress=False)
    assert time.perf_counter() - t0 < 20
    assert list(tmp_path.iterdir()) == []


def test_a_scheduler_that_accepts_and_never_answers_fails_within_seconds(tmp_path):
    with socket.socket() as server:  # accepts connections (the kernel does) and is silent
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        port = server.getsockname()[1]
        out = tmp_path / "m.parquet"
        t0 = time.perf_counter()
        with pytest.raises(InputError, match="cannot connect"):
            run_mc(MonteCarlo(**STUDY), out, scheduler=f"tcp://127.0.0.1:{port}",
                   progress=False)
        assert time.perf_counter() - t0 < 20
    assert list(tmp_path.iterdir()) == []


# -- Ctrl-C ----------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_prints_one_line_and_keeps_the_finished_parts(tmp_path, workers):
    """SIGINT to the whole process group, as a terminal sends it, once a part exists:
    one ``Error:`` line naming the parts kept, exit 130, no worker traceback, and
    ``--resume`` completes the study from them."""
    import signal

    args = [sys.executable, "-m", "rram.cli", "mc", "--devices", "400", "--cycles", "2",
            "--seed", "1", "--chunk", "4", "--workers", str(workers), "--out", "m.parquet"]
    run = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    parts = tmp_path / "m.parquet.parts"
    deadline = time.time() + 120
    while not list(parts.glob("chunk-*.parquet")) and time.time() < deadline:
        time.sleep(0.2)
    os.killpg(run.pid, signal.SIGINT)
    _, err = run.communicate(timeout=60)
    lines = err.strip().splitlines()
    assert run.returncode == 130, err[-2000:]
    assert len(lines) == 1 and lines[0].startswith("Error: interrupted: "), err[-2000:]
    assert "--resume" in lines[0] and "Traceback" not in err
    kept = len(list(parts.glob("chunk-*.parquet")))
    assert kept >= 1 and f"{kept} finished chunk(s)" in lines[0]
    done = subprocess.run([*args, "--resume"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(pd.read_parquet(tmp_path / "m.parquet")) == 800 and not parts.exists()


# -- 6. a study where every sample failed ----------------------------------------------------

def test_an_all_failed_study_is_not_a_success(tmp_path):
    # ion rates 10^4 x the default in the narrowest state window: no device of seed 11
    # integrates (measured); a wider window lets some through (8e-13 m: 2 of 3, since the
    # gap's clip narrowed; 4e-13 m before)
    card = default_card().replace(vcap=1e6, xbound=1e-13)
    info = run_mc(MonteCarlo(card=card, devices=3, cycles=1, seed=11), tmp_path / "a.parquet",
                  progress=False)
    assert (info.rows, info.failed_rows) == (3, 3)
    assert "all 3 device-cycles failed to converge" in check_outcome(info)
    some = run_mc(MonteCarlo(card=card.replace(xbound=8e-13), devices=3, cycles=1, seed=11),
                  tmp_path / "b.parquet", progress=False)
    assert 0 < some.failed_rows < some.rows and check_outcome(some) is None
