"""File input and output.

Input is strict: :func:`read_text` is the one way a loader reads a file (UTF-8, with an
optional byte-order mark; anything else is an :class:`~rram.errors.InputError` naming
the file and the byte offset), and :func:`read_table` the one way it reads a CSV.
Output is atomic (a reader never sees a half-written file), goes only into folders that
exist, and OS refusals become errors that name the path and the reason.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import io
import json
import os
import shutil
import socket
import stat
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import InputError
from .resources import require_memory, size_text

if TYPE_CHECKING:
    import pandas as pd

_BOM = b"\xef\xbb\xbf"
#: Resident memory of a table read as strings per byte of its file (measured: 14 for a
#: 31 MB distribution file of 10^6 rows).
TABLE_BYTES_PER_BYTE = 16


def read_text(path: str | Path, what: str) -> str:
    """The text of ``path`` (``what`` names it in messages: "card", "recipe", ...).

    A missing or unreadable file, a directory, or bytes that are not UTF-8 raise
    :class:`InputError` with the path and the reason (for bad bytes: their offset and
    line).  A leading UTF-8 byte-order mark (spreadsheet exports) is dropped."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    body = raw[len(_BOM):] if raw.startswith(_BOM) else raw
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + (len(raw) - len(body))
        line = raw[:offset].count(b"\n") + 1
        raise InputError(f"{what} {path}: not UTF-8 text: byte 0x{raw[offset]:02x} at byte "
                         f"offset {offset} (line {line}); save the file as UTF-8") from None


#: The companion file of a fit's output that holds its verdict (:mod:`rram.fit.verdict`).
VERDICT_SUFFIX = ".verdict.json"
#: Column separators a table may use, tried in this order on its first line.
SEPARATORS = {"\t": "tab", ";": "semicolon", ",": "comma"}


def separator_of(line: str) -> str:
    """The separator of a table whose first line is ``line``: a tab, a semicolon (a
    European spreadsheet export, where the comma is the decimal mark), a comma, else
    runs of blanks (a whitespace-aligned text table; regex ``\\s+``)."""
    for sep in SEPARATORS:
        if sep in line:
            return sep
    return r"\s+" if len(line.split()) > 1 else ","


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_table(path: str | Path, what: str, required: Sequence[str] = (),
               names: Sequence[str] | None = None) -> pd.DataFrame:
    """A table file as strings (``dtype=str``; empty cells are NaN), read strictly.

    The separator is the first line's (:func:`separator_of`: tab, semicolon, comma or
    blanks).  The first line names the columns, unless ``names`` does (a headerless
    file: every line is data, and each must have ``len(names)`` fields).  A first line
    that is all numbers is refused without ``names``: it is data, not column names.

    Refuses, naming the file: unreadable or non-UTF-8 bytes (:func:`read_text`), an
    empty file, a header without data rows, a malformed table, and missing ``required``
    columns (named).  Blank lines are kept as rows, and ``frame.attrs["first_line"]`` is
    the file line of row 0, so a row is reported by its line."""
    import pandas as pd

    path = Path(path)
    with contextlib.suppress(OSError):  # read_text names an unreadable file
        require_memory(f"reading {what} {path} ({size_text(path.stat().st_size)})",
                       TABLE_BYTES_PER_BYTE * path.stat().st_size,
                       "split the file, or keep the rows the study needs")
    text = read_text(path, what)
    if not text.strip():
        raise InputError(f"{what} {path} is empty (expected a header line and data rows)")
    # trailing blank lines are no rows; blank lines within the data are reported
    text = text.rstrip("\r\n") + "\n"
    first, second = [*text.split("\n", 2), "", ""][:2]
    sep = separator_of(first.rstrip("\r"))

    def split(line: str) -> list[str]:
        line = line.rstrip("\r")
        return line.split() if sep == r"\s+" else next(csv.reader([line], delimiter=sep), [])

    fields = split(first)
    if names is None:
        numbers = [_is_number(f) for f in fields]
        # data, not names: numbers where the next line has its numbers (or all numbers)
        if any(numbers) and (numbers == [_is_number(f) for f in split(second)]
                             or all(numbers)):
            shown = ", ".join(fields[:4]) + (f", ... ({len(fields)} values)"
                                             if len(fields) > 4 else "")
            raise InputError(f"{what} {path}: line 1 is numbers ({shown}), not column "
                             "names: name the columns of a headerless file (--columns "
                             "NAME,NAME,...)")
        header = [c.strip() for c in fields]
    else:
        header = [str(c).strip() for c in names]
        if len(fields) != len(header):
            raise InputError(f"{what} {path}: line 1 has {len(fields)} fields, and "
                             f"{len(header)} column names were given ({', '.join(header)})")
    twice = sorted({c for c in header if header.count(c) > 1})
    if twice:  # pandas would rename the second one silently
        raise InputError(f"{what} {path}: column(s) {', '.join(twice)} appear more than once")
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, skip_blank_lines=False,
                            sep=sep, engine="python" if len(sep) > 1 else "c",
                            header=None if names is not None else 0,
                            names=header if names is not None else None)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise InputError(f"{what} {path}: not a table of {SEPARATORS.get(sep, 'blank')}-"
                         f"separated values ({exc})") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise InputError(f"{what} {path}: missing column(s) {', '.join(missing)} "
                         f"(need {', '.join(required)}; have {', '.join(frame.columns)})")
    if frame.empty:
        raise InputError(f"{what} {path} has a header but no data rows")
    frame.attrs["first_line"] = 1 if names is not None else 2
    return frame


def _refusal(path: Path, exc: OSError) -> InputError:
    return InputError(f"cannot write {path}: {exc.strerror or exc}")


def output_folder(path: str | Path) -> Path:
    """Create the output folder ``path`` if needed; its parent must exist (a mistyped
    parent is an error, not a tree of new folders)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise InputError(f"output folder {path} is a file")
    if not path.parent.is_dir():
        raise InputError(f"cannot create {path}: its parent folder {path.parent} does not "
                         "exist")
    try:
        path.mkdir(exist_ok=True)
    except OSError as exc:
        raise _refusal(path, exc) from None
    return path


def check_writable(folder: str | Path) -> None:
    """Refuse (:class:`InputError`) a folder no file can be created in (read-only file
    system, permissions, a pseudo file system), found by creating and removing one: the
    one test that asks the file system itself, before any work is done."""
    folder = Path(folder)
    try:
        fd, probe = tempfile.mkstemp(prefix=".rram-probe.", dir=folder)
    except OSError as exc:
        raise InputError(f"cannot write into {folder}: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(probe)


def not_a_file(path: str | Path) -> str | None:
    """Why ``path`` cannot be written as a file (None: it is new or a regular file,
    through any symlink).  An atomic write replaces the path, so a device node, a FIFO or
    a socket would be replaced by a file."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # new (or a dangling symlink, replaced by the file)
        return None
    if stat.S_ISDIR(mode):
        return "is a folder; give a file name"
    if not stat.S_ISREG(mode):
        return "is not a regular file (a device, FIFO or socket); give a file name"
    return None


def write_atomic(path: str | Path, writer: Callable[[Path], None]) -> Path:
    """Call ``writer(tmp_path)`` and move the result onto ``path`` atomically.

    The temporary file lives in the target folder (same file system, so the rename is
    atomic); on any error it is removed and ``path`` is left untouched.  The folder must
    exist; an OS refusal (read-only, full, not a folder) raises
    :class:`~rram.errors.InputError` naming the path.
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise InputError(f"cannot write {path}: the folder {path.parent} does not exist")
    why = not_a_file(path)
    if why is not None:
        raise InputError(f"cannot write {path}: it {why}")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    except OSError as exc:
        raise _refusal(path, exc) from None
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        writer(tmp_path)
        # mkstemp creates 0600; give the file the permissions a plain open() would
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp_path, 0o666 & ~umask)
        os.replace(tmp_path, path)
    except OSError as exc:
        tmp_path.unlink(missing_ok=True)
        raise _refusal(path, exc) from None
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    return path


@contextlib.contextmanager
def staged_folder(out: str | Path) -> Iterator[Path]:
    """A temporary folder beside ``out`` to build a whole output folder in; removed with
    everything in it if the block fails (an error, a full disk, Ctrl-C).  Hand it to
    :func:`publish` at the end of the block."""
    out = Path(out)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".part", dir=out.parent))
    except OSError as exc:
        raise _refusal(out, exc) from None
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def publish(staged: Path, out: str | Path) -> Path:
    """Move every entry of the folder ``staged`` into the folder ``out`` (created),
    each replacing the entry of its name, and remove ``staged``: a reader sees each file
    and folder whole, old or new, and files of ``out`` that ``staged`` does not name are
    left alone."""
    out = Path(out)
    try:
        out.mkdir(exist_ok=True)
        for entry in sorted(staged.iterdir()):
            target = out / entry.name
            if entry.is_dir() and target.is_dir() and not target.is_symlink():
                old = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", suffix=".old",
                                            dir=out))
                os.replace(target, old / entry.name)
                os.replace(entry, target)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(entry, target)
        staged.rmdir()
    except OSError as exc:
        raise _refusal(out, exc) from None
    return out


def write_text_atomic(path: str | Path, text: str) -> Path:
    return write_atomic(path, lambda p: p.write_text(text, encoding="utf-8"))


def _holder(fd: int) -> str:
    try:
        who = json.loads(os.pread(fd, 4096, 0) or b"{}")
        return f"pid {who['pid']} on {who['host']}"
    except (ValueError, KeyError, TypeError, OSError):
        return "holder not yet recorded"  # it has the lock but not yet written its name


def hold_lock(path: Path, what: str) -> int:
    """An exclusive ``flock`` on the file ``path`` (created; its folder must exist), for
    the output ``what`` names; returns its file descriptor (close it to release).  A
    second holder is refused with an :class:`InputError` naming the first (pid and host,
    written into the file).  The kernel releases the lock when its holder dies, so a
    killed run never blocks a later one; a holder that ends removes the file first, and
    a lock taken on a removed file does not count."""
    for _ in range(20):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:  # a finishing run removed its folder in between
            path.parent.mkdir(exist_ok=True)
            continue
        except OSError as exc:
            raise _refusal(path, exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise InputError(f"{what}: another run ({holder}) is writing it (lock {path}); "
                             "wait for it to end or stop it") from None
        # the run that held it may have removed the file since we opened it: only a
        # lock on the file still at the path counts
        with contextlib.suppress(FileNotFoundError):
            st, mine = os.stat(path), os.fstat(fd)
            if (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino):
                os.ftruncate(fd, 0)
                os.pwrite(fd, json.dumps({"pid": os.getpid(),
                                          "host": socket.gethostname()}).encode(), 0)
                return fd
        os.close(fd)
    raise InputError(f"{what}: cannot lock {path} (it keeps being removed)")
