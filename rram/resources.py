"""What the machine can give a command, read before the work starts: memory and disk.

A command estimates what its options will cost (:func:`require_memory`,
:func:`require_disk`) and is refused at once, with the estimate and what is available,
when it cannot fit, instead of dying part-way with a ``MemoryError`` or a full disk.

Memory available is the smallest of: the kernel's ``MemAvailable``, the cgroup's limit
less its usage (a container), and the process's address-space limit (``ulimit -v``,
``prlimit --as``) less the address space it maps already.  Address space is not
resident memory: numba's thread pools and LLVM reserve :data:`ADDRESS_RESERVE` they
never touch, so an estimate is held against the address-space limit with that added.
"""

from __future__ import annotations

import contextlib
import re
import resource
import shutil
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError

GiB = 1024**3
MiB = 1024**2
#: Address space the engines map without touching it: numba's worker threads' stacks
#: and LLVM's arenas (measured: 1.57 GiB of VmPeak over VmHWM for an array read).
ADDRESS_RESERVE = int(1.6 * GiB)


def size_text(n_bytes: float) -> str:
    """``n_bytes`` for a person: ``5.8 GiB``, ``310 MiB``."""
    if n_bytes >= 1024 * GiB:
        return f"{n_bytes / (1024 * GiB):.1f} TiB"
    if n_bytes >= GiB:
        return f"{n_bytes / GiB:.1f} GiB"
    if n_bytes >= MiB:
        return f"{n_bytes / MiB:.0f} MiB"
    return f"{max(n_bytes, 0) / 1024:.0f} kiB"


def _meminfo(key: str) -> int | None:
    with contextlib.suppress(OSError):
        m = re.search(rf"^{key}:\s+(\d+) kB", Path("/proc/meminfo").read_text(), re.M)
        if m:
            return int(m.group(1)) * 1024
    return None


def _cgroup_room() -> int | None:
    """The cgroup v2 memory limit less its usage (None without a limit)."""
    with contextlib.suppress(OSError, ValueError):
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            used = int(Path("/sys/fs/cgroup/memory.current").read_text())
            return int(limit) - used
    return None


def _address_room() -> int | None:
    """The address-space limit less what the process maps (None without a limit)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    mapped = 0
    with contextlib.suppress(OSError, AttributeError):
        m = re.search(r"^VmSize:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.M)
        mapped = int(m.group(1)) * 1024 if m else 0
    return soft - mapped


@dataclass(frozen=True)
class Room:
    """Memory a command may still use (bytes) and what sets it."""

    n_bytes: int
    source: str


def memory_room() -> Room | None:
    """The tightest of the memory bounds above (None when none can be read)."""
    rooms = []
    if (avail := _meminfo("MemAvailable")) is not None:
        rooms.append(Room(avail, "available"))
    if (cg := _cgroup_room()) is not None:
        rooms.append(Room(cg, "left under the container's memory limit"))
    if (space := _address_room()) is not None:
        rooms.append(Room(space - ADDRESS_RESERVE,
                          "left under the address-space limit (ulimit -v)"))
    return min(rooms, key=lambda r: r.n_bytes) if rooms else None


def require_memory(what: str, n_bytes: float, advice: str) -> None:
    """Refuse ``what`` (a sentence's subject: "a 4096 x 4096 read") when its estimate
    ``n_bytes`` exceeds the room left; ``advice`` says what to change."""
    room = memory_room()
    if room is not None and n_bytes > room.n_bytes:
        raise InputError(f"{what} needs about {size_text(n_bytes)} of memory, more than the "
                         f"{size_text(room.n_bytes)} {room.source}; {advice}")


def require_disk(what: str, folder: str | Path, n_bytes: float, advice: str) -> None:
    """Refuse ``what`` when its output (``n_bytes``, estimated) exceeds the free space of
    ``folder``'s file system."""
    folder = Path(folder)
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return
    if n_bytes > free:
        raise InputError(f"{what} writes about {size_text(n_bytes)}, more than the "
                         f"{size_text(free)} free on the disk of {folder}; {advice}")


def worker_room(per_worker: float) -> int:
    """How many worker processes of ``per_worker`` bytes each the memory holds."""
    room = memory_room()
    return max(1, int(room.n_bytes // per_worker)) if room is not None else 1 << 30
