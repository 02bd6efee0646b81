"""Fold a permuted view into a batched 2-D transpose (pure Python, no framework).

A strided view that is a permutation of a compact buffer (``x.T``, ``x.permute(0, 2, 3, 1)``,
``x.transpose(1, 2)``) is materialised by one kernel: a tiled transpose of two axes, repeated over
the others. :func:`plan` finds that form from the view's shape and strides (in elements):

1. axes of length one are dropped (their strides mean nothing);
2. the remaining axes sorted by decreasing stride must be a compact C-ordered array (the
   *source*); otherwise (a slice with gaps, a broadcast, a negative stride) there is no plan and
   the caller copies with the native call;
3. output axes that stay adjacent and in order in the source are merged (``NCHW -> NHWC`` is
   ``(N, C, HW) -> (N, HW, C)``);
4. when the output's inner axis is the source's inner axis too, that run is contiguous on both
   sides and becomes a *vector element* of ``vec`` elements (attention's ``(B, S, H, D) ->
   (B, H, S, D)`` moves rows of ``D``);
5. what is left is a 2-D transpose of ``rows`` (the output's inner axis, strided in the source)
   and ``cols`` (the source's inner axis, strided in the output), over ``batch`` axes that keep
   their own strides on both sides.

Strides in a :class:`Plan` count vector elements (``vec`` elements each).
"""

from __future__ import annotations

import math
from typing import NamedTuple

__all__ = ["Plan", "outer_offsets", "plan", "word"]


class Plan(NamedTuple):  # (not a dataclass: cheaper to build at `import unarray`, docs/design-notes.md)
    """A batched 2-D transpose in vector elements (``vec`` consecutive elements of the source).

    ``dst[b, r * 1 + c * dst_col_stride] = src[b, r * src_row_stride + c * 1]`` for every batch index
    ``b`` (offsets ``sum(i * s)`` over ``batch`` with its source and destination strides), row ``r``
    below ``rows`` and column ``c`` below ``cols``. ``src_shape`` is the compact source (merged
    axes, vector included) and ``perm`` the output's order of its axes.
    """

    rows: int
    cols: int
    src_row_stride: int
    dst_col_stride: int
    batch: tuple[tuple[int, int, int], ...]  # (size, source stride, destination stride)
    vec: int
    src_shape: tuple[int, ...]
    perm: tuple[int, ...]

    @property
    def n_batch(self) -> int:
        return math.prod(size for size, _, _ in self.batch)

    @property
    def size(self) -> int:
        """Elements moved (the array's size)."""
        return self.n_batch * self.rows * self.cols * self.vec


def plan(shape: tuple[int, ...], strides: tuple[int, ...]) -> Plan | None:
    """The batched transpose that materialises the view ``(shape, strides)`` (strides in elements).

    ``None`` where the view is no permutation of a compact buffer (gaps, broadcast or negative
    strides), is already C-contiguous, or is empty: the native copy serves those.

    Examples:
        >>> p = plan((4, 3), (1, 4))          # the transpose of a compact (3, 4) array
        >>> p.rows, p.cols, p.vec, p.batch
        (3, 4, 1, ())
        >>> p = plan((2, 5, 6, 3), (90, 6, 1, 30))   # NCHW (2, 3, 5, 6) seen as NHWC
        >>> p.rows, p.cols, p.src_shape, p.perm, p.batch
        (3, 30, (2, 3, 30), (0, 2, 1), ((2, 90, 90),))
        >>> plan((3, 4), (4, 1)) is None      # already compact
        True
    """
    if len(shape) != len(strides):
        raise ValueError(f"shape {shape} and strides {strides} differ in length")
    if any(n == 0 for n in shape):
        return None
    axes = [(st, n) for n, st in zip(shape, strides, strict=True) if n != 1]
    if len(axes) < 2:
        return None
    # 2. the source: the axes by decreasing stride must be C-contiguous.
    order = sorted(range(len(axes)), key=lambda i: -axes[i][0])
    expect = 1
    for i in reversed(order):
        st, n = axes[i]
        if st != expect:
            return None
        expect *= n
    pos = [0] * len(axes)  # output axis i is source axis pos[i]
    for rank, i in enumerate(order):
        pos[i] = rank
    src_sizes = [axes[i][1] for i in order]
    # 3. merge output neighbours that are source neighbours in the same order.
    groups: list[list[int]] = []  # runs of source axes, in output order
    for p in pos:
        if groups and groups[-1][-1] + 1 == p:
            groups[-1].append(p)
        else:
            groups.append([p])
    if len(groups) == 1:
        return None  # already compact
    src_groups = sorted(groups)
    src_shape = [math.prod(src_sizes[p] for p in g) for g in src_groups]
    perm = tuple(src_groups.index(g) for g in groups)
    k = len(src_shape)
    src_strides = [1] * k
    for a in range(k - 2, -1, -1):
        src_strides[a] = src_strides[a + 1] * src_shape[a + 1]
    # 4. a vector element where the inner axis stays inner.
    vec = 1
    if perm[-1] == k - 1:
        vec = src_shape[-1]
    live = [a for a in perm if not (vec > 1 and a == k - 1)]
    dst_strides: dict[int, int] = {}
    acc = 1
    for a in reversed(live):
        dst_strides[a] = acc
        acc *= src_shape[a]
    src_v = {a: src_strides[a] // vec for a in live}
    # 5. rows: the output's inner axis; cols: the source's inner axis (among the live axes).
    row_axis = live[-1]
    col_axis = max(live)
    batch = tuple((src_shape[a], src_v[a], dst_strides[a]) for a in live if a not in (row_axis, col_axis))
    return Plan(rows=src_shape[row_axis], cols=src_shape[col_axis], src_row_stride=src_v[row_axis],
                dst_col_stride=dst_strides[col_axis], batch=batch, vec=vec, src_shape=tuple(src_shape),
                perm=perm)


def word(nbytes: int, *addresses: int, widest: int = 16) -> int:
    """The widest word (``widest``, ..., 2 or 1 bytes) that divides ``nbytes`` and every address."""
    w = widest
    while w > 1 and (nbytes % w or any(a % w for a in addresses)):
        w //= 2
    return w


def outer_offsets(p: Plan, unit: int) -> list[tuple[int, int]]:
    """(source, destination) offsets of one kernel launch per index of the batch axes beyond the inner three
    (``unit``: what a stride of one vector element is in the caller's addressing); one launch, at (0, 0), where
    there are at most three."""
    offs = [(0, 0)]
    for size, ss, ds in p.batch[:-3]:
        offs = [(a + i * ss * unit, b + i * ds * unit) for a, b in offs for i in range(size)]
    return offs
