"""SET-failure episodes: runs of cycles in which a cell does not SET.

Measured cells fail their SETs in runs, not one cycle at a time: the TUD device's 13
failed SETs of 1000 cycles are one run (cycles 977–989), and through it the cell sat in
an HRS of 1.2–2.4 MΩ, ten times its median.  That is the over-RESET of the endurance
literature: a RESET that oxidises the CF's broken end deeper than usual leaves a region
whose vacancies need a higher field to move again, and SETs at the usual amplitude fail
until one succeeds and re-forms the CF (B. Chen et al., IEDM 2011, "Physical mechanisms
of endurance degradation in TMO-RRAM"; Y. Y. Chen et al., IEEE TED 60, 1114 (2013)).

An :class:`Episodes` is that, as the variation spec carries it: each device enters an
episode and leaves it as a two-state Markov chain (``share`` of the cycles inside, a stay
of ``length`` cycles on average), and in an episode each SET draws ``parameter`` at its
centre raised by ``step`` (its units; a factor e^step for a lognormal parameter; no
cycle-to-cycle scatter: an episode is a state of its own): the migration
barrier ``dea`` (the carrier of V_set: the over-RESET region), or the contact ``rtop``
(drawn by the SET, held through its RESET: an interface that opens for a while, which
reads as both states high).  The
fit (:mod:`rram.fit.episodes`) takes the share and the length from a record's failed
SETs and the step from the card: the raise at which the median device's cycled SET at
the protocol fails, plus three of the barrier's cycle-to-cycle σ, so that nearly every
SET inside an episode fails and none outside one is touched.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .checks import is_number
from .errors import InputError

#: Longest mean stay in an episode (cycles): beyond any measured record.
MAX_LENGTH = 1e6


@dataclass(frozen=True)
class Episodes:
    """SET-failure episodes: ``share`` (0–1) of the cycles inside one, a stay of
    ``length`` cycles on average, and ``parameter`` at its centre (the device's value
    and the C2C entry's shift) raised by ``step`` (its units, or ln units for a
    lognormal parameter) for the SETs inside (clipped to its range)."""

    share: float
    length: float
    parameter: str
    step: float
    desc: str = ""

    def __post_init__(self) -> None:
        if not (is_number(self.share) and 0 < self.share < 1):
            raise InputError(f"episodes: share must be a number within (0, 1), got "
                             f"{self.share!r}")
        if not (is_number(self.length) and 1 <= self.length <= MAX_LENGTH):
            raise InputError(f"episodes: length must be a number of cycles within [1, "
                             f"{MAX_LENGTH:g}], got {self.length!r}")
        if not (is_number(self.step) and math.isfinite(self.step) and self.step != 0):
            raise InputError(f"episodes: step must be a finite number other than 0, got "
                             f"{self.step!r}")
        if not isinstance(self.parameter, str) or not isinstance(self.desc, str):
            raise InputError(f"episodes: parameter and desc must be strings, got "
                             f"{self.parameter!r}, {self.desc!r}")
        enter = self.rates[1]
        if enter > 1:
            raise InputError(f"episodes: a share of {self.share:g} in stays of "
                             f"{self.length:g} cycles needs an entry probability of "
                             f"{enter:.3g} per cycle (> 1): lengthen the stays")

    @property
    def rates(self) -> tuple[float, float]:
        """(P(leave), P(enter)) per cycle: a stay lasts ``length`` cycles on average, and
        the stationary share inside is ``share``."""
        leave = 1.0 / self.length
        return leave, self.share * leave / (1.0 - self.share)


__all__ = ["MAX_LENGTH", "Episodes"]
