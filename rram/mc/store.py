"""The parts folder of a Monte Carlo run, ``<out>.parts``: lock, parts, verification.

* **Lock.**  A run holds an exclusive ``flock`` on ``<out>.parts/lock`` from before it
  looks at the folder until it has merged the parts and removed the folder; a second run
  on the same ``out`` is refused, naming the holder (pid and host, written into the lock
  file).  The kernel releases the lock when its holder dies, so a killed run never blocks
  a later one (no stale pid files).
* **Parts.**  Each chunk of devices ``[a, b)`` is one Parquet file whose key-value
  metadata (:data:`PART_KEY`) holds the study's digest (of
  :meth:`~rram.mc.run.MonteCarlo.fingerprint`: card, variation, seed, sizes, engine,
  protocol, package version), its device range, its column types and a checksum of its
  rows (:func:`rows_digest`).
* **Resume** verifies every file in the folder (readable, same study, same range, the
  column types of the study, the expected device-cycles, the checksum of its content)
  before anything is simulated: a foreign, corrupt, edited or mismatched file is named
  in an :class:`~rram.errors.InputError`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..checks import is_number, parse_json
from ..errors import InputError
from ..io import hold_lock, write_atomic, write_text_atomic
from .run import MonteCarlo

PART_KEY = b"rram_part"
LOCK = "lock"
MANIFEST = "manifest.json"
_PART = re.compile(r"chunk-(\d{9})-(\d{9})\.parquet")
#: write_atomic's temporary files (a run killed while writing a part leaves one)
_TEMP = re.compile(r"\.chunk-\d{9}-\d{9}\.parquet\..*\.part")


def parts_dir(out: Path) -> Path:
    return out.with_name(out.name + ".parts")


def chunk_path(parts: Path, a: int, b: int) -> Path:
    return parts / f"chunk-{a:09d}-{b - 1:09d}.parquet"


def study_digest(mc: MonteCarlo) -> str:
    return hashlib.sha256(json.dumps(mc.fingerprint(), sort_keys=True).encode()).hexdigest()


# -- lock ----------------------------------------------------------------------------------

def lock(parts: Path, out: Path) -> int:
    """Create ``parts`` if needed and lock it (:func:`rram.io.hold_lock`); returns the
    lock's file descriptor (close it to release)."""
    parts.mkdir(parents=True, exist_ok=True)
    return hold_lock(parts / LOCK, f"--out {out}")


# -- parts ---------------------------------------------------------------------------------

def column_types(table) -> dict[str, str]:
    """The Arrow type of each column of a part (a ``pyarrow.Table``)."""
    return {f.name: str(f.type) for f in table.schema}


def rows_digest(table) -> str:
    """SHA-256 of a part's content (a ``pyarrow.Table``): its column names and types and
    every value (a flipped bit, a NaN or a rescaled column changes it)."""
    h = hashlib.sha256(json.dumps(column_types(table)).encode())
    frame = table.to_pandas()
    h.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return h.hexdigest()


def write_part(mc: MonteCarlo, frame: pd.DataFrame, a: int, b: int, path: Path) -> None:
    """Write the rows of devices ``[a, b)`` atomically, with their provenance."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    info = {"study": study_digest(mc), "devices": [a, b], "cycles": mc.cycles,
            "columns": column_types(table), "sha256": rows_digest(table)}
    meta = {**(table.schema.metadata or {}), PART_KEY: json.dumps(info).encode()}
    write_atomic(path, lambda p: pq.write_table(table.replace_schema_metadata(meta), p))


def check_part(mc: MonteCarlo, path: Path, a: int, b: int, digest: str) -> int:
    """Verify the part of devices ``[a, b)``; returns its non-converged rows."""
    import pyarrow.parquet as pq

    def bad(reason: str) -> InputError:
        return InputError(f"{path}: {reason}; delete it to resume (its chunk is simulated "
                          f"again) or delete {path.parent} to start over")

    try:
        pfile = pq.ParquetFile(path)
        meta = pfile.schema_arrow.metadata or {}
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise bad(f"not a readable Parquet file ({exc})") from None
    if PART_KEY not in meta:
        raise bad("not a part written by rram mc (no provenance in its metadata)")
    try:
        info = json.loads(meta[PART_KEY])
        study, devices, types, checksum = (info[k] for k in ("study", "devices", "columns",
                                                              "sha256"))
    except (ValueError, KeyError, TypeError):
        raise bad("unreadable provenance in its metadata") from None
    if study != digest:
        raise bad("a part of a different study (its provenance hash differs)")
    if devices != [a, b]:
        raise bad(f"holds devices {devices}, its name says [{a}, {b})")
    try:
        table = pfile.read()
    except Exception as exc:
        raise bad(f"corrupt ({exc})") from None
    if table.column_names != mc.columns:
        raise bad("its columns differ from the study's")
    if column_types(table) != types:
        changed = [c for c, t in column_types(table).items() if types.get(c) != t]
        raise bad(f"the type of column {changed[0]!r} differs from the one it was written "
                  "with")
    if rows_digest(table) != checksum:
        raise bad("its content differs from what was written (checksum mismatch: the "
                  "file was edited or damaged)")
    n = b - a
    dev, cyc = (table[c].to_numpy() for c in ("device", "cycle"))
    expected_dev = np.repeat(np.arange(a, b), mc.cycles)
    expected_cyc = np.tile(np.arange(mc.burn_in, mc.burn_in + mc.cycles), n)
    if not (len(dev) == n * mc.cycles and np.array_equal(dev, expected_dev)
            and np.array_equal(cyc, expected_cyc)):
        raise bad(f"{table.num_rows} rows, expected devices {a}-{b - 1} × {mc.cycles} "
                  "cycles once each")
    return int((~table["converged"].to_numpy()).sum())


# -- the folder ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Chunks:
    """The chunks ``[a, b)`` of ``devices`` devices by ``size``, computed as they are
    asked for (10^8 devices in chunks of one would be a list of 10^8 pairs)."""

    devices: int
    size: int

    def __len__(self) -> int:
        return -(-self.devices // self.size)

    def __iter__(self) -> Iterator[tuple[int, int]]:
        for a in range(0, self.devices, self.size):
            yield a, min(self.devices, a + self.size)

    def __contains__(self, bounds: object) -> bool:
        if not (isinstance(bounds, tuple) and len(bounds) == 2):
            return False
        a, b = bounds
        return (0 <= a < self.devices and a % self.size == 0
                and b == min(self.devices, a + self.size))


@dataclass(frozen=True)
class Store:
    parts: Path
    size: int  # devices per chunk
    bounds: Chunks
    done: dict[tuple[int, int], int]  # verified parts -> their non-converged rows


def _entries(parts: Path) -> tuple[list[str], list[str]]:
    """(part files, other files) in ``parts``, ignoring the lock, the manifest and the
    temporary files of a killed write (removed here: never a finished part)."""
    chunks, others = [], []
    for name in sorted(os.listdir(parts)):
        # lstat: a FIFO or device named like a part would block its reader forever
        if name != LOCK and not stat.S_ISREG(os.lstat(parts / name).st_mode):
            raise InputError(f"{parts / name}: not a regular file (a link, folder, FIFO or "
                             f"device); move it out of {parts} to resume")
        if name in (LOCK, MANIFEST):
            continue
        if _TEMP.fullmatch(name):
            (parts / name).unlink(missing_ok=True)
        else:
            (chunks if _PART.fullmatch(name) else others).append(name)
    return chunks, others


def prepare(mc: MonteCarlo, parts: Path, resume: bool, chunk: int | None,
            default: int) -> Store:
    """Check (resume) or start the locked folder ``parts``; see the module docstring."""
    manifest = parts / MANIFEST
    fingerprint = mc.fingerprint()
    chunks, others = _entries(parts)
    if not chunks and not others:  # new, or an earlier run that wrote no part
        size = chunk or default
        write_text_atomic(manifest, json.dumps({**fingerprint, "chunk": size}, indent=2,
                                               sort_keys=True) + "\n")
        return Store(parts, size, Chunks(mc.devices, size), {})
    if not resume:
        raise InputError(f"{parts} holds the parts of an earlier run: pass --resume to "
                         "complete it, or remove it to start again")
    try:
        saved = parse_json(manifest.read_text(), str(manifest))
    except (OSError, InputError):
        saved = None
    if not isinstance(saved, dict) or {k: v for k, v in saved.items() if k != "chunk"} \
            != fingerprint:
        raise InputError(f"{parts} belongs to a different study (card, variation, seed, "
                         "sizes or engine differ, or its manifest is missing); remove it "
                         "or choose another --out")
    size = saved.get("chunk", chunk or default)
    if not is_number(size) or size != int(size) or size < 1:
        raise InputError(f"{manifest}: 'chunk' must be a positive whole number of devices, "
                         f"got {size!r}; remove {parts} to start again")
    size = int(size)
    if chunk is not None and chunk != size:
        raise InputError(f"--chunk {chunk}: the run in {parts} used --chunk {size}; "
                         "resume with that (or without --chunk)")
    if others:
        raise InputError(f"{parts / others[0]}: not a part of this run (unexpected file); "
                         f"move it out of {parts} to resume")
    bounds = Chunks(mc.devices, size)
    digest = study_digest(mc)
    done = {}
    for name in chunks:
        first, last = (int(g) for g in _PART.fullmatch(name).groups())
        if (first, last + 1) not in bounds:
            raise InputError(f"{parts / name}: not a chunk of this run (devices {first}-"
                             f"{last}, chunks of {size}); delete it to resume or delete "
                             f"{parts} to start over")
        done[first, last + 1] = check_part(mc, parts / name, first, last + 1, digest)
    return Store(parts, size, bounds, done)


def discard_if_empty(parts: Path) -> int:
    """Remove ``parts`` if it holds no part (nor a file of someone else): a run that
    failed before writing one leaves nothing behind.  Returns the parts it keeps."""
    with contextlib.suppress(FileNotFoundError, InputError):
        chunks, others = _entries(parts)
        if not chunks and not others:
            shutil.rmtree(parts)
        return len(chunks)
    return 0
