"""The physics of the filament model: conduction, ion kinetics and Joule heating.

This package is the only place the model's equations live; ``docs/model.md`` is their
manual (mechanisms, parameters, calibration).  The skeleton is the Stanford–PKU v2.0
model (Huang et al., IEEE TED 60, 4090, 2013; Jiang et al., IEEE TED 63, 1884, 2016; Li
et al., DATE 2015): a tunnelling gap and a metallic CF in series, a SET that closes the
gap and then widens the CF, a RESET that is the slower of O²⁻ release and O²⁻ hopping.

The model is assembled from physics blocks (:mod:`.scope`), one module each, in this
order (:data:`DEFAULT_BLOCKS`; :func:`rram.model.assemble`):

1. :mod:`.cell`: the state guarded for Newton iterates, the temperature, the polarity
   weights, the contacts and parasitic capacitance;
2. :mod:`.conduction`: the metallic CF body in series with the hopping gap;
3. :mod:`.leakage`: the pristine oxide around the CF and the cell's shunt;
4. :mod:`.heating`: Joule heating that scales with the CF (Wiedemann–Franz);
5. :mod:`.ions`: the attempt rate, the velocity cap and the bounds' windows every ion
   rate shares;
6. :mod:`.set_kinetics`: vertical growth (the abrupt SET) and lateral growth of the CF;
7. :mod:`.reset_kinetics`: O²⁻ release and hopping (the gradual RESET) and CF thinning;
8. :mod:`.retention`: vacancy diffusion at any bias (a bake's loss of both states);
9. :mod:`.noise`: thermal noise, and the RTN and 1/f of traps at the CF (small-signal).

:mod:`.relaxation` (the disorder a switching event quenches into the gap, relaxing in
log-time after it) and :mod:`.wear` (the damage each switching event leaves, closing
the window to a stuck cell) are optional, each with a state of its own:
:data:`RELAXATION_BLOCKS`, :data:`WEAR_BLOCKS`.

Changed from v2.0 so that the model holds over many cycles and over ranges of
compliance, RESET voltage and read polarity (``docs/model.md`` §"Why these equations"):
heating that scales with the CF, lateral growth driven by the CF's own field and
temperature, thinning that follows the gap's actual opening, no contact blend, and the
pristine oxide's own leakage.  Every block returns expressions of the IR in
:mod:`rram.expr`; the names it gives are the intermediates a reader can check against
``docs/model.md``.
"""

from __future__ import annotations

from . import (
    cell,
    conduction,
    heating,
    ions,
    leakage,
    noise,
    relaxation,
    reset_kinetics,
    retention,
    set_kinetics,
    wear,
)
from .scope import Block

#: The filament model's blocks, in the order they build.
DEFAULT_BLOCKS: tuple[Block, ...] = (cell.BLOCK, conduction.BLOCK, leakage.BLOCK,
                                     heating.BLOCK, ions.BLOCK, set_kinetics.BLOCK,
                                     reset_kinetics.BLOCK, retention.BLOCK, noise.BLOCK)

#: The filament model with relaxation after programming (docs/model.md §10): its block
#: right after the cell, so the hopping sees the relaxing disorder.
RELAXATION_BLOCKS: tuple[Block, ...] = (DEFAULT_BLOCKS[0], relaxation.BLOCK,
                                        *DEFAULT_BLOCKS[1:])

#: The filament model with wear-out (docs/model.md §11): the damage and its barrier shifts
#: right after the cell, so the kinetics see them; its drive last, from every rate of the
#: gap.
WEAR_BLOCKS: tuple[Block, ...] = (DEFAULT_BLOCKS[0], wear.STATE_BLOCK, *DEFAULT_BLOCKS[1:],
                                  wear.DRIVE_BLOCK)

__all__ = ["DEFAULT_BLOCKS", "RELAXATION_BLOCKS", "WEAR_BLOCKS", "Block"]
