# The array-API fft extension over MLX (mlx.core.fft, with the standard's signatures). MLX has no
# complex128, so a float64 transform is refused rather than narrowed; hfft and ihfft are written from irfft
# and rfft (MLX has neither).
from __future__ import annotations

from typing import Any

import mlx.core as mx

from unarray._backends.mlx.dtypes import DEFAULT_FLOAT, FLOATS, a, complex64, float64, native
from unarray._errors import DTypeError


def _in(x: Any, op: str, real: bool = False) -> Any:
    x = a(x)
    if x.dtype == float64:
        raise DTypeError(f"MLX has no complex128, so a float64 {op} has no result dtype; cast to float32",
                         op=f"fft.{op}", backend="mlx")
    if real:
        return x if x.dtype in FLOATS else x.astype(DEFAULT_FLOAT)
    return x if x.dtype == complex64 else x.astype(complex64)


def _along_axis(op: str, real: bool = False) -> Any:
    kernel = getattr(mx.fft, op)

    def fn(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
        return kernel(_in(x, op, real), n=n, axis=axis, norm=norm)

    fn.__name__ = fn.__qualname__ = op
    return fn


def _over_axes(op: str, real: bool = False) -> Any:
    kernel = getattr(mx.fft, op)

    def fn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
        return kernel(_in(x, op, real), s=s, axes=axes, norm=norm)

    fn.__name__ = fn.__qualname__ = op
    return fn


fft, ifft, rfft, irfft = _along_axis("fft"), _along_axis("ifft"), _along_axis("rfft", True), _along_axis("irfft")
fftn, ifftn, rfftn, irfftn = _over_axes("fftn"), _over_axes("ifftn"), _over_axes("rfftn", True), _over_axes("irfftn")


_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def hfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
    # Note: the transform of a Hermitian signal is irfft of its conjugate with the normalisation swapped.
    return mx.fft.irfft(mx.conj(_in(x, "hfft")), n=n, axis=axis, norm=_SWAP[norm])


def ihfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
    return mx.conj(mx.fft.rfft(_in(x, "ihfft", real=True), n=n, axis=axis, norm=_SWAP[norm]))


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Any:
    k = [i if i < (n + 1) // 2 else i - n for i in range(n)]
    return mx.array([v / (n * d) for v in k], dtype=native(dtype) or DEFAULT_FLOAT)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Any:
    return mx.array([i / (n * d) for i in range(n // 2 + 1)], dtype=native(dtype) or DEFAULT_FLOAT)


def fftshift(x: Any, /, *, axes: Any = None) -> Any:
    return mx.fft.fftshift(a(x), axes=axes)


def ifftshift(x: Any, /, *, axes: Any = None) -> Any:
    return mx.fft.ifftshift(a(x), axes=axes)
