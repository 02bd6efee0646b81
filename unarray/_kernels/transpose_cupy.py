"""Batched tiled transpose in CUDA C through CuPy: ``ua.ascontiguousarray`` on CuPy arrays.

Four templates, instantiated per word of 1, 2, 4, 8 and 16 bytes:

- ``transpose_tile_v<W, VEC, 64>``: the fast path, taken where rows, columns, strides and addresses
  are multiples of 16 bytes (a 16k x 16k float32 matrix, NCHW with 256 channels): a 64 x 64 tile
  through padded shared memory, each thread reading and writing 16 bytes at a time, several loads in
  flight (the scalar 32 x 32 tile below reached about two thirds of copy bandwidth on the H100);
- ``transpose_tile<W, TILE, ROWS>``: the classic padded-tile transpose. A block of ``TILE`` x
  ``ROWS`` threads reads a ``TILE`` x ``TILE`` tile along the source's contiguous axis into shared
  memory (``TILE + 1`` words a row, so a column read touches every bank once), then writes it
  along the destination's contiguous axis; each thread moves ``TILE / ROWS`` words each way. The
  element (or the vector element of a :class:`Plan`) is one word ``W``, so any dtype of 1 to 16
  bytes is a bit copy.
- ``transpose_skinny<W, TR, TC, PAD>``: the same through a ``TR`` x ``TC`` tile with one side of 4 or 16
  words, for a transpose with few rows or columns (NCHW to NHWC with 3 channels), walked linearly by
  256 threads;
- ``copy_rows<W>``: a vector element longer than 16 bytes is contiguous on both sides already; a
  block moves whole vectors, lanes along the vector, rows of the block along the destination.

Importing this module imports CuPy; the kernels compile on first use (NVRTC, cached by CuPy).
"""

from __future__ import annotations

import functools
from typing import Any

import cupy
import numpy as np

from unarray._kernels.layout_plan import Plan

__all__ = ["launch", "transpose", "transposable"]

_SOURCE = r"""
struct __align__(16) w16 { unsigned long long lo, hi; };

template <typename W, int TILE, int ROWS>
__global__ void transpose_tile(const W* __restrict__ src, W* __restrict__ dst, long long R, long long C,
                               long long SR, long long DC, long long nr, long long nc, long long B1,
                               long long B2, long long SB0, long long SB1, long long SB2, long long DB0,
                               long long DB1, long long DB2) {
    // dst[b, c * DC + r] = src[b, r * SR + c]: strides in words.
    __shared__ W tile[TILE][TILE + 1];
    long long pid = blockIdx.x;
    long long tc = pid % nc;
    pid /= nc;
    long long tr = pid % nr;
    long long b = pid / nr;
    long long b2 = b % B2, b1 = (b / B2) % B1, b0 = b / (B2 * B1);
    const W* s = src + b0 * SB0 + b1 * SB1 + b2 * SB2;
    W* d = dst + b0 * DB0 + b1 * DB1 + b2 * DB2;
    long long c = tc * TILE + threadIdx.x;
    for (int j = threadIdx.y; j < TILE; j += ROWS) {
        long long r = tr * TILE + j;
        if (r < R && c < C) tile[j][threadIdx.x] = s[r * SR + c];
    }
    __syncthreads();
    long long r = tr * TILE + threadIdx.x;
    for (int j = threadIdx.y; j < TILE; j += ROWS) {
        long long cc = tc * TILE + j;
        if (r < R && cc < C) d[cc * DC + r] = tile[threadIdx.x][j];
    }
}

template <typename W, int VEC, int TILE>
__global__ void transpose_tile_v(const W* __restrict__ src, W* __restrict__ dst, long long R, long long C,
                                 long long SR, long long DC, long long nr, long long nc, long long B1,
                                 long long B2, long long SB0, long long SB1, long long SB2, long long DB0,
                                 long long DB1, long long DB2) {
    // The padded-tile transpose with 16-byte global accesses: VEC words per thread each way (rows,
    // columns, strides and addresses are multiples of VEC words, checked by the caller). 256 threads,
    // a TILE x TILE tile, TILE * TILE / 256 / VEC loads in flight per thread.
    constexpr int TPR = TILE / VEC;  // threads along a tile row
    constexpr int RPP = 256 / TPR;   // tile rows per pass
    __shared__ W tile[TILE][TILE + 1];
    long long pid = blockIdx.x;
    long long tc = pid % nc;
    pid /= nc;
    long long tr = pid % nr;
    long long b = pid / nr;
    long long b2 = b % B2, b1 = (b / B2) % B1, b0 = b / (B2 * B1);
    const W* s = src + b0 * SB0 + b1 * SB1 + b2 * SB2;
    W* d = dst + b0 * DB0 + b1 * DB1 + b2 * DB2;
    const int tx = threadIdx.x % TPR, ty = threadIdx.x / TPR;
    uint4 q[TILE / RPP];
    long long c = tc * TILE + tx * VEC;
#pragma unroll
    for (int k = 0; k < TILE / RPP; ++k) {
        long long r = tr * TILE + ty + k * RPP;
        if (r < R && c < C) q[k] = *reinterpret_cast<const uint4*>(s + r * SR + c);
    }
#pragma unroll
    for (int k = 0; k < TILE / RPP; ++k) {
        const W* e = reinterpret_cast<const W*>(&q[k]);
#pragma unroll
        for (int u = 0; u < VEC; ++u) tile[ty + k * RPP][tx * VEC + u] = e[u];
    }
    __syncthreads();
    long long r = tr * TILE + tx * VEC;
#pragma unroll
    for (int k = 0; k < TILE / RPP; ++k) {
        int j = ty + k * RPP;
        long long cc = tc * TILE + j;
        uint4 o;
        W* e = reinterpret_cast<W*>(&o);
#pragma unroll
        for (int u = 0; u < VEC; ++u) e[u] = tile[tx * VEC + u][j];
        if (r < R && cc < C) *reinterpret_cast<uint4*>(d + cc * DC + r) = o;
    }
}

template <typename W, int TR, int TC, int PAD>
__global__ void transpose_skinny(const W* __restrict__ src, W* __restrict__ dst, long long R, long long C,
                                 long long SR, long long DC, long long nr, long long nc, long long B1,
                                 long long B2, long long SB0, long long SB1, long long SB2, long long DB0,
                                 long long DB1, long long DB2) {
    // The same transpose on a TR x TC tile, TR or TC small (a few channels: NCHW <-> NHWC with C = 3).
    // 256 threads walk the tile linearly: along c to read, along r to write. Rows are padded by PAD
    // words so that a warp's TR-high column (32 / TR columns at once) falls on distinct banks.
    __shared__ W tile[TR][TC + PAD];
    long long pid = blockIdx.x;
    long long tc = pid % nc;
    pid /= nc;
    long long tr = pid % nr;
    long long b = pid / nr;
    long long b2 = b % B2, b1 = (b / B2) % B1, b0 = b / (B2 * B1);
    const W* s = src + b0 * SB0 + b1 * SB1 + b2 * SB2;
    W* d = dst + b0 * DB0 + b1 * DB1 + b2 * DB2;
    for (int k = threadIdx.x; k < TR * TC; k += blockDim.x) {
        int i = k / TC, j = k % TC;
        long long r = tr * TR + i, c = tc * TC + j;
        if (r < R && c < C) tile[i][j] = s[r * SR + c];
    }
    __syncthreads();
    for (int k = threadIdx.x; k < TR * TC; k += blockDim.x) {
        int i = k % TR, j = k / TR;
        long long r = tr * TR + i, c = tc * TC + j;
        if (r < R && c < C) d[c * DC + r] = tile[i][j];
    }
}

template <typename W>
__global__ void copy_rows(const W* __restrict__ src, W* __restrict__ dst, long long R, long long C,
                          long long V, long long SR, long long DC, long long n_rows, long long B1,
                          long long B2, long long SB0, long long SB1, long long SB2, long long DB0,
                          long long DB1, long long DB2) {
    // dst[b, c * DC + r * V + v] = src[b, r * SR + c * V + v]; rows (b, c, r) in destination order.
    long long q = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    if (q >= n_rows) return;
    long long r = q % R, t = q / R;
    long long c = t % C, b = t / C;
    long long b2 = b % B2, b1 = (b / B2) % B1, b0 = b / (B2 * B1);
    const W* s = src + b0 * SB0 + b1 * SB1 + b2 * SB2 + r * SR + c * V;
    W* d = dst + b0 * DB0 + b1 * DB1 + b2 * DB2 + c * DC + r * V;
    for (long long v = threadIdx.x; v < V; v += blockDim.x) d[v] = s[v];
}
"""

_WORD_TYPES = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long", 16: "w16"}
# Square tiles: 32 x 32 of 4- to 16-byte words, 64 x 64 of 1- and 2-byte words (a warp's row read is 64 or
# 128 bytes), ROWS rows of threads. Skinny tiles where the rows or the columns are few: about 16 KiB of
# shared memory either way.
_TILE = {1: (64, 4), 2: (64, 4), 4: (32, 8), 8: (32, 8), 16: (32, 8)}
_LONG = {1: 1024, 2: 1024, 4: 1024, 8: 512, 16: 256}  # the long side of a tile 4 short
_SKINNY = 16  # rows or columns up to this take a skinny tile


def _tile_name(w: int) -> str:
    t, rows = _TILE[w]
    return f"transpose_tile<{_WORD_TYPES[w]}, {t}, {rows}>"


def _skinny(w: int, rows: int, cols: int) -> tuple[int, int]:
    short = 4 if min(rows, cols) <= 4 else 16
    long = _LONG[w] * 4 // short
    return (short, long) if rows <= cols else (long, short)


def _skinny_name(w: int, tr: int, tc: int) -> str:
    pad = 32 // tr if tr < tc else 1  # a few rows: a warp writes 32 / tr columns of tr words at once
    return f"transpose_skinny<{_WORD_TYPES[w]}, {tr}, {tc}, {pad}>"


_VEC_TILE = 64  # the vectorised tile: 64 x 64 words, 16 bytes a thread access


def _vec_name(w: int) -> str:
    return f"transpose_tile_v<{_WORD_TYPES[w]}, {16 // w}, {_VEC_TILE}>"


def _rows_name(w: int) -> str:
    return f"copy_rows<{_WORD_TYPES[w]}>"


@functools.cache
def _function(name: str) -> Any:
    # One module per instantiation, compiled on first use (NVRTC; CuPy caches the binary on disk).
    mod = cupy.RawModule(code=_SOURCE, options=("-std=c++17",), name_expressions=[name])
    return mod.get_function(name)


def _word(nbytes: int, *addresses: int) -> int:
    for w in (16, 8, 4, 2):
        if nbytes % w == 0 and all(a % w == 0 for a in addresses):
            return w
    return 1


def transposable(itemsize: int, p: Plan, address: int) -> bool:
    """Whether the kernels take a view of ``itemsize``-byte elements at ``address``: a vector element of
    1, 2, 4, 8 or 16 bytes on its own boundary (the tile kernels), or a longer one (the row copy)."""
    vec_bytes = p.vec * itemsize
    return vec_bytes > 16 or (vec_bytes in _WORD_TYPES and address % vec_bytes == 0)


def transpose(x: Any, p: Plan) -> Any:
    """Materialise the permuted CuPy view ``x`` (planned by ``p``) as a new C-contiguous CuPy array."""
    out = cupy.empty(x.shape, dtype=x.dtype)
    with x.device:
        launch(x.data.ptr, out.data.ptr, x.dtype.itemsize, p)
    return out


def launch(src: int, dst: int, itemsize: int, p: Plan, stream: Any = None) -> None:
    """Run ``p`` from the address ``src`` (the view's first element) into the compact ``dst``, on the
    current device, on ``stream`` (CuPy's current stream where None; torch passes its own)."""
    if stream is not None:
        with stream:
            return launch(src, dst, itemsize, p)
    for fn, grid, block, args in _config(p, itemsize, src % 16, dst % 16):
        for s_off, d_off in _offsets(p, itemsize, src % 16, dst % 16):
            fn(grid, block, (np.uintp(src + s_off), np.uintp(dst + d_off), *args))
    return None


@functools.lru_cache(maxsize=512)
def _config(p: Plan, itemsize: int, src_mod: int, dst_mod: int) -> tuple[tuple[Any, ...], ...]:
    # The kernel, grid, block and arguments for a plan (cached: a repeated layout pays only the launch).
    vec_bytes = p.vec * itemsize
    if not transposable(itemsize, p, src_mod):
        raise ValueError(f"no transpose kernel for a {vec_bytes}-byte element at an address {src_mod} mod 16")
    tiled = vec_bytes <= 16
    w = vec_bytes if tiled else _word(vec_bytes, src_mod, dst_mod)
    v = vec_bytes // w
    i64 = np.int64
    batch = [(1, 0, 0)] * (3 - len(p.batch)) + list(p.batch)
    inner = batch[-3:]
    strides = (i64(inner[1][0]), i64(inner[2][0]), *(i64(st * v) for _, st, _ in inner),
               *(i64(st * v) for _, _, st in inner))
    nb = inner[0][0] * inner[1][0] * inner[2][0]
    vec = 16 // w
    words = (p.rows, p.cols, p.src_row_stride, p.dst_col_stride, *(st for _, st, _ in inner),
             *(st for _, _, st in inner))
    if tiled and w < 16 and min(p.rows, p.cols) >= _VEC_TILE and src_mod == 0 and dst_mod == 0 \
            and all(n % vec == 0 for n in words):
        nr, nc = -(-p.rows // _VEC_TILE), -(-p.cols // _VEC_TILE)
        return ((_function(_vec_name(w)), (nr * nc * nb,), (256,),
                 (i64(p.rows), i64(p.cols), i64(p.src_row_stride), i64(p.dst_col_stride), i64(nr), i64(nc),
                  *strides)),)
    if tiled and min(p.rows, p.cols) <= _SKINNY:
        tr, tc = _skinny(w, p.rows, p.cols)
        nr, nc = -(-p.rows // tr), -(-p.cols // tc)
        return ((_function(_skinny_name(w, tr, tc)), (nr * nc * nb,), (256,),
                 (i64(p.rows), i64(p.cols), i64(p.src_row_stride), i64(p.dst_col_stride), i64(nr), i64(nc),
                  *strides)),)
    if tiled:
        t, rows = _TILE[w]
        nr, nc = -(-p.rows // t), -(-p.cols // t)
        return ((_function(_tile_name(w)), (nr * nc * nb,), (t, rows),
                 (i64(p.rows), i64(p.cols), i64(p.src_row_stride), i64(p.dst_col_stride), i64(nr), i64(nc),
                  *strides)),)
    lanes = min(256, 1 << (v - 1).bit_length())
    per_block = max(1, 256 // lanes)
    n_rows = nb * p.rows * p.cols
    return ((_function(_rows_name(w)), (-(-n_rows // per_block),), (lanes, per_block),
             (i64(p.rows), i64(p.cols), i64(v), i64(p.src_row_stride * v), i64(p.dst_col_stride * v),
              i64(n_rows), *strides)),)


@functools.lru_cache(maxsize=512)
def _offsets(p: Plan, itemsize: int, src_mod: int, dst_mod: int) -> tuple[tuple[int, int], ...]:
    # Byte offsets of the launches: one, unless more than three batch axes are left after merging.
    offs = [(0, 0)]
    for size, ss, ds in p.batch[:-3] if len(p.batch) > 3 else ():
        offs = [(a + i * ss * p.vec * itemsize, b + i * ds * p.vec * itemsize) for a, b in offs
                for i in range(size)]
    return tuple(offs)
