"""Monte Carlo of device-to-device and cycle-to-cycle variation (see :mod:`rram.mc.run`)."""

from .run import MonteCarlo, run_devices

__all__ = ["MonteCarlo", "run_devices"]
