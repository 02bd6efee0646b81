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


def fft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
    return mx.fft.fft(_in(x, "fft"), n=n, axis=axis, norm=norm)


def ifft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
    return mx.fft.ifft(_in(x, "ifft"), n=n, axis=axis, norm=norm)


def fftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    return mx.fft.fftn(_in(x, "fftn"), s=s, axes=axes, norm=norm)


def ifftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    return mx.fft.ifftn(_in(x, "ifftn"), s=s, axes=axes, norm=norm)


def rfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
    return mx.fft.rfft(_in(x, "rfft", real=True), n=n, axis=axis, norm=norm)


def irfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
    return mx.fft.irfft(_in(x, "irfft"), n=n, axis=axis, norm=norm)


def rfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    return mx.fft.rfftn(_in(x, "rfftn", real=True), s=s, axes=axes, norm=norm)


def irfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    return mx.fft.irfftn(_in(x, "irfftn"), s=s, axes=axes, norm=norm)


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
