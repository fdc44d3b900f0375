"""What every command shares: error mapping, path roles and the numeric checks.

Usage and validation errors exit with status 2 and one line naming the bad input;
a simulation that cannot be completed exits with status 1 and says why and when.

Paths are declared by role: an :class:`InputPath` is read, an :class:`OutputPath` (or
:class:`OutputFolder`) is written.  :func:`command_guard` checks them all before the
command runs, so no command can write over one of its inputs, into a missing folder,
or onto a folder.
"""

from __future__ import annotations

import functools
import math
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import click

from ..errors import CardError, InputError, RramError, SimulationError


class InputPath(click.Path):
    """A file the command reads (must exist)."""

    def __init__(self, **kwargs: Any):
        super().__init__(exists=True, dir_okay=False, **kwargs)


class OutputPath(click.Path):
    """A file the command writes: its folder must exist and it must not be an input."""

    def __init__(self, **kwargs: Any):
        super().__init__(dir_okay=False, **kwargs)


class OutputFolder(click.Path):
    """A folder the command writes into; it is created, its parent must exist."""

    def __init__(self, **kwargs: Any):
        super().__init__(file_okay=False, **kwargs)


def _values(value: Any) -> Iterable[str]:
    if value is None:
        return ()
    if isinstance(value, (tuple, list)):
        return [str(v) for v in value]
    return (str(value),)


def _same(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def _option_name(param: click.Parameter) -> str:
    return param.opts[-1] if isinstance(param, click.Option) else param.human_readable_name


def refuse_inputs(name: str, path: Path, inputs: Iterable[tuple[str, Path]]) -> None:
    """Refuse to write ``path`` (the output ``name``) if it is one of the ``inputs``."""
    for in_name, in_path in inputs:
        if _same(path, in_path):
            raise InputError(f"{name} {path} is the input {in_name}; writing it would "
                             "destroy the input: choose another path")


def check_paths(params: Iterable[click.Parameter], values: dict[str, Any]) -> None:
    """Refuse outputs that are inputs, or each other, or that have no folder to go in."""
    inputs: list[tuple[str, Path]] = []
    outputs: list[tuple[str, Path, bool]] = []
    for p in params:
        for v in _values(values.get(p.name)):
            if isinstance(p.type, InputPath):
                inputs.append((_option_name(p), Path(v)))
            elif isinstance(p.type, (OutputPath, OutputFolder)):
                outputs.append((_option_name(p), Path(v), isinstance(p.type, OutputFolder)))
    for i, (name, path, is_folder) in enumerate(outputs):
        parent = path.resolve().parent
        if not parent.is_dir():
            what = "parent folder" if is_folder else "folder"
            raise InputError(f"{name} {path}: the {what} {parent} does not exist; create it "
                             "first")
        if not is_folder and path.is_dir():
            raise InputError(f"{name} {path} is a folder; give a file name")
        if is_folder and path.exists() and not path.is_dir():
            raise InputError(f"{name} {path} is a file; give a folder")
        refuse_inputs(name, path, inputs)
        for other_name, other, _ in outputs[i + 1:]:
            if _same(path, other):
                raise InputError(f"{name} and {other_name} are the same path {path}")


def command_guard(func: Callable) -> Callable:
    """Check the command's paths, then map package errors to exit codes: 2 for bad
    input (and for files that cannot be read or written), 1 for failed simulations."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            check_paths(click.get_current_context().command.params, kwargs)
            return func(*args, **kwargs)
        except (CardError, InputError) as exc:
            raise click.UsageError(str(exc)) from None
        except SimulationError as exc:
            click.echo(f"Error: simulation failed: {exc}", err=True)
            sys.exit(1)
        except RramError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(1)
        except OSError as exc:  # a file system refusal that no check could foresee
            where = f" {exc.filename}" if exc.filename else ""
            raise click.UsageError(f"cannot access{where}: {exc.strerror or exc}") from None

    return wrapper


def finite(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """Click callback: a finite number."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"must be a finite number, got {value!r}")
    return value


def load_card(path: str | None):
    from ..card import default_card
    from ..card import load_card as _load

    return default_card() if path is None else _load(path)


def echo_err(text: str) -> None:
    click.echo(text, err=True)
