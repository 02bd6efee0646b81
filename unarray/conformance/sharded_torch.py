"""Sharded torch DTensors against single-process float64 NumPy: the distributed conformance check.

``main()`` starts ``--nproc`` processes (2 by default) on this machine, joined by a gloo process group
through a TCP store this process hosts (``local_group.run_workers``), each running the properties below on
one 1-D DeviceMesh; it prints one JSON line per property (``{"property": ..., "ok": ..., "examples": ...,
"error": ...}``, from rank 0) and returns 0 when every property held on every rank.
``python -m unarray check --profile distributed`` runs it.

Properties (Hypothesis, derandomized so every rank draws the same examples; each example's verdict
is agreed by an all-reduce so no rank waits on a collective another has left):

- hot ops on DTensors (matmul with sharded rows, columns or contraction; sum, mean, var, std,
  max, argmax over axes; permute_dims; element-wise) equal float64 NumPy on the whole array, and return
  DTensors with the placements torch's own op gives;
- attention on sequence-sharded q, k, v (causal or not, grouped-query, masks, both layouts, both
  routes: torch's context parallel and unarray's ring) equals the unsharded float64 reference, with
  the output sharded along the sequence; with the batch or heads sharded, each rank's own kernel, whose
  gradients equal the unsharded call's; gradients through the sequence-sharded rings are refused;
- ``ua.device`` names the mesh and placements; ``ua.to`` refuses a DTensor; a plain tensor mixed
  with a DTensor is a typed error.
"""

from __future__ import annotations

import argparse
import json
import sys

from unarray.conformance.local_group import end_worker, run_workers

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the sharded-DTensor properties in ``--nproc`` local processes; 0 when all hold.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (``--nproc N``, ``--examples N``, ``--only NAME``); ``sys.argv`` by default.

    Returns
    -------
    int
        0 when every property held on every rank, 1 otherwise, 2 when torch.distributed with gloo is missing.

    Raises
    ------
    SystemExit
        On unreadable arguments (argparse).

    Examples
    --------
    >>> from unarray.conformance import sharded_torch
    >>> sharded_torch.main(["--only", "no such property", "--nproc", "1"]) in (0, 2)
    True
    """
    ap = argparse.ArgumentParser(prog="python -m unarray.conformance.sharded_torch")
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--examples", type=int, default=6)
    ap.add_argument("--only", default="")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        from unarray.conformance.sharded_torch_rank import worker

        end_worker(worker(args.examples, args.only))
    try:
        import torch.distributed as dist
    except ImportError:
        print(json.dumps({"property": "setup", "ok": False, "error": "torch is not installed"}))
        return 2
    if not dist.is_available() or not dist.is_gloo_available():
        print(json.dumps({"property": "setup", "ok": False, "error": "torch.distributed with gloo is missing"}))
        return 2
    cmd = [sys.executable, "-m", "unarray.conformance.sharded_torch", "--worker", "--examples", str(args.examples)]
    if args.only:
        cmd += ["--only", args.only]
    ranks = run_workers(cmd, args.nproc, timeout=600, env={"OMP_NUM_THREADS": "1"}, rank0_inherits=True)
    for rank, (rc, _, err) in enumerate(ranks):
        if rank and rc:
            sys.stderr.write(f"[rank {rank}] exit {rc}\n{err}")
    return 0 if all(rc == 0 for rc, _, _ in ranks) else 1


if __name__ == "__main__":
    sys.exit(main())
