"""Command-line interface: ``rram --help``.

One module per family of commands; :mod:`rram.cli.common` holds what they share (the
error mapping to exit codes and the input/output path checks).
"""

from __future__ import annotations

import contextlib
import faulthandler
import signal
import sys
from typing import Any

import click

from .. import __version__, interrupt
from .array import margin, read, vmm
from .array import netlist as array_netlist
from .array_write import disturb, write_cmd
from .endurance import endurance_cmd, fit_endurance_cmd
from .fit import fit, fit_cycles_cmd, fit_variation_cmd
from .fit_noise import fit_noise_cmd
from .fit_pulses import fit_pulses_cmd
from .fit_relaxation import fit_relaxation_cmd
from .mc import mc
from .simulate import card, demo, export, generate, netlist, sweep


def _dump_stacks_on_sigusr1() -> None:
    """`kill -USR1 <pid>` prints where a long run is, without stopping it (where standard
    error is a real file: not under click's test runner)."""
    # no SIGUSR1 (Windows), or no file descriptor behind standard error
    with contextlib.suppress(AttributeError, ValueError, OSError):
        faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)


class _Group(click.Group):
    """Click's group, with every error on one line of standard error (no usage block),
    so that scripts and logs see exactly one line per failure."""

    def main(self, args: Any = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        _dump_stacks_on_sigusr1()
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        interrupt.install()
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.Abort:
            interrupt.handled()
            click.echo("Aborted.", err=True)
            sys.exit(1)
        except click.ClickException as exc:
            message = " ".join(exc.format_message().split())
            click.echo(f"Error: {message}", err=True)
            sys.exit(exc.exit_code)
        sys.exit(code if isinstance(code, int) else 0)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rram")
def main() -> None:
    """Filamentary RRAM compact model: simulate, export, vary and calibrate."""


@click.group()
def array() -> None:
    """Arrays: crossbars, 1S1R and 1T1R with distributed RC wires (rram array CMD --help)."""


for _command in (array_netlist, read, vmm, margin, write_cmd, disturb):
    array.add_command(_command)
for _command in (card, sweep, demo, export, netlist, mc, generate, fit, fit_variation_cmd,
                 fit_cycles_cmd, fit_pulses_cmd, fit_noise_cmd, fit_relaxation_cmd,
                 endurance_cmd, fit_endurance_cmd, array):
    main.add_command(_command)

__all__ = ["main"]
