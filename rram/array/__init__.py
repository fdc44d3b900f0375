"""Arrays of RRAM cells with resistive, capacitive wires: crossbars, 1S1R and 1T1R.

* :mod:`.spec`: the immutable description (topology, size, wires, periphery, cells);
* :mod:`.build`: spec → :class:`~.circuit.Circuit` (the one definition of the array);
* :mod:`.circuit`: the index form every native engine stamps, and its round trip with
  :class:`rram.netlist.Netlist` (which prints the ngspice deck, :mod:`.export`);
* :mod:`.cells`: the cells' cards (D2D draws) and frozen states, condensed to I(V);
* :mod:`.solve`: the sparse Newton DC engine and the linear fast path;
* :mod:`.read`: reads and vector–matrix products; :mod:`.rc`: RC delay of the wires;
* :mod:`.worst`: the worst data pattern of a V/2 read (adjoint-guided search);
* :mod:`.wires`: the wires' currents, electromigration flags and self-heating;
* :mod:`.tables`: CSV tables with a provenance sidecar.
* :mod:`.write`: quasi-static pulse trains (V/2, V/3, floating lines) with the model's
  kinetics; :mod:`.disturb`: the half-select disturb map; :mod:`.write_spice`: the same
  write as an ngspice transient.
"""

from .cells import States, named_pattern, pattern_states
from .read import ReadResult, VmmResult, read, vmm
from .spec import ArraySpec, Metal, Selector, Transistor
from .write import PulseTrain, WriteResult, write

__all__ = ["ArraySpec", "Metal", "PulseTrain", "ReadResult", "Selector", "States",
           "Transistor", "VmmResult", "WriteResult", "named_pattern", "pattern_states",
           "read", "vmm", "write"]
