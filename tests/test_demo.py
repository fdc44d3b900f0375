"""``rram demo``: the main job, made in a staging folder and published whole, under a lock
(issue 35: two concurrent demos left a mixed folder; a failed one its half-made folder)."""

from __future__ import annotations

import errno
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rram import demo
from rram.cli import main


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            if p.is_file() else "dir" for p in sorted(folder.rglob("*"))}


def _earlier_demo(tmp_path: Path) -> Path:
    """An ``out`` folder as an earlier demo and its user left it."""
    out = tmp_path / "out"
    (out / "plots").mkdir(parents=True)
    (out / "loops.csv").write_text("old loops\n")
    (out / "plots" / "iv_loops.png").write_text("old plot\n")
    (out / "my_notes.txt").write_text("the user's own file\n")
    return out


def _fake_run(fail: bool):
    """A demo body that writes part of its output, then fails as a full disk would."""
    def run(out: Path, card, log):
        (out / "loops.csv").write_text("new loops\n")
        (out / "plots").mkdir()
        (out / "plots" / "iv_loops.png").write_text("new plot\n")
        if fail:
            raise OSError(errno.ENOSPC, "No space left on device")
        return []
    return run


def test_a_failed_demo_leaves_the_folder_as_it_was(tmp_path, monkeypatch):
    out = _earlier_demo(tmp_path)
    before = _snapshot(tmp_path)
    monkeypatch.setattr(demo, "_run", _fake_run(fail=True))
    result = CliRunner().invoke(main, ["demo", "--out", str(out)])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and lines[-1].startswith("Error: "), result.output
    assert "No space left on device" in lines[-1]
    assert _snapshot(tmp_path) == before  # no staging folder, no lock, nothing replaced


def test_a_demo_replaces_its_own_files_and_keeps_the_users(tmp_path, monkeypatch):
    out = _earlier_demo(tmp_path)
    monkeypatch.setattr(demo, "_run", _fake_run(fail=False))
    result = CliRunner().invoke(main, ["demo", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "loops.csv").read_text() == "new loops\n"
    assert (out / "plots" / "iv_loops.png").read_text() == "new plot\n"
    assert (out / "my_notes.txt").read_text() == "the user's own file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # nothing else left


HOLD = """
import sys, time
from pathlib import Path
from rram.io import hold_lock
out = Path(sys.argv[1])
hold_lock(out.parent / f".{out.name}.lock", "demo")
print("locked", flush=True)
time.sleep(120)
"""


def test_a_second_demo_on_the_same_folder_is_refused(tmp_path):
    out = _earlier_demo(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = _snapshot(tmp_path)
        result = CliRunner().invoke(main, ["demo", "--out", str(out)])
        assert result.exit_code == 2
        assert f"another run (pid {holder.pid}" in result.stderr
        assert _snapshot(tmp_path) == before
    finally:
        holder.kill()
        holder.wait()


def test_a_demo_refuses_a_disk_it_cannot_fill(tmp_path, monkeypatch):
    import shutil

    from rram import resources

    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(resources.shutil, "disk_usage",
                        lambda p: usage._replace(free=1024**2))
    monkeypatch.setattr(demo, "_run", _fake_run(fail=False))
    result = CliRunner().invoke(main, ["demo", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "the demo writes about 20 MiB, more than the 1 MiB free" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_the_demo_runs_every_phenomenon(tmp_path):
    """The main job on the default card: every phenomenon passes, every file is there."""
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["demo", "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "phenomena.json").read_text())
    failed = [k for k, v in summary["phenomena"].items() if not v["passed"]]
    assert not failed, failed
    for name in ("loops.csv", "metrics.csv", "phenomena.md", "plots/iv_loops.png",
                 "mc/mc.csv", "mc/plots/summary.csv", "array/cells.csv"):
        assert (out / name).is_file(), name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
