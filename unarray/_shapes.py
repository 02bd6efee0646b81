"""Shape rules the front end checks once, before any backend is called: the same refusal, naming the
shapes, on every backend (a backend's own message names them differently or not at all, and JAX aborts
the process on a size beyond 64-bit addressing)."""

from __future__ import annotations

import math
import operator
from typing import Any

from unarray._dtypes import canonical_name
from unarray._errors import ArraySizeError, ShapeError

# Note: byte offsets are signed 64-bit in every backend (XLA aborts on an extent product above it).
LIMIT = 2**63 - 1


def ints(shape: Any) -> tuple[int, ...] | None:
    """``shape`` as a tuple of ints, or None where a size is not a known int (a traced or lazy size, or
    a value the backend's own check refuses)."""
    try:
        return tuple(operator.index(d) for d in ((shape,) if not hasattr(shape, "__iter__") else shape))
    except (TypeError, ValueError):  # (TensorFlow: a shape of unknown rank cannot be iterated)
        return None


def itemsize(dtype: Any, default: int = 8) -> int:
    """Bytes per element of ``dtype`` (the default dtypes' widest, 8, where it is None)."""
    if dtype is None:
        return default
    name = canonical_name(dtype) or ""
    if name == "bool":
        return 1
    bits = name[len(name.rstrip("0123456789")):]  # (no regex: torch.compile's older Dynamo cannot trace one)
    return int(bits) // 8 if bits else default


def addressable(op: str, backend: str | None, shape: Any, size: int = 8) -> None:
    """Refuse an array of ``shape`` whose bytes (``size`` each) a 64-bit byte offset cannot reach."""
    dims = ints(shape)
    if dims is None or any(d < 0 for d in dims):
        return
    n = math.prod(dims)
    if n * size > LIMIT:
        raise ArraySizeError(f"shape {dims} holds {n} elements of {size} bytes, beyond the 2**63 - 1 bytes a 64-bit "
                             "address reaches; no backend can hold it: use a smaller shape", op=op, backend=backend)


def arange_length(start: Any, stop: Any, step: Any) -> int | None:
    if stop is None:
        start, stop = 0, start
    if not all(isinstance(v, (int, float)) for v in (start, stop, step)) or step == 0:
        return None
    try:
        return max(0, int(math.ceil((stop - start) / step)))
    except (OverflowError, ValueError):  # an infinite or NaN bound: the backend refuses it
        return None


def reshape(op: str, backend: str | None, before: Any, shape: Any) -> None:
    """Refuse a ``shape`` that does not hold ``before``'s elements: a negative size other than one -1,
    more than one -1, -1 next to a zero size (any size would fit), or a product that differs."""
    old, new = ints(before), ints(shape)
    if old is None or new is None:
        return
    size = math.prod(old)

    def refuse(why: str) -> ShapeError:
        return ShapeError(f"cannot reshape an array of shape {old} ({size} elements) into shape {new}: {why}",
                          op=op, backend=backend)

    if any(d < -1 for d in new):
        raise refuse("a size is negative; give sizes >= 0, or -1 for the one size that fits")
    if new.count(-1) > 1:
        raise refuse("only one size can be -1")
    known = math.prod([d for d in new if d != -1])  # (a list: torch.compile cannot trace prod of a generator)
    if -1 in new:
        if known == 0:
            raise refuse("-1 next to a zero size fits any size; give every size")
        if size % known:
            raise refuse(f"{size} is not a multiple of the other sizes' product {known}")
    elif known != size:
        raise refuse(f"the sizes' product is {known}, not {size}")


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return all(x == y or x == 1 or y == 1 for x, y in zip(a[::-1], b[::-1], strict=False))


def matmul(op: str, backend: str | None, s1: Any, s2: Any) -> None:
    """Refuse operands whose contracted sizes differ, a 0-d operand, or batch sizes that do not broadcast."""
    a, b = ints(s1), ints(s2)
    if a is None or b is None:
        return

    def refuse(why: str) -> ShapeError:
        return ShapeError(f"shapes {a} and {b} do not fit: {why}", op=op, backend=backend)

    if not a or not b:
        raise refuse("a matrix product needs operands of at least 1 dimension")
    k2 = b[-2] if len(b) > 1 else b[0]
    if a[-1] != k2:
        raise refuse(f"x1's last size {a[-1]} is not x2's {'second-to-last' if len(b) > 1 else 'only'} size {k2}")
    if not _broadcast(a[:-2], b[:-2]):
        raise refuse(f"the batch sizes {a[:-2]} and {b[:-2]} do not broadcast")


def tensordot(op: str, backend: str | None, s1: Any, s2: Any, axes: Any) -> None:
    """Refuse contracted axes whose sizes differ (an axis out of range is the backend's AxisError)."""
    a, b = ints(s1), ints(s2)
    if a is None or b is None:
        return
    if isinstance(axes, int):
        if axes < 0 or axes > min(len(a), len(b)):
            return
        ax1, ax2 = list(range(len(a) - axes, len(a))), list(range(axes))
    else:
        try:
            ax1, ax2 = [operator.index(i) for i in axes[0]], [operator.index(i) for i in axes[1]]
        except (TypeError, IndexError):
            return
        if len(ax1) != len(ax2) or not all(-len(a) <= i < len(a) for i in ax1) or \
                not all(-len(b) <= i < len(b) for i in ax2):
            return
    n1, n2 = tuple(a[i] for i in ax1), tuple(b[i] for i in ax2)
    if n1 != n2:
        raise ShapeError(f"shapes {a} and {b} do not fit: the contracted sizes {n1} (axes {tuple(ax1)} of x1) and "
                         f"{n2} (axes {tuple(ax2)} of x2) differ", op=op, backend=backend)


def vecdot(op: str, backend: str | None, s1: Any, s2: Any, axis: Any) -> None:
    """Refuse operands whose sizes along ``axis`` differ or whose shapes do not broadcast."""
    a, b = ints(s1), ints(s2)
    if a is None or b is None or not isinstance(axis, int) or not a or not b:
        return
    if not (-len(a) <= axis < len(a) and -len(b) <= axis < len(b)):
        return
    if axis >= 0:
        # Note: the standard reads a non-negative axis against the broadcast shape; compare from the end.
        n = max(len(a), len(b))
        axis -= n
        if not (-len(a) <= axis and -len(b) <= axis):
            return
    if a[axis] != b[axis] or not _broadcast(a, b):
        raise ShapeError(f"shapes {a} and {b} do not fit: vecdot needs equal sizes along axis {axis} "
                         "and shapes that broadcast", op=op, backend=backend)
