"""File output: atomic (a reader never sees a half-written file), only into folders
that exist, and with OS refusals turned into errors that name the path and the reason."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from .errors import InputError


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
    if path.is_dir():
        raise InputError(f"cannot write {path}: it is a folder")
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


def write_text_atomic(path: str | Path, text: str) -> Path:
    return write_atomic(path, lambda p: p.write_text(text, encoding="utf-8"))
