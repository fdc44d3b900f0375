"""Array tables with their provenance: a CSV and a ``<name>.json`` sidecar beside it.

The sidecar holds the package version, the array description (wires, periphery, the
card's sha256, the variation and seed) and what the command adds (biases, objective),
so that a table says what produced it.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from .spec import ArraySpec


def provenance(spec: ArraySpec, **extra: Any) -> dict[str, Any]:
    """What produced a table of ``spec``: version, array description, ``extra``."""
    from .. import __version__

    described = {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)
                 if f.name not in ("card", "variation")}
    for name in ("row_metal", "col_metal", "gate_metal", "selector", "transistor"):
        described[name] = dataclasses.asdict(described[name])
    variation = None if spec.variation is None else json.loads(spec.variation.to_json())
    return {"rram_version": __version__, "array": described,
            "card_sha256": spec.card.digest, "variation": variation, **extra}


def sidecar(out: str | Path) -> Path:
    """The provenance file of table ``out``."""
    out = Path(out)
    return out.with_name(out.name + ".json")


def write_table(out: str | Path, frame, prov: dict[str, Any]) -> Path:
    """Write ``frame`` (a pandas DataFrame) to ``out`` (CSV, or Parquet for a
    ``.parquet`` name) and ``prov`` beside it, each atomically."""
    from ..io import write_atomic, write_text_atomic

    if Path(out).suffix == ".parquet":
        path = write_atomic(out, lambda p: frame.to_parquet(p, index=False))
    else:
        path = write_atomic(out, lambda p: frame.to_csv(p, index=False))
    write_text_atomic(sidecar(out), json.dumps(prov, indent=2, sort_keys=True,
                                               default=float) + "\n")
    return path
