"""Monte Carlo of device-to-device and cycle-to-cycle variation (see :mod:`rram.mc.run`)."""

from .run import MonteCarlo, Protocol, run_devices

__all__ = ["MonteCarlo", "Protocol", "run_devices"]
