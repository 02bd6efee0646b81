"""Local process groups for the distributed checks: the store that joins a launcher's worker processes, the
launch itself, and how a worker ends.

:func:`run_workers` is used by ``unarray.conformance.sharded_torch`` and by the test
suite's own multi-process checks; :func:`end_worker` is the last call of each of their workers.
"""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from typing import Any, NoReturn

__all__ = ["end_worker", "run_workers"]


def run_workers(argv: list[str], world_size: int, *, timeout: float, env: dict[str, str] | None = None,
                cwd: Any = None, rank0_inherits: bool = False) -> list[tuple[int, str, str]]:
    """Run ``argv`` as ``world_size`` processes joined by a TCP store this process hosts on a port the system
    assigns (``RANK`` set for each, ``env`` over this process's environment) and wait for each up to ``timeout``
    seconds, killing it past that: each one's (exit code, stdout, stderr). With ``rank0_inherits``, rank 0 writes
    to this process's own stdout and stderr (its strings are empty).

    torchelastic's agent-store convention (``TORCHELASTIC_USE_AGENT_STORE``): no port is picked free and then
    lost to another process before a worker binds it, and no worker hosts the store, which is closed here once
    the workers have ended.
    """
    from torch.distributed import TCPStore  # type: ignore[attr-defined]  # (public, not re-exported in stubs)

    store = TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False, timeout=datetime.timedelta(seconds=600))
    joined = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(store.port), "WORLD_SIZE": str(world_size),
              "TORCHELASTIC_USE_AGENT_STORE": "True"}
    procs = []
    try:
        for rank in range(world_size):
            pipe = None if rank == 0 and rank0_inherits else subprocess.PIPE
            procs.append(subprocess.Popen(argv, cwd=cwd, env={**os.environ, **joined, **(env or {}), "RANK": str(rank)},
                                          stdout=pipe, stderr=pipe, text=True))
        out = []
        for p in procs:
            try:
                so, se = p.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                so, se = p.communicate()
            out.append((p.returncode, so or "", se or ""))
    finally:
        del store  # (its daemon stops while the interpreter is whole)
    return out


def end_worker(code: int) -> NoReturn:
    """End a worker process with ``code`` once its process group is destroyed: stdout and stderr are flushed and
    the process leaves without the interpreter's teardown (``os._exit``).

    In that teardown torch's C++ objects (rank 0's TCP store daemon, gloo's pairs) are destroyed in an order
    that can abort the process ("terminate called without an active exception") after its verdict is printed
    and its process group destroyed: the exit code would then report a crash the properties never had.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
