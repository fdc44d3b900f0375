"""``python -m rram.cli``."""

from . import main

main()
