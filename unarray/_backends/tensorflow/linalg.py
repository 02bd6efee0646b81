# The array-API linalg extension over TensorFlow (tf.linalg), with the standard's
# signatures: TF's svd returns (s, u, v), not (U, S, Vh).
from __future__ import annotations

import builtins
from typing import Any

import tensorflow as tf

from unarray._backends import _xp_shared
from unarray._backends._xp_shared import EighResult, EigResult, QRResult, SlogdetResult, SVDResult
from unarray._backends.tensorflow import linear_algebra, statistical
from unarray._backends.tensorflow.dtypes import COMPLEX, DEFAULT_FLOAT, FLOATS, finfo, promote, t
from unarray._errors import ShapeError, UnsupportedError

# Ops TensorFlow has no kernels for in half precision (float16 and bfloat16): explicit holes.
HALF_HOLES = ("cholesky", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matrix_power", "matrix_rank",
              "pinv", "qr", "slogdet", "solve", "svd", "svdvals")

_REDUCE = _xp_shared.Reductions(lambda x, ax: tf.reduce_sum(x, axis=ax), lambda x, ax: tf.reduce_max(x, ax),
                                lambda x, ax: tf.reduce_min(x, ax), tf.sqrt)


def _float(x: Any, op: str = "linalg") -> Any:
    x = t(x)
    if x.dtype in (tf.float16, tf.bfloat16):
        raise UnsupportedError(f"TensorFlow has no {x.dtype.name} kernels for linalg decompositions and solves; "
                               "cast to float32 with ua.astype first", op=op, backend="tensorflow")
    if x.dtype in FLOATS or x.dtype in COMPLEX:
        return x
    return tf.cast(x, tf.float64 if x.dtype in (tf.int32, tf.int64, tf.uint32, tf.uint64) else DEFAULT_FLOAT)


def _of_float(kernel: Any) -> Any:
    def op(x: Any, /) -> Any:
        return kernel(_float(x))

    return op


det, eigvals, inv = _of_float(tf.linalg.det), _of_float(tf.linalg.eigvals), _of_float(tf.linalg.inv)
svdvals = _of_float(lambda v: tf.linalg.svd(v, compute_uv=False))


def cholesky(x: Any, /, *, upper: bool = False) -> Any:
    lo = tf.linalg.cholesky(_float(x))
    return tf.linalg.adjoint(lo) if upper else lo


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    a, b = promote(x1, x2)
    if a.shape[axis] != 3 or b.shape[axis] != 3:
        raise ShapeError(f"cross needs size 3 along axis {axis}, got {tuple(a.shape)} and {tuple(b.shape)}")
    a, b = tf.broadcast_to(a, tf.broadcast_dynamic_shape(tf.shape(a), tf.shape(b))), b
    b = tf.broadcast_to(b, tf.shape(a))
    a0, a1, a2 = tf.unstack(a, axis=axis)
    b0, b1, b2 = tf.unstack(b, axis=axis)
    return tf.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=axis)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    x = t(x)
    m, n = x.shape[-2], x.shape[-1]
    if m is not None and n is not None and not -m < offset < n:
        # Note: TF raises for an offset past the matrix; the standard's diagonal there is empty.
        return tf.zeros(tf.concat([tf.shape(x)[:-2], [0]], 0), x.dtype)
    return tf.linalg.diag_part(x, k=offset)


# Note: TF returns a Hermitian matrix's eigenvalues as complex; the standard says real.
def eigh(x: Any, /) -> Any:
    w, v = tf.linalg.eigh(_float(x))
    return EighResult(tf.math.real(w) if w.dtype.is_complex else w, v)


def eigvalsh(x: Any, /) -> Any:
    w = tf.linalg.eigvalsh(_float(x))
    return tf.math.real(w) if w.dtype.is_complex else w


def eig(x: Any, /) -> Any:
    w, v = tf.linalg.eig(_float(x))
    return EigResult(w, v)


def svd(x: Any, /, *, full_matrices: bool = True) -> Any:
    s, u, v = tf.linalg.svd(_float(x), full_matrices=full_matrices)
    return SVDResult(u, s, tf.linalg.adjoint(v))


def qr(x: Any, /, *, mode: str = "reduced") -> Any:
    _xp_shared.check_qr_mode(mode)
    q, r = tf.linalg.qr(_float(x), full_matrices=mode == "complete")
    return QRResult(q, r)


def slogdet(x: Any, /) -> Any:
    s, ld = tf.linalg.slogdet(_float(x))
    return SlogdetResult(s, tf.math.real(ld))


def solve(x1: Any, x2: Any, /) -> Any:
    a, b = promote(_float(x1), _float(x2))
    # Note: tf.linalg.solve needs a matrix right-hand side with the same batch shape; the standard
    # treats a 1-D x2 as a vector and broadcasts the batch dimensions.
    if b.shape.rank == 1:
        return tf.squeeze(solve(a, b[:, None]), -1)
    batch = tf.broadcast_dynamic_shape(tf.shape(a)[:-2], tf.shape(b)[:-2])
    a = tf.broadcast_to(a, tf.concat([batch, tf.shape(a)[-2:]], 0))
    b = tf.broadcast_to(b, tf.concat([batch, tf.shape(b)[-2:]], 0))
    return tf.linalg.solve(a, b)


def matrix_power(x: Any, n: int, /) -> Any:
    x = t(x)
    if n < 0:
        x, n = tf.linalg.inv(_float(x)), -n
    eye = tf.eye(tf.shape(x)[-1], batch_shape=tf.shape(x)[:-2], dtype=x.dtype)
    return _xp_shared.power(eye, x, n, linear_algebra.matmul)


def _tol(x: Any, s: Any, rtol: Any) -> Any:
    # The singular values' cut-off per matrix: rtol (by default max(M, N) * eps) times the largest.
    if rtol is None:
        r = tf.constant(builtins.max(x.shape[-2], x.shape[-1]) * finfo(s.dtype).eps, s.dtype)
    else:
        r = tf.cast(t(rtol), s.dtype) if not isinstance(rtol, (int, float)) else tf.constant(rtol, s.dtype)
    return tf.reduce_max(s, axis=-1, keepdims=True) * (r[..., None] if r.shape.rank else r)


def matrix_rank(x: Any, /, *, rtol: Any = None) -> Any:
    x = _float(x)
    s = tf.linalg.svd(x, compute_uv=False)
    tol = _tol(x, s, rtol)
    return tf.math.count_nonzero(s > tol, axis=-1, dtype=tf.int64)


def pinv(x: Any, /, *, rtol: Any = None) -> Any:
    x = _float(x)
    s, u, v = tf.linalg.svd(x, full_matrices=False)
    tol = _tol(x, s, rtol)
    sinv = tf.where(s > tol, 1 / tf.where(s > tol, s, tf.ones_like(s)), tf.zeros_like(s))
    return tf.linalg.matmul(v * tf.cast(sinv, v.dtype)[..., None, :], tf.linalg.adjoint(u))


def outer(x1: Any, x2: Any, /) -> Any:
    return _xp_shared.outer(*promote(x1, x2))


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    return statistical.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:  # noqa: A002
    return _xp_shared.vector_norm(tf.math.abs(_float(x)), axis, keepdims, ord, statistical, tf.sqrt, tf.cast)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:  # noqa: A002
    x = _float(x)
    out = _xp_shared.matrix_norm(tf.math.abs(x), ord, lambda: tf.linalg.svd(x, compute_uv=False), _REDUCE)
    return out[..., None, None] if keepdims else out
