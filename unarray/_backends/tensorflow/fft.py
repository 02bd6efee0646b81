# The array-API fft extension over TensorFlow (tf.signal), with the standard's
# signatures: TF's FFTs act on the innermost axes only and take complex input only.
from __future__ import annotations

import math
from typing import Any

import tensorflow as tf

from unarray._backends.tensorflow.creation import place
from unarray._backends.tensorflow.dtypes import COMPLEX, COMPLEX_OF, DEFAULT_FLOAT, FLOATS, t
from unarray._errors import ArgumentError, DTypeError

_NORMS = ("backward", "ortho", "forward")


def _complex(x: Any) -> Any:
    x = t(x)
    if x.dtype in COMPLEX:
        return x
    if x.dtype not in FLOATS:
        raise DTypeError(f"fft needs a floating or complex array, got {x.dtype.name}")
    return tf.cast(x, COMPLEX_OF[x.dtype])


def _fit(x: Any, n: int | None) -> Any:
    # Crop or zero-pad the last axis to length n.
    if n is None:
        return x
    if n < 1:
        raise ArgumentError(f"n must be at least 1, got {n}")
    have = x.shape[-1]
    if have > n:
        return x[..., :n]
    return x if have == n else tf.pad(x, [[0, 0]] * (x.shape.rank - 1) + [[0, n - have]])


def _scale(y: Any, n: int, norm: str, inverse: bool) -> Any:
    if norm not in _NORMS:
        raise ArgumentError(f"norm must be one of {_NORMS}, got {norm!r}")
    f = {"backward": 1.0, "ortho": math.sqrt(n), "forward": float(n)}[norm]
    # tf.signal's inverse transforms already divide by n (the "backward" convention).
    f = f if inverse else 1.0 / f
    # Note: tf.cast of a Python float goes through float32; tf.constant keeps float64 exact.
    return y if f == 1.0 else y * tf.constant(f, y.dtype)


def _along(fn: Any, x: Any, axis: int) -> Any:
    nd = x.shape.rank
    ax = axis % nd
    if ax == nd - 1:
        return fn(x)
    perm = list(range(nd))
    perm[ax], perm[-1] = perm[-1], perm[ax]
    return tf.transpose(fn(tf.transpose(x, perm)), perm)


def fft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
    def go(v: Any) -> Any:
        v = _fit(v, n)
        return _scale(tf.signal.fft(v), v.shape[-1], norm, False)
    return _along(go, _complex(x), axis)


def ifft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
    def go(v: Any) -> Any:
        v = _fit(v, n)
        return _scale(tf.signal.ifft(v), v.shape[-1], norm, True)
    return _along(go, _complex(x), axis)


def rfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
    x = t(x)
    if x.dtype not in FLOATS:
        raise DTypeError(f"rfft needs a real floating array, got {x.dtype.name}")

    def go(v: Any) -> Any:
        v = _fit(v, n)
        wide = v if v.dtype in (tf.float32, tf.float64) else tf.cast(v, tf.float32)
        return _scale(tf.signal.rfft(wide), v.shape[-1], norm, False)
    return _along(go, x, axis)


def irfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
    x = _complex(x)

    def go(v: Any) -> Any:
        m = n if n is not None else 2 * (v.shape[-1] - 1)
        v = _fit(v, m // 2 + 1)
        return _scale(tf.signal.irfft(v, fft_length=[m]), m, norm, True)
    return _along(go, x, axis)


def _axes_s(x: Any, s: Any, axes: Any) -> tuple[list[int], list[int | None]]:
    nd = t(x).shape.rank
    if axes is None:
        axes = list(range(nd)) if s is None else list(range(nd - len(s), nd))
    sizes = [None] * len(axes) if s is None else list(s)
    return [a % nd for a in axes], sizes


def _complex_nd(one: Any, x: Any, s: Any, axes: Any, norm: str) -> Any:
    # fftn/ifftn: the 1-D transform along each axis in turn.
    axs, sizes = _axes_s(x, s, axes)
    out = _complex(x)
    for a, m in zip(axs, sizes, strict=True):
        out = one(out, n=m, axis=a, norm=norm)
    return out


def fftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    return _complex_nd(fft, x, s, axes, norm)


def ifftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    return _complex_nd(ifft, x, s, axes, norm)


def rfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    axs, sizes = _axes_s(x, s, axes)
    out = rfft(x, n=sizes[-1], axis=axs[-1], norm=norm)
    for a, m in zip(axs[:-1], sizes[:-1], strict=True):
        out = fft(out, n=m, axis=a, norm=norm)
    return out


def irfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    axs, sizes = _axes_s(x, s, axes)
    out = _complex(x)
    for a, m in zip(axs[:-1], sizes[:-1], strict=True):
        out = ifft(out, n=m, axis=a, norm=norm)
    return irfft(out, n=sizes[-1], axis=axs[-1], norm=norm)


_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def hfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
    return irfft(tf.math.conj(_complex(x)), n=n, axis=axis, norm=_SWAP[norm])


def ihfft(x: Any, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Any:
    return tf.math.conj(rfft(x, n=n, axis=axis, norm=_SWAP[norm]))


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Any:
    k = [i if i < (n + 1) // 2 else i - n for i in range(n)]
    with place(device):
        return tf.constant([v / (n * d) for v in k], dtype or DEFAULT_FLOAT)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Any:
    with place(device):
        return tf.constant([i / (n * d) for i in range(n // 2 + 1)], dtype or DEFAULT_FLOAT)


def _shift(x: Any, axes: Any, sign: int) -> Any:
    x = t(x)
    axs = list(range(x.shape.rank)) if axes is None else ([axes] if isinstance(axes, int) else list(axes))
    shifts = [sign * (x.shape[a] // 2) for a in axs]
    return tf.roll(x, shifts, axs)


def fftshift(x: Any, /, *, axes: Any = None) -> Any:
    return _shift(x, axes, 1)


def ifftshift(x: Any, /, *, axes: Any = None) -> Any:
    return _shift(x, axes, -1)
