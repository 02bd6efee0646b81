"""Batched tiled transpose in Triton: ``ua.ascontiguousarray`` on torch CUDA and ROCm tensors.

One kernel runs every :class:`~unarray._kernels.layout_plan.Plan`. A program loads a tile of
``BR`` source rows by ``BC`` source columns (by ``BV`` words of the vector element), read along
the source's contiguous axis, permutes it (``tl.trans`` / ``tl.permute``: the compiler stages the
tile through shared memory) and stores it along the destination's contiguous axis, so both the
reads and the writes are coalesced. Elements of 1 to 16 bytes, and vector elements of any length,
move as words of 1, 2, 4 or 8 bytes (a 16-byte complex128 is a vector of two 8-byte words): the
kernel never looks at values, so every dtype is the same bit copy.

Importing this module imports torch and Triton; ``unarray._kernels.layout_route`` imports it only for a CUDA or
ROCm tensor. Under ``TRITON_INTERPRET=1`` the same kernel runs on CPU tensors (the CPU test).
"""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from unarray._kernels.layout_plan import Plan, outer_offsets, word

__all__ = ["transpose"]

_WORDS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_TILE_BYTES = 16384  # one program's tile: 64 x 64 four-byte words, 128 x 128 bytes
_MAX_V = 256  # words of a vector element taken by one program; longer vectors split over programs


# Sizes are not specialised on (one compiled kernel serves every size); strides are, where they are
# multiples of 16 words, so that the compiler vectorises the loads and stores.
@triton.jit(do_not_specialize=["R", "C", "B1", "B2"])  # type: ignore[untyped-decorator]
def _transpose_kernel(src, dst, R, C, V, SR, DC, B1, B2, SB0, SB1, SB2,  # type: ignore[no-untyped-def]
                      DB0, DB1, DB2, BR: tl.constexpr, BC: tl.constexpr, BV: tl.constexpr, BIG: tl.constexpr):
    # dst[b, c * DC + r * V + v] = src[b, r * SR + c * V + v], strides in words.
    pid = tl.program_id(0)
    nc = tl.cdiv(C, BC)
    nv = tl.cdiv(V, BV)
    nr = tl.cdiv(R, BR)
    tv = pid % nv
    rest = pid // nv
    tc = rest % nc
    rest = rest // nc
    tr = rest % nr
    b = rest // nr
    if BIG:
        b = b.to(tl.int64)
    b2 = b % B2
    b1 = (b // B2) % B1
    b0 = b // (B2 * B1)
    s_base = b0 * SB0 + b1 * SB1 + b2 * SB2
    d_base = b0 * DB0 + b1 * DB1 + b2 * DB2
    r = tr * BR + tl.arange(0, BR)
    c = tc * BC + tl.arange(0, BC)
    if BIG:
        r = r.to(tl.int64)
        c = c.to(tl.int64)
    if BV == 1:
        m = (r[:, None] < R) & (c[None, :] < C)
        tile = tl.load(src + s_base + r[:, None] * SR + c[None, :], mask=m)
        t = tl.trans(tile)
        mt = (c[:, None] < C) & (r[None, :] < R)
        tl.store(dst + d_base + c[:, None] * DC + r[None, :], t, mask=mt)
    else:
        v = tv * BV + tl.arange(0, BV)
        if BIG:
            v = v.to(tl.int64)
        m = (r[:, None, None] < R) & (c[None, :, None] < C) & (v[None, None, :] < V)
        tile = tl.load(src + s_base + r[:, None, None] * SR + c[None, :, None] * V + v[None, None, :], mask=m)
        t = tl.permute(tile, (1, 0, 2))
        mt = (c[:, None, None] < C) & (r[None, :, None] < R) & (v[None, None, :] < V)
        tl.store(dst + d_base + c[:, None, None] * DC + r[None, :, None] * V + v[None, None, :], t, mask=mt)


def _tiles(w: int, v: int, rows: int, cols: int) -> tuple[int, int, int]:
    # (BR, BC, BV): about _TILE_BYTES per program, rows and columns as square as powers of two allow,
    # except where the rows or the columns are fewer than that (NCHW -> NHWC with 3 channels: 4 x 2048).
    bv = min(triton.next_power_of_2(v), _MAX_V)
    cells = max(1, _TILE_BYTES // (w * bv))
    bc = 1 << ((cells.bit_length() - 1 + 1) // 2)
    br = max(1, cells // bc)
    if rows < br:
        br = triton.next_power_of_2(rows)
        bc = min(max(1, cells // br), triton.next_power_of_2(cols))
    elif cols < bc:
        bc = triton.next_power_of_2(cols)
        br = min(max(1, cells // bc), triton.next_power_of_2(rows))
    return br, bc, bv


def transpose(x: torch.Tensor, p: Plan) -> torch.Tensor:
    """Materialise the permuted view ``x`` (planned by ``p``) as a new C-contiguous tensor."""
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = p.size
    src = torch.as_strided(x, (n,), (1,), x.storage_offset())  # the compact source, from x's first element
    vec_bytes = p.vec * x.element_size()
    w = word(vec_bytes, src.data_ptr(), out.data_ptr(), widest=8)
    words = _WORDS[w]
    s = src.view(torch.uint8).view(words)
    d = out.view(-1).view(torch.uint8).view(words)
    v = vec_bytes // w
    batch = [(1, 0, 0)] * (3 - len(p.batch)) + list(p.batch)
    inner = batch[-3:]
    br, bc, bv = _tiles(w, v, p.rows, p.cols)
    per_batch = triton.cdiv(p.rows, br) * triton.cdiv(p.cols, bc) * triton.cdiv(v, bv)
    nb = inner[0][0] * inner[1][0] * inner[2][0]
    big = n * x.element_size() // w >= 2**31 - 1
    warps = 8 if br * bc * bv * w >= 16384 else 4
    args: tuple[Any, ...] = (p.rows, p.cols, v, p.src_row_stride * v, p.dst_col_stride * v, inner[1][0],
                             inner[2][0], *(st * v for _, st, _ in inner), *(st * v for _, _, st in inner))
    total = per_batch * nb  # under 2**31: a program moves _TILE_BYTES, 2**31 of them 32 TiB
    for s_off, d_off in outer_offsets(p, v):
        # More than three batch axes (rare after merging): one launch per index of the outer ones.
        _transpose_kernel[(total,)](s[s_off:], d[d_off:], *args, BR=br, BC=bc, BV=bv, BIG=big,
                                    num_warps=warps)
    return out
