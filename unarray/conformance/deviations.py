"""The platform matrix: install commands per backend and platform, and the known deviations.

A known deviation is a case (op, backend, platform, dtype; ``fnmatch`` patterns)
that the suite expects to differ from the standard or from the float64
reference, with the reason. Such a case is reported as ``known`` and does not
fail the run; a listed deviation that no longer shows is reported as a plain
pass with a note, so the table can be pruned.

``backends/<name>.md`` is generated from this module
(``python -m unarray.conformance.deviations --write backends``) and a test
checks that the committed pages match it.
"""

from __future__ import annotations

import fnmatch
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from unarray import _install
from unarray._backends import mlx as _mlx

__all__ = ["BACKENDS", "DEVIATIONS", "PLATFORMS", "Deviation", "by_reason", "lookup", "platform_of",
           "render_markdown"]

PLATFORMS = ("cpu", "cuda", "rocm", "tpu")
BACKENDS = ("numpy", "torch", "jax", "cupy", "tensorflow", "numba", "dask", "mlx")


@dataclass(frozen=True)
class Deviation:
    """One expected difference: where it shows (``fnmatch`` patterns) and why."""

    op: str
    backend: str
    platform: str
    dtype: str
    reason: str

    def matches(self, op: str, backend: str, platform: str, dtype: str) -> bool:
        return (fnmatch.fnmatchcase(op, self.op) and fnmatch.fnmatchcase(backend, self.backend)
                and fnmatch.fnmatchcase(platform, self.platform) and fnmatch.fnmatchcase(dtype, self.dtype))


DEVIATIONS: tuple[Deviation, ...] = (
    Deviation("*", "*", "tpu", "float64", "TPUs have no float64 arithmetic; unarray refuses it (DTypeError)"),
    Deviation("*", "*", "tpu", "complex128", "TPUs have no float64 arithmetic; unarray refuses it (DTypeError)"),
    Deviation("handoff->jax", "*", "cpu", "*",
              "JAX on the CPU copies buffers that are not 64-byte aligned (XLA's alignment rule)"),
    Deviation("handoff->tensorflow", "*", "*", "*",
              "TensorFlow imports DLPack capsules only and copies when the producer's layout or alignment "
              "does not suit it"),
    Deviation("handoff->*", "jax", "cpu", "bool",
              "JAX exports bool buffers through a byte-wise copy (XLA's PRED type has no DLPack layout)"),
    Deviation("handoff->*", "tensorflow", "*", "*",
              "TensorFlow's DLPack export may copy tensors placed by its allocator (capsule-only API)"),
    *(Deviation(f"handoff->{dst}", src, "*", "*",
                "JAX arrays and TensorFlow tensors are immutable and torch, CuPy and Numba arrays cannot be "
                "read-only: such a handoff is one copy (refused under copy=False), never a writable alias")
      for src in ("jax", "tensorflow") for dst in ("torch", "cupy", "numba")),
    Deviation("linalg.eig", "jax", "cuda", "*", "jax.numpy.linalg.eig runs on the CPU only"),
    Deviation("linalg.eig", "jax", "rocm", "*", "jax.numpy.linalg.eig runs on the CPU only"),
    Deviation("linalg.eig", "jax", "tpu", "*", "jax.numpy.linalg.eig runs on the CPU only"),
    Deviation("linalg.eigvals", "jax", "cuda", "*", "jax.numpy.linalg.eigvals runs on the CPU only"),
    Deviation("linalg.eigvals", "jax", "rocm", "*", "jax.numpy.linalg.eigvals runs on the CPU only"),
    Deviation("linalg.eigvals", "jax", "tpu", "*", "jax.numpy.linalg.eigvals runs on the CPU only"),
    Deviation("nextafter", "*", "tpu", "*", "TPUs flush float32 subnormals to zero"),
    Deviation("fft.*", "jax", "tpu", "complex64",
              "the TPU FFT computes in reduced precision (about 1e-4 relative error for float32)"),
    Deviation("repeat", "dask", "*", "*",
              "dask repeats by an int only: counts given as an array make a data-dependent shape "
              "(UnsupportedError; compute the counts first)"),
    Deviation("at.*", "tensorflow", "*", "*",
              "ua.at scatters to basic indices, one boolean mask, or integer arrays for the leading axes; an index "
              "mixing slices and integer arrays is refused (UnsupportedError; index in two steps)"),
    Deviation("at.*", "dask", "*", "*",
              "ua.at with an index other than a full-shape mask and one value runs as one NumPy task over the "
              "whole array (lazy, but one chunk's memory and no parallelism)"),
    *(Deviation("at.*", name, "*", "*",
                "ua.at(..., copy=False) writes in place on NumPy, CuPy and torch arrays only; JAX and TensorFlow "
                "arrays (immutable) and dask arrays (a graph) refuse it (ArgumentError; leave copy unset)")
      for name in ("jax", "tensorflow", "dask")),
    *(Deviation(*row) for row in _mlx.DEVIATIONS),
)

# Install commands per backend and platform ("" = not available there). unarray itself comes from its
# clone (pip install -e .); these add the framework, CPU builds from unarray._install (the missing-backend hint).
INSTALL: dict[str, dict[str, str]] = {
    "numpy": {"cpu": "pip install -e .   # NumPy is a dependency of unarray", "cuda": "", "rocm": "", "tpu": ""},
    "torch": {
        "cpu": _install.CPU["torch"],
        "cuda": "pip install torch --index-url https://download.pytorch.org/whl/cu130",
        "rocm": "pip install torch --index-url https://download.pytorch.org/whl/rocm7.0",
        "tpu": "",
    },
    "jax": {
        "cpu": _install.CPU["jax"],
        "cuda": "pip install 'jax[cuda13]'",
        "rocm": "pip install jax jax-rocm7-plugin jax-rocm7-pjrt",
        "tpu": "pip install 'jax[tpu]'",
    },
    "cupy": {
        "cpu": "",
        "cuda": "pip install cupy-cuda13x   # or cupy-cuda12x for CUDA 12 drivers",
        "rocm": "pip install cupy-rocm-7-0",
        "tpu": "",
    },
    "tensorflow": {
        "cpu": _install.CPU["tensorflow"],
        "cuda": "pip install 'tensorflow[and-cuda]'",
        "rocm": "pip install tensorflow-rocm",
        "tpu": "",
    },
    "numba": {"cpu": "", "cuda": "pip install numba numba-cuda", "rocm": "", "tpu": ""},
    "dask": {"cpu": _install.CPU["dask"], "cuda": "pip install 'dask[array]' cupy-cuda13x   # CuPy chunks",
             "rocm": "", "tpu": ""},
    "mlx": {"cpu": _install.CPU["mlx"], "cuda": _mlx.INSTALL_CUDA, "rocm": "", "tpu": ""},
}

NOTES: dict[str, str] = {
    "numpy": "The reference implementation and the embedded default; CPU only.",
    "torch": "ROCm builds report their GPUs as `cuda` devices; unarray reports them as `rocm` "
             "(`torch.version.hip` tells them apart).",
    "jax": "The suite turns on `jax_enable_x64` so that float64 cases run (never on TPU). Float32 matmul "
           "and attention run at `lax.Precision.HIGHEST` under the default policy.",
    "cupy": "GPU only (CUDA or ROCm builds).",
    "tensorflow": "TensorFlow exchanges data through DLPack capsules only.",
    "numba": "Numba CUDA device arrays take part in handoff only (no array namespace).",
    "dask": "Lazy: every op builds a graph and computes nothing; NumPy chunks on the CPU, CuPy chunks on CUDA. "
            "`ua.to(x, 'dask')` wraps, `ua.to(dask_array, 'numpy')` computes (counted); the handoff pairs are "
            "checked in tests/test_dask.py. `--profile distributed` runs the cases on a local cluster.",
    "mlx": _mlx.NOTES,
}


# What the native array objects' own operators do: unarray never wraps or patches them (native in, native out),
# so ``x + y`` on a backend's arrays is that library's ``+``, not the standard's ``ua.add``.
OPERATORS: dict[str, str] = {
    "numpy": "`ndarray` operators (`x + y`, `x[mask]`, `x / 0`) are NumPy's own; they follow NumPy's promotion "
             "(NEP 50), which agrees with the standard for the standard's dtypes.",
    "torch": "`torch.Tensor` operators are torch's own: `x + y` of uint16/uint32/uint64 tensors raises, mixed "
             "integer kinds follow torch's table, and `//` and `**` keep torch's special cases. `ua.add`, "
             "`ua.floor_divide`, `ua.pow`... follow the standard.",
    "jax": "`jax.Array` operators are JAX's own: without x64 mode, `x + y` of uint32 and int32 silently gives "
           "int32 (where `ua.add` raises `DTypeError`), and Python ints out of the dtype's range wrap.",
    "cupy": "`cupy.ndarray` operators are CuPy's own (NumPy's promotion).",
    "tensorflow": "`tf.Tensor` operators are TensorFlow's own: `x + y` of different dtypes raises instead of "
                  "promoting, `x[mask]` is refused, and shifts, `//`, `%` and `**` keep TF's special cases. "
                  "`ua.add`, `ua.bitwise_left_shift`... follow the standard.",
    "numba": "Numba device arrays have no arithmetic operators of their own on the host.",
    "dask": "`dask.array.Array` operators are dask's own (NumPy's promotion, lazily); `x[mask]` gives a result of "
            "unknown (NaN) size until computed.",
    "mlx": _mlx.OPERATORS,
}


def platform_of(device: object) -> str:
    """The platform column of a device: ``cpu``, ``cuda``, ``rocm``, ``tpu`` (or its kind)."""
    kind = getattr(device, "kind", str(device).partition(":")[0])
    return {"gpu": "cuda", "mps": "mps"}.get(kind, kind)


def lookup(op: str, backend: str, platform: str, dtype: str) -> Deviation | None:
    """The first known deviation that covers this case, if any."""
    for d in DEVIATIONS:
        if d.matches(op, backend, platform, dtype):
            return d
    return None


def by_reason(backends: Sequence[str] | None = None) -> dict[str, list[str]]:
    """The known deviations grouped by reason, in table order: reason -> ["backend on platform: op (dtype)"].

    ``backends`` keeps the entries whose backend pattern matches one of them (``python -m unarray deviations``).
    """
    out: dict[str, list[str]] = {}
    for d in DEVIATIONS:
        if backends and not any(fnmatch.fnmatchcase(b, d.backend) for b in backends):
            continue
        who = "every backend" if d.backend == "*" else d.backend
        where = "every platform" if d.platform == "*" else d.platform
        what = "every op" if d.op == "*" else d.op.replace("handoff->*", "handoff to any backend") \
            .replace("handoff->", "handoff to ")
        dtype = "" if d.dtype == "*" else f" ({d.dtype})"
        out.setdefault(d.reason, []).append(f"{who} on {where}: {what}{dtype}")
    return out


def _status(backend: str, platform: str) -> str:
    if not INSTALL[backend][platform]:
        return "not available"
    if platform == "cpu":
        return "suite runs in CI (hosted runner)"
    return f"suite runs on a self-hosted {platform} runner" if platform != "tpu" else "suite runs on a TPU VM"


def render_markdown(backend: str) -> str:
    """``backends/<backend>.md``: install, known deviations and status per platform."""
    lines = [f"# {backend}", "", "<!-- generated by python -m unarray.conformance.deviations --write backends -->",
             "", NOTES[backend], "", "Operators: " + OPERATORS[backend], ""]
    lines += ["unarray itself is installed from its clone (`pip install -e .` in the repository root); each "
              "platform's command below adds the framework.", ""]
    for platform in PLATFORMS:
        lines += [f"## {platform}", "", "| install | status |", "| --- | --- |"]
        cmd = INSTALL[backend][platform]
        lines.append(f"| {'`' + cmd + '`' if cmd else '-'} | {_status(backend, platform)} |")
        devs = [d for d in DEVIATIONS if fnmatch.fnmatchcase(backend, d.backend)
                and fnmatch.fnmatchcase(platform, d.platform)]
        if cmd and devs:
            lines += ["", "Known deviations (reported as `known`, not failures):", "",
                      "| op | dtype | reason |", "| --- | --- | --- |"]
            lines += [f"| `{d.op}` | `{d.dtype}` | {d.reason} |" for d in devs]
        elif cmd:
            lines += ["", "Known deviations: none."]
        lines.append("")
    return "\n".join(lines)


def render_index() -> str:
    """``backends/README.md``: the backend x platform matrix and where the CI templates are."""
    lines = ["# The platform matrix", "",
             "<!-- generated by python -m unarray.conformance.deviations --write backends -->",
             "", "Which backend runs on which platform, how to install it there, and what the conformance suite",
             "expects to differ (one page per backend). `ci/` holds GitHub Actions templates that install each",
             "platform's builds and run `python -m unarray check` (see ../conformance/README.md).", "",
             "| backend | " + " | ".join(PLATFORMS) + " |", "| --- |" + " --- |" * len(PLATFORMS)]
    for b in BACKENDS:
        cells = []
        for p in PLATFORMS:
            n = sum(1 for d in DEVIATIONS if fnmatch.fnmatchcase(b, d.backend) and fnmatch.fnmatchcase(p, d.platform))
            cells.append("-" if not INSTALL[b][p] else f"yes ({n} known deviation{'s' if n != 1 else ''})")
        lines.append(f"| [{b}]({b}.md) | " + " | ".join(cells) + " |")
    lines += ["", "| platform | CI template | runner |", "| --- | --- | --- |",
              "| cpu | [ci/cpu.yml](ci/cpu.yml) | GitHub-hosted `ubuntu-latest` |",
              "| cuda | [ci/cuda.yml](ci/cuda.yml) | self-hosted, labels `gpu`, `cuda` |",
              "| rocm | [ci/rocm.yml](ci/rocm.yml) | self-hosted, labels `gpu`, `rocm` |",
              "| tpu | [ci/tpu.yml](ci/tpu.yml) | self-hosted on a Cloud TPU VM, label `tpu` |", ""]
    return "\n".join(lines)


def write(directory: str | Path) -> list[Path]:
    out = [Path(directory) / "README.md"]
    out[0].write_text(render_index())
    for b in BACKENDS:
        p = Path(directory) / f"{b}.md"
        p.write_text(render_markdown(b))
        out.append(p)
    return out


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--write":
        for p in write(sys.argv[2]):
            print(p)
    else:
        for b in BACKENDS:
            print(render_markdown(b))
