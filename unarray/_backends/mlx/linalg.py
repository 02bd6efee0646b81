# The array-API linear algebra over MLX: matmul, tensordot, vecdot, matrix_transpose and the linalg
# extension (mlx.core.linalg, with the standard's signatures). MLX's decompositions run on its CPU stream
# only and in float32/float64: half precision is computed in float32 and rounded back, integers in float32.
from __future__ import annotations

import builtins
import math
from typing import Any

import mlx.core as mx

from unarray._backends import _xp_shared
from unarray._backends._xp_shared import EighResult, EigResult, QRResult, SlogdetResult, SVDResult
from unarray._backends.mlx import statistical
from unarray._backends.mlx.dtypes import FLOATS, INDEX, a, cast, complex64, float32, float64, promote
from unarray._backends.mlx.statistical import total
from unarray._errors import ShapeError, UnsupportedError

_CPU: dict[str, Any] = {"stream": mx.cpu}
_REDUCE = _xp_shared.Reductions(lambda x, ax: total(mx.sum, x, axis=ax), lambda x, ax: total(mx.max, x, axis=ax),
                                lambda x, ax: total(mx.min, x, axis=ax), mx.sqrt)


def matmul(x1: Any, x2: Any, /) -> Any:
    p, q = promote(x1, x2)
    if p.ndim == 0 or q.ndim == 0:
        raise ShapeError("matmul needs arrays of at least 1 dimension")
    if p.dtype in FLOATS or p.dtype == complex64:
        return mx.matmul(p, q)
    # Note: MLX multiplies floating matrices only; integers (exact, wrapping as the standard's) as a sum of products.
    v1, v2 = p.ndim == 1, q.ndim == 1
    p, q = (p[None, :] if v1 else p), (q[:, None] if v2 else q)
    # Note: mx.sum widens small integers (uint16 -> uint32); the standard's matmul keeps the promoted dtype.
    out = total(mx.sum, p[..., :, :, None] * q[..., None, :, :], axis=-2).astype(p.dtype)
    return out[..., 0, :] if v1 and not v2 else out[..., 0] if v2 and not v1 else out[..., 0, 0] if v1 else out


def matrix_transpose(x: Any, /) -> Any:
    return mx.swapaxes(a(x), -1, -2)


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> Any:
    p, q = promote(x1, x2)
    ax1, ax2, free1, free2 = _xp_shared.contraction(p.ndim, q.ndim, axes)
    k = math.prod(p.shape[i] for i in ax1)
    m = mx.transpose(p, free1 + ax1).reshape(math.prod(p.shape[i] for i in free1), k)
    n = mx.transpose(q, ax2 + free2).reshape(k, math.prod(q.shape[i] for i in free2))
    return matmul(m, n).reshape([p.shape[i] for i in free1] + [q.shape[i] for i in free2])


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    p, q = promote(x1, x2)
    if p.shape[axis] != q.shape[axis]:
        raise ShapeError(f"vecdot needs equal sizes along axis {axis}, got {tuple(p.shape)} and {tuple(q.shape)}")
    return total(mx.sum, mx.conj(p) * q if p.dtype == complex64 else p * q, axis=axis).astype(p.dtype)


def _float(x: Any) -> tuple[Any, Any]:
    # The dtype MLX's decompositions take (float32, float64), and the dtype the answer is rounded to.
    x = a(x)
    if x.dtype == complex64:
        raise UnsupportedError("MLX's linalg kernels take real float32/float64 matrices only; hand complex ones "
                               "to NumPy (ua.to(x, 'numpy'))", backend="mlx")
    if x.dtype in (float32, float64):
        return x, x.dtype
    out = x.dtype if x.dtype in FLOATS else float32
    return x.astype(float32), out


def _back(r: Any, d: Any) -> Any:
    return r if r.dtype == d or d == complex64 else r.astype(d)


# Note: MLX's LAPACK calls stop the process (SIGFPE) on an empty matrix or stack; an empty one has an empty answer.
def cholesky(x: Any, /, *, upper: bool = False) -> Any:
    v, d = _float(x)
    if v.size == 0:
        return mx.zeros(v.shape, d)
    return _back(mx.linalg.cholesky(v, upper=upper, **_CPU), d)


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    p, q = promote(x1, x2)
    if p.shape[axis] != 3 or q.shape[axis] != 3:
        raise ShapeError(f"cross needs size 3 along axis {axis}, got {tuple(p.shape)} and {tuple(q.shape)}")
    p, q = mx.broadcast_arrays(p, q)
    a0, a1, a2 = mx.unstack(p, axis=axis)
    b0, b1, b2 = mx.unstack(q, axis=axis)
    return mx.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=axis)


def _lu_det(v: Any) -> tuple[Any, Any]:
    # Note: MLX has no det; the sign and log-magnitude come from the LU factors' diagonal and the pivots' parity.
    n = v.shape[-1]
    if n == 0:
        return mx.ones(v.shape[:-2], v.dtype), mx.zeros(v.shape[:-2], v.dtype)
    lu, piv = mx.linalg.lu_factor(v, **_CPU)
    diag = mx.diagonal(lu, axis1=-2, axis2=-1)
    swaps = total(mx.sum, (piv != mx.arange(n)).astype(mx.int32), axis=-1)
    sign = mx.where(swaps % 2 == 1, -1.0, 1.0).astype(v.dtype) * total(mx.prod, mx.sign(diag), axis=-1)
    return sign, total(mx.sum, mx.log(mx.abs(diag)), axis=-1)


def det(x: Any, /) -> Any:
    v, d = _float(x)
    sign, logabs = _lu_det(v)
    return _back(sign * mx.exp(logabs), d)


def slogdet(x: Any, /) -> Any:
    v, d = _float(x)
    sign, logabs = _lu_det(v)
    return SlogdetResult(_back(sign, d), _back(logabs, d))


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    return mx.diagonal(a(x), offset=offset, axis1=-2, axis2=-1)


def eigh(x: Any, /) -> Any:
    v, d = _float(x)
    w, vec = mx.linalg.eigh(v, **_CPU)
    return EighResult(_back(w, d), _back(vec, d))


def eigvalsh(x: Any, /) -> Any:
    v, d = _float(x)
    return _back(mx.linalg.eigvalsh(v, **_CPU), d)


def eig(x: Any, /) -> Any:
    v, _ = _float(x)
    w, vec = mx.linalg.eig(v, **_CPU)
    return EigResult(w, vec)


def eigvals(x: Any, /) -> Any:
    return mx.linalg.eigvals(_float(x)[0], **_CPU)


def inv(x: Any, /) -> Any:
    v, d = _float(x)
    if v.size == 0:  # (MLX's LAPACK call stops the process on it: see cholesky)
        return mx.zeros(v.shape, d)
    return _back(mx.linalg.inv(v, **_CPU), d)


def svd(x: Any, /, *, full_matrices: bool = True) -> Any:
    v, d = _float(x)
    u, s, vh = mx.linalg.svd(v, compute_uv=True, **_CPU)
    if not full_matrices:
        k = builtins.min(v.shape[-2], v.shape[-1])
        u, vh = u[..., :, :k], vh[..., :k, :]
    return SVDResult(_back(u, d), _back(s, d), _back(vh, d))


def svdvals(x: Any, /) -> Any:
    v, d = _float(x)
    return _back(mx.linalg.svd(v, compute_uv=False, **_CPU), d)


def qr(x: Any, /, *, mode: str = "reduced") -> Any:
    _xp_shared.check_qr_mode(mode)
    v, d = _float(x)
    m, n = v.shape[-2], v.shape[-1]
    if mode == "complete" and m > n:
        # Note: MLX's qr is the reduced one; the complete Q is the SVD-free completion by a QR of [A | I].
        q, r = mx.linalg.qr(mx.concatenate([v, mx.broadcast_to(mx.eye(m, dtype=v.dtype), (*v.shape[:-2], m, m))],
                                           axis=-1), **_CPU)
        return QRResult(_back(q, d), _back(r[..., :, :n], d))
    q, r = mx.linalg.qr(v, **_CPU)
    return QRResult(_back(q, d), _back(r, d))


def solve(x1: Any, x2: Any, /) -> Any:
    p, q = promote(x1, x2)
    (p, d), (q, _) = _float(p), _float(q)
    if q.ndim == 1:
        if p.size == 0:  # (MLX's LAPACK call stops the process on it: see cholesky)
            return mx.zeros((*p.shape[:-1],), d)
        return _back(mx.linalg.solve(p, q[:, None], **_CPU)[..., 0], d)
    batch = mx.broadcast_shapes(p.shape[:-2], q.shape[:-2])
    p = mx.broadcast_to(p, (*batch, *p.shape[-2:]))
    q = mx.broadcast_to(q, (*batch, *q.shape[-2:]))
    if p.size == 0 or q.size == 0:
        return mx.zeros(q.shape, d)
    return _back(mx.linalg.solve(p, q, **_CPU), d)


def matrix_power(x: Any, n: int, /) -> Any:
    x = a(x)
    if n < 0:
        x, n = inv(x), -n
    return _xp_shared.power(mx.broadcast_to(mx.eye(x.shape[-1], dtype=x.dtype), x.shape), x, n, matmul)


def _tol(v: Any, s: Any, rtol: Any) -> Any:
    if rtol is None:
        eps = 2.0**-52 if s.dtype == float64 else 2.0**-23
        r: Any = builtins.max(v.shape[-2], v.shape[-1]) * eps
    else:
        r = rtol if isinstance(rtol, (int, float)) else a(rtol).astype(s.dtype)[..., None]
    return total(mx.max, s, axis=-1, keepdims=True) * r


def matrix_rank(x: Any, /, *, rtol: Any = None) -> Any:
    v, _ = _float(x)
    s = mx.linalg.svd(v, compute_uv=False, **_CPU)
    return total(mx.sum, (s > _tol(v, s, rtol)).astype(INDEX), axis=-1)


def pinv(x: Any, /, *, rtol: Any = None) -> Any:
    v, d = _float(x)
    u, s, vh = svd(v, full_matrices=False)
    tol = _tol(v, s, rtol)
    sinv = mx.where(s > tol, 1 / mx.where(s > tol, s, mx.ones_like(s)), mx.zeros_like(s))
    return _back(mx.matmul(mx.swapaxes(vh, -1, -2) * sinv[..., None, :], mx.swapaxes(u, -1, -2)), d)


def outer(x1: Any, x2: Any, /) -> Any:
    return _xp_shared.outer(*promote(x1, x2))


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    return statistical.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:  # noqa: A002
    x = a(x)
    if x.dtype not in FLOATS and x.dtype != complex64:
        x = x.astype(float32)
    return _xp_shared.vector_norm(mx.abs(x), axis, keepdims, ord, statistical, mx.sqrt, cast)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:  # noqa: A002
    if ord in ("nuc", 2, -2):
        v, d = _float(x)
    else:  # sums of magnitudes: complex matrices too
        v = a(x)
        d = v.dtype if v.dtype in FLOATS else float32
        v = v if v.dtype in FLOATS or v.dtype == complex64 else v.astype(float32)
    out = _xp_shared.matrix_norm(mx.abs(v), ord, lambda: svdvals(v), _REDUCE)
    out = _back(out, d if d != complex64 else float32)
    return out[..., None, None] if keepdims else out
