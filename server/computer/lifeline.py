"""Tie a helper process's life to the process that started it.

A server killed with SIGKILL runs no clean-up, and multiprocessing's helpers are not told:
the pool's workers block for good on their call queue (they hold its writing end
themselves), and with them the fork server and the resource tracker live on as orphans. So
every worker, and the fork server the workers are forked from, asks the kernel to kill it when
its parent dies (Linux's ``PR_SET_PDEATHSIG``); elsewhere a daemon thread watches the parent.
A dead server then takes its fork server with it, the fork server its workers, and the
resource tracker ends by itself once nobody holds its pipe.

:func:`die_with_parent` is for a worker's initializer. The fork server runs no code of ours
but imports the modules named as its preload, so ``server.computer.forkserver_preload``
calls it on import.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
POLL = 1.0  # seconds between looks at the parent where the kernel cannot watch it


def signal_on_parent_death(sig: int = signal.SIGKILL) -> bool:
    """Ask the kernel to send this process ``sig`` when its parent dies (Linux's
    ``PR_SET_PDEATHSIG``; also usable as a ``preexec_fn``); False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return bool(ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def die_with_parent() -> None:
    """End this process when its parent process ends (at once on Linux, within a second
    elsewhere)."""
    parent = os.getppid()
    if not signal_on_parent_death():
        _watch(parent)
    if os.getppid() != parent:  # the parent died before the kernel was asked to watch it
        os._exit(1)


def _watch(parent: int) -> None:
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(POLL)
        os._exit(1)

    threading.Thread(target=watch, name="lifeline", daemon=True).start()
