"""A Ctrl-C that always stops a command.

Python turns SIGINT into a KeyboardInterrupt raised in the main thread's next bytecode,
and C code that clears every error on its way back (as ``PyObject_HasAttr`` does before
Python 3.13) can swallow it: a fresh clone's test run once saw ``rram array disturb``
run on for 20 minutes after its Ctrl-C, its handler still Python's own.  The command
line therefore remembers a Ctrl-C and sends it again every :data:`RETRY_S` seconds
until the command has stopped on it (:func:`handled`).  Library callers keep Python's
own handler: only :func:`install` (the command line) changes it.
"""

from __future__ import annotations

import os
import signal
import threading

#: Seconds between a Ctrl-C and its repetition while the command has not stopped on it.
RETRY_S = 2.0

_pending = threading.Event()
_stopped = threading.Event()


def install() -> bool:
    """Take over SIGINT where Python's own handler has it (the main thread of a
    command-line run); anything else, an ignored SIGINT or another handler, is left
    alone.  Whether it did."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return False
    signal.signal(signal.SIGINT, _on_sigint)
    return True


def handled() -> None:
    """The command stopped on its Ctrl-C: no repetition from here on."""
    _stopped.set()


def _on_sigint(signum, frame) -> None:
    if not _pending.is_set():
        _pending.set()
        threading.Thread(target=_repeat, name="rram-ctrl-c", daemon=True).start()
    raise KeyboardInterrupt


def _repeat() -> None:
    while not _stopped.wait(RETRY_S):
        os.kill(os.getpid(), signal.SIGINT)
