"""What every command shares: error mapping, path roles and the numeric checks.

Usage and validation errors exit with status 2 and one line naming the bad input;
a simulation that cannot be completed exits with status 1 and says why and when.

Paths are declared by role: an :class:`InputPath` is read, an :class:`OutputPath` (or
:class:`OutputFolder`) is written, with the companion files the command derives from it
(a provenance sidecar ``<out>.json``, the Monte Carlo's ``<out>.parts``).
:func:`command_guard` checks them all before the command runs, so no command can write
over one of its inputs (directly, through a symlink or a companion), write two outputs
onto one path, write into a missing folder, onto a folder or onto anything but a
regular file (a device node, a FIFO).
"""

from __future__ import annotations

import functools
import math
import os
import stat
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import click

from .. import interrupt
from ..errors import CardError, InputError, InterruptedRunError, RramError, SimulationError
from ..io import check_writable, not_a_file


class InputPath(click.Path):
    """A file the command reads (must exist)."""

    def __init__(self, **kwargs: Any):
        super().__init__(exists=True, dir_okay=False, **kwargs)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> Any:
        value = super().convert(value, param, ctx)
        if not stat.S_ISREG(os.stat(value).st_mode):  # a FIFO would block the read
            self.fail(f"{value} is not a regular file (a device, FIFO or socket)", param, ctx)
        return value


class VariationArg(click.ParamType):
    """A variation spec: ``default`` (the built-in spec), ``none`` (no variation) or a
    JSON file, which is an input of the command like any :class:`InputPath`."""

    name = "none|default|FILE"
    WORDS = ("none", "default")

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> str:
        if value in self.WORDS:
            return value
        return InputPath().convert(value, param, ctx)

    @classmethod
    def path(cls, value: str | None) -> Path | None:
        """The file a value names (None for the words)."""
        return None if value is None or value in cls.WORDS else Path(value)


class ReferencedPath(click.Path):
    """A file an output refers to (the model a deck loads): it need not exist yet, but
    an existing one is an input, never overwritten."""


class OutputPath(click.Path):
    """A file the command writes: its folder must exist and it must not be an input.
    ``companions``: the suffixes of the files written beside it (``<out><suffix>``),
    ``companion_folders`` those of the folders, each checked like the output itself."""

    def __init__(self, companions: tuple[str, ...] = (),
                 companion_folders: tuple[str, ...] = (), **kwargs: Any):
        super().__init__(dir_okay=False, **kwargs)
        self.companions = companions
        self.companion_folders = companion_folders


#: The provenance sidecar of a table (:func:`rram.array.tables.sidecar`).
SIDECAR = (".json",)


class OutputFolder(click.Path):
    """A folder the command writes into; it is created, its parent must exist."""

    companions: tuple[str, ...] = ()
    companion_folders: tuple[str, ...] = ()

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


def _outputs_of(name: str, path: Path, role: OutputPath | OutputFolder
                ) -> list[tuple[str, Path, bool]]:
    """An output and its companions: (name, path, is a folder)."""
    out = [(name, path, isinstance(role, OutputFolder))]
    for suffix, folder in [*((s, False) for s in role.companions),
                           *((s, True) for s in role.companion_folders)]:
        out.append((f"{name}'s {suffix} companion", path.with_name(path.name + suffix),
                    folder))
    return out


def check_paths(params: Iterable[click.Parameter], values: dict[str, Any]) -> None:
    """Refuse outputs (companions included) that are inputs, or each other, or that have
    no folder to go in, or that exist as anything but a regular file (a folder)."""
    inputs: list[tuple[str, Path]] = []
    outputs: list[tuple[str, Path, bool]] = []
    for p in params:
        for v in _values(values.get(p.name)):
            if isinstance(p.type, (InputPath, ReferencedPath)):
                inputs.append((_option_name(p), Path(v)))
            elif isinstance(p.type, VariationArg) and VariationArg.path(v) is not None:
                inputs.append((_option_name(p), VariationArg.path(v)))
            elif isinstance(p.type, (OutputPath, OutputFolder)):
                outputs += _outputs_of(_option_name(p), Path(v), p.type)
    for i, (name, path, is_folder) in enumerate(outputs):
        parent = path.resolve().parent
        if not parent.is_dir():
            what = "parent folder" if is_folder else "folder"
            raise InputError(f"{name} {path}: the {what} {parent} does not exist; create it "
                             "first")
        if is_folder and path.exists() and not path.is_dir():
            raise InputError(f"{name} {path} is a file; give a folder")
        why = None if is_folder else not_a_file(path)
        if why is not None:
            raise InputError(f"{name} {path} {why}")
        check_writable(parent if not is_folder or not path.is_dir() else path)
        refuse_inputs(name, path, inputs)
        for other_name, other, _ in outputs[i + 1:]:
            if _same(path, other):
                raise InputError(f"{name} and {other_name} are the same path {path}: one "
                                 "would overwrite the other")


#: The exit status of a command stopped by Ctrl-C (128 + SIGINT, as shells report it).
INTERRUPTED = 130


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
        except InterruptedRunError as exc:
            interrupt.handled()
            click.echo(f"Error: {exc}", err=True)
            sys.exit(INTERRUPTED)
        except KeyboardInterrupt:  # every output is atomic: nothing half-written stays
            interrupt.handled()
            click.echo("Error: interrupted; no output was written", err=True)
            sys.exit(INTERRUPTED)
        except RramError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(1)
        except OSError as exc:  # a file system refusal that no check could foresee
            where = f" {exc.filename}" if exc.filename else ""
            raise click.UsageError(f"cannot access{where}: {exc.strerror or exc}") from None

    return wrapper


#: A rule for an option that means something only beside another option's value:
#: (its parameter name, whether it applies given every option's value, where it applies).
Scope = tuple[str, Callable[[dict[str, Any]], bool], str]


def refuse_inapplicable(values: dict[str, Any], rules: Iterable[Scope]) -> None:
    """Refuse an option given on the command line where it does nothing (a silently
    ignored option reads as if it had acted)."""
    ctx = click.get_current_context()
    by_name = {p.name: p for p in ctx.command.params}
    for name, applies, scope in rules:
        given = ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE
        if name in by_name and given and not applies(values):
            raise InputError(f"{_option_name(by_name[name])} applies to {scope} only")


def finite(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """Click callback: a finite number."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"must be a finite number, got {value!r}")
    return value


def card_option(help: str = "Model card JSON [default: the built-in card].",
                required: bool = False) -> Callable:
    """The ``--card`` option of every command (its value: the path, ``card_path``)."""
    return click.option("--card", "card_path", type=InputPath(), required=required,
                        default=None, help=help)


def engine_option() -> Callable:
    """The ``--engine`` option (:data:`rram.experiment.ENGINES`)."""
    from ..experiment import ENGINES

    return click.option("--engine", type=click.Choice(list(ENGINES)), default="python",
                        show_default=True,
                        help="Simulator: the Python engine, the same engine in torch "
                             "lockstep (rram[torch]), ngspice with the subcircuit, "
                             "ngspice with the compiled Verilog-A, or VACASK with the "
                             "compiled Verilog-A.")


def variation_option(default: str) -> Callable:
    """The ``--variation`` option of every command (:class:`VariationArg`)."""
    return click.option("--variation", "variation", type=VariationArg(), default=default,
                        show_default=True,
                        help="Variation spec: default (the built-in spec), none, or a spec "
                             "JSON file.")


def load_card(path: str | None):
    from ..card import default_card
    from ..card import load_card as _load

    return default_card() if path is None else _load(path)


def load_variation(value: str, card):
    """The variation spec a ``--variation`` value names, of ``card``'s model (None for
    ``none``)."""
    from ..variation import default_variation
    from ..variation import load_variation as _load

    if value == "none":
        return None
    if value == "default":
        return default_variation()
    return _load(value, card.model)


def echo_err(text: str) -> None:
    click.echo(text, err=True)
