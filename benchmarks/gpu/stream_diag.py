"""Which ways of ordering a CuPy read after a torch write on a side stream actually work (H100).

A torch side stream sleeps ~1 ms and then fills a tensor; CuPy reads the last element. Each way of
handing the tensor over is tried 100 times and the stale reads are counted. Seen with torch 2.11:
``torch.cuda.ExternalStream(0)`` is not the legacy default stream, so a wait queued through it is lost;
``cudaStreamWaitEvent`` on the consumer's stream and DLPack's stream exchange work.

    python benchmarks/gpu/stream_diag.py
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cupy
import torch


def run(name: str, handoff: Callable[[Any], Any], reps: int = 100) -> None:
    bad = 0
    for i in range(reps):
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            t = torch.empty(4096, 4096, device="cuda")
            torch.cuda._sleep(2_000_000)
            t.fill_(float(i + 1))
            y = handoff(t)
        bad += float(y[-1, -1].get()) != float(i + 1)
    print(f"{name:40s} stale {bad}/{reps}", flush=True)


def _producer(t: Any) -> Any:
    return torch.cuda.current_stream(t.device)


def host_sync(t: Any) -> Any:
    _producer(t).synchronize()
    return cupy.asarray(t)


def torch_external_wait(t: Any) -> Any:
    consumer = torch.cuda.ExternalStream(cupy.cuda.get_current_stream().ptr, device=t.device)
    consumer.wait_stream(_producer(t))
    return cupy.asarray(t)


def cuda_stream_wait_event(t: Any) -> Any:
    ev = torch.cuda.Event()
    ev.record(_producer(t))
    cupy.cuda.runtime.streamWaitEvent(cupy.cuda.get_current_stream().ptr, ev.cuda_event, 0)
    return cupy.asarray(t)


def main() -> None:
    print("cupy current stream", cupy.cuda.get_current_stream().ptr,
          "| torch ExternalStream(0)", torch.cuda.ExternalStream(0).cuda_stream,
          "| torch default stream", torch.cuda.default_stream().cuda_stream)
    for name, fn in [("host synchronize (sanity)", host_sync), ("cupy.asarray alone", cupy.asarray),
                     ("torch ExternalStream wait", torch_external_wait),
                     ("cudaStreamWaitEvent on consumer", cuda_stream_wait_event),
                     ("cupy.from_dlpack", cupy.from_dlpack)]:
        try:
            run(name, fn)
        except Exception as e:  # one broken way must not hide the others
            print(f"{name}: error {e}")


if __name__ == "__main__":
    main()
