"""The stimulus options of ``sweep``, ``mc`` and ``fit-variation``: the DC loop a card
was fitted on, unless the user says otherwise.

A fitted card carries the protocol it was fitted on (``meta.fit.protocol``, as
:meth:`rram.experiment.DCLoop.as_meta` writes it), and a fitted variation spec carries
the one it was fitted at.  A command starts from the first of: ``--protocol FILE`` (a
protocol JSON object, or a card or spec that carries one), the spec's, the card's, the
default loop; then each flag given changes one field of it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import click

from .common import InputPath, VariationArg, finite

#: The flags, as (name, help); every one defaults to the protocol's own value.
FLAGS = (
    ("v_set", "SET sweep maximum (V); negative for devices that SET at negative bias."),
    ("v_reset", "RESET sweep maximum (V), of the opposite sign to --v-set."),
    ("rate", "Sweep rate (V/s)."),
    ("compliance", "SET current compliance (A; the compliance circuit); the RESET's limit "
                   "follows it."),
    ("series_resistance", "Series resistance (Ohm): the resistor circuit's resistor, or "
                          "the compliance source's small-signal resistance; alone it "
                          "replaces the compliance (the resistor circuit)."),
    ("v_gate", "Gate voltage of the 1t1r circuit (V)."),
    ("v_read", "Read voltage of R_LRS and R_HRS (V)."),
)


def protocol_options(f: Callable) -> Callable:
    """``--protocol``, ``--circuit`` and :data:`FLAGS`, handed to the command as one
    ``protocol_choice`` dict (resolve it with :func:`resolve_protocol`)."""
    names = ("protocol_path", "circuit", *(n for n, _ in FLAGS))

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        kwargs["protocol_choice"] = {n: kwargs.pop(n) for n in names}
        return f(*args, **kwargs)

    for name, text in reversed(FLAGS):
        wrapper = click.option(f"--{name.replace('_', '-')}", name, type=float, default=None,
                               callback=finite,
                               help=f"{text} [default: the protocol's]")(wrapper)
    wrapper = click.option("--circuit", type=click.Choice(["compliance", "1t1r", "resistor"]),
                           default=None, help="[default: the protocol's]")(wrapper)
    return click.option(
        "--protocol", "protocol_path", type=InputPath(), default=None, metavar="FILE",
        help="The DC loop: a protocol JSON object (circuit, v_set, v_reset, rate, "
             "icc_set, ...), or a card or spec that carries one [default: the protocol "
             "the variation spec (mc) or the card was fitted on, else +-2 V at 1 kV/s, "
             "100 uA].",
    )(wrapper)


def resolve_protocol(card, choice: dict[str, Any], variation: str | None = None):
    """(the DC loop, where it came from) for a command's ``protocol_choice``, its card
    and its ``--variation`` value."""
    from ..experiment import DCLoop
    from ..io import read_text

    if choice["protocol_path"] is not None:
        path = choice["protocol_path"]
        base, source = DCLoop.from_json(read_text(path, "protocol"), str(path)), str(path)
    else:
        base, source = DCLoop(), "the default loop"
        spec = VariationArg.path(variation) if variation else None
        fitted = _spec_protocol(spec) if spec is not None else None
        if fitted is not None:
            base, source = fitted, f"the spec's fitted protocol ({spec})"
        elif (carried := DCLoop.from_meta(card.meta)) != DCLoop():
            base, source = carried, "the card's fitted protocol"
    flags = {k: v for k, v in choice.items() if k != "protocol_path" and v is not None}
    loop = base.overridden(**flags)
    if flags:
        source += ", with " + ", ".join(f"--{k.replace('_', '-')}" for k in flags)
    return loop, source


def _spec_protocol(path):
    from ..experiment import DCLoop
    from ..io import read_text

    text = read_text(path, "variation spec")
    try:
        fit = json.loads(text).get("fit")
    except (json.JSONDecodeError, AttributeError):
        return None  # the spec's own loader says what is wrong with it
    if isinstance(fit, dict) and fit.get("protocol"):
        return DCLoop.from_json(text, str(path))
    return None


def echo_protocol(loop, source: str) -> None:
    click.echo(f"protocol ({source}): {loop.describe()}", err=True)
