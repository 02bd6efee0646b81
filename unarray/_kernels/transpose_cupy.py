"""Batched tiled transpose in CUDA C through CuPy: ``ua.ascontiguousarray`` on CuPy arrays.

Four templates, instantiated per word of 1, 2, 4, 8 and 16 bytes:

- ``transpose_tile_v<W, VEC, 64, NT>``: the fast path, taken where rows, columns, strides and addresses
  are multiples of 16 bytes (a 16k x 16k float32 matrix, NCHW with 256 channels): a 64 x 64 tile
  through padded shared memory, each of ``NT`` threads reading and writing 16 bytes at a time, several loads
  in flight;
- ``transpose_tile<W, TILE, ROWS>``: the classic padded-tile transpose. A block of ``TILE`` x
  ``ROWS`` threads reads a ``TILE`` x ``TILE`` tile along the source's contiguous axis into shared
  memory (``TILE + 1`` words a row, so a column read touches every bank once), then writes it
  along the destination's contiguous axis; each thread moves ``TILE / ROWS`` words each way. The
  element (or the vector element of a :class:`Plan`) is one word ``W``, so any dtype of 1 to 16
  bytes is a bit copy.
- ``transpose_skinny<W, TR, TC, PAD>``: the same through a ``TR`` x ``TC`` tile with one side of 4 or 16
  words, for a transpose with few rows or columns (NCHW to NHWC with 3 channels), walked linearly by
  256 threads;
- ``transpose_few_rows<W, R>``: a transpose of ``R`` <= 16 rows into a compact destination (NCHW to NHWC
  with 3 channels): each thread reads ``R`` 16-byte runs, one per row, and writes the ``R`` interleaved
  16-byte words they make, staged through shared memory so that a block's stores are one contiguous span;
- ``copy_rows<W>``: a vector element longer than 16 bytes is contiguous on both sides already; a
  block moves whole vectors, lanes along the vector, rows of the block along the destination.

Importing this module imports CuPy; the kernels compile on first use (NVRTC, cached by CuPy).
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

import cupy

from unarray._kernels.layout_plan import Plan, outer_offsets, word

_driver: Any = cupy.cuda.driver

__all__ = ["few_rows", "kernel", "launch", "transpose", "transposable"]

_SOURCE = r"""
struct __align__(16) w16 { unsigned long long lo, hi; };

// The tile kernels' arguments (strides in words), and where a block starts: its tile (tr, tc) of nr x nc tiles
// and its batch element's source and destination (s, d).
#define TILE_ARGS const W* __restrict__ src, W* __restrict__ dst, long long R, long long C, long long SR, \
    long long DC, long long nr, long long nc, long long B1, long long B2, long long SB0, long long SB1, \
    long long SB2, long long DB0, long long DB1, long long DB2
#define TILE_START \
    long long pid = blockIdx.x; \
    long long tc = pid % nc; \
    pid /= nc; \
    long long tr = pid % nr; \
    long long b = pid / nr; \
    long long b2 = b % B2, b1 = (b / B2) % B1, b0 = b / (B2 * B1); \
    const W* s = src + b0 * SB0 + b1 * SB1 + b2 * SB2; \
    W* d = dst + b0 * DB0 + b1 * DB1 + b2 * DB2;

template <typename W, int TILE, int ROWS>
__global__ void transpose_tile(TILE_ARGS) {
    // dst[b, c * DC + r] = src[b, r * SR + c]: strides in words.
    __shared__ W tile[TILE][TILE + 1];
    TILE_START
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

template <typename W, int VEC, int TILE, int NT>
__global__ void __launch_bounds__(NT) transpose_tile_v(TILE_ARGS) {
    // The padded-tile transpose with 16-byte global accesses: VEC words per thread each way (rows,
    // columns, strides and addresses are multiples of VEC words, checked by the caller). NT threads,
    // a TILE x TILE tile, TILE * TILE / NT / VEC loads in flight per thread.
    constexpr int TPR = TILE / VEC;  // threads along a tile row
    constexpr int RPP = NT / TPR;    // tile rows per pass
    __shared__ W tile[TILE][TILE + 1];
    TILE_START
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
__global__ void transpose_skinny(TILE_ARGS) {
    // The same transpose on a TR x TC tile, TR or TC small (a few channels: NCHW <-> NHWC with C = 3).
    // 256 threads walk the tile linearly: along c to read, along r to write. Rows are padded by PAD
    // words so that a warp's TR-high column (32 / TR columns at once) falls on distinct banks.
    __shared__ W tile[TR][TC + PAD];
    TILE_START
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

template <typename W, int R>
__global__ void __launch_bounds__(128) transpose_few_rows(const W* __restrict__ src, W* __restrict__ dst,
                                                          long long ncv, long long SR, long long total,
                                                          long long B1, long long B2, long long SB0,
                                                          long long SB1, long long SB2) {
    // dst[g * R * P + c * R + r] = src[b, r * SR + cv * P + c], g = b * ncv + cv: the destination is compact
    // over (batch, column, row), so thread g owns R consecutive 16-byte words of it (P words of W each).
    constexpr int P = 16 / sizeof(W);
    __shared__ uint4 stage[128 * R];
    long long g = (long long)blockIdx.x * 128 + threadIdx.x;
    if (g < total) {
        long long cv = g % ncv, b = g / ncv;
        long long b2 = b % B2, b1 = (b / B2) % B1, b0 = b / (B2 * B1);
        const W* s = src + b0 * SB0 + b1 * SB1 + b2 * SB2 + cv * P;
        uint4 in[R];
#pragma unroll
        for (int r = 0; r < R; ++r) in[r] = __ldg(reinterpret_cast<const uint4*>(s + r * SR));
        uint4 out[R];
        W* o = reinterpret_cast<W*>(out);
#pragma unroll
        for (int c = 0; c < P; ++c) {
#pragma unroll
            for (int r = 0; r < R; ++r) o[c * R + r] = reinterpret_cast<const W*>(&in[r])[c];
        }
#pragma unroll
        for (int k = 0; k < R; ++k) stage[threadIdx.x * R + k] = out[k];
    }
    __syncthreads();
    long long first = (long long)blockIdx.x * 128;
    long long n = (total - first < 128 ? total - first : 128) * R;
    uint4* d = reinterpret_cast<uint4*>(dst) + first * R;
    for (int i = threadIdx.x; i < n; i += 128) d[i] = stage[i];
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


_VEC_TILE = 64  # the vectorised tile: 64 x 64 words, 16 bytes a thread access


def few_rows(p: Plan, itemsize: int, src_mod: int, dst_mod: int) -> bool:
    """Whether ``transpose_few_rows`` takes ``p``: at most 16 rows of 1- to 8-byte elements, columns,
    row stride and batch strides whole 16-byte words, aligned ends, and a destination compact over
    (batch, column, row), which a plan's fresh output is unless a batch axis sits inside it."""
    w = p.vec * itemsize
    if p.rows > _SKINNY or w not in (1, 2, 4, 8) or src_mod or dst_mod:
        return False
    per = 16 // w
    if p.cols % per or p.src_row_stride % per or any(ss % per for _, ss, _ in p.batch):
        return False
    expect = p.rows * p.cols
    for size, _, ds in reversed(p.batch):
        if size > 1 and ds != expect:
            return False
        expect *= size
    return p.dst_col_stride == p.rows


@functools.cache
def _function(name: str, device: int) -> Any:
    # One module per instantiation and device (a CUfunction belongs to one context), compiled on first use
    # (NVRTC; CuPy caches the binary on disk).
    with cupy.cuda.Device(device):
        mod = cupy.RawModule(code=_SOURCE, options=("-std=c++17",), name_expressions=[name])
        fn = mod.get_function(name)
        return fn, fn.kernel.ptr  # the RawKernel keeps its module (and the CUfunction) alive


def transposable(itemsize: int, p: Plan, address: int) -> bool:
    """Whether the kernels take a view of ``itemsize``-byte elements at ``address``: a vector element of
    1, 2, 4, 8 or 16 bytes on its own boundary (the tile kernels), or a longer one (the row copy)."""
    vec_bytes = p.vec * itemsize
    return vec_bytes > 16 or (vec_bytes in _WORD_TYPES and address % vec_bytes == 0)


def transpose(x: Any, p: Plan) -> Any:
    """Materialise the permuted CuPy view ``x`` (planned by ``p``) as a new C-contiguous CuPy array."""
    out = cupy.empty(x.shape, dtype=x.dtype)
    with x.device:
        launch(x.data.ptr, out.data.ptr, x.dtype.itemsize, p, cupy.cuda.get_current_stream().ptr, x.device.id)
    return out


def launch(src: int, dst: int, itemsize: int, p: Plan, stream: int, device: int) -> None:
    """Run ``p`` from the address ``src`` (the view's first element) into the compact ``dst`` on ``device``
    (current), on the raw stream handle ``stream``: one driver launch per kernel, its fixed arguments packed
    once per plan (CuPy's own kernel call converts them at every launch)."""
    for name, grid, block, consts in _config(p, itemsize, src % 16, dst % 16):
        fn = _function(name, device)[1]
        for s_off, d_off in _offsets(p, itemsize):
            a, b = ctypes.c_uint64(src + s_off), ctypes.c_uint64(dst + d_off)
            params = (ctypes.c_void_p * (2 + len(consts[1])))(ctypes.addressof(a), ctypes.addressof(b), *consts[1])
            _driver.launchKernel(fn, grid[0], 1, 1, *block, 0, stream, ctypes.addressof(params), 0)


def _pack(*args: Any) -> tuple[tuple[Any, ...], tuple[int, ...]]:
    # The kernel's fixed arguments as C values and their addresses (the values kept alive beside them).
    values = tuple(ctypes.c_int64(int(a)) for a in args)
    return values, tuple(ctypes.addressof(v) for v in values)


def kernel(p: Plan, itemsize: int, src_mod: int, dst_mod: int = 0) -> str:
    """The kernel :func:`launch` runs for ``p`` (its template instantiation), from the same decision."""
    return str(_config(p, itemsize, src_mod, dst_mod)[0][0])


@functools.lru_cache(maxsize=512)
def _config(p: Plan, itemsize: int, src_mod: int, dst_mod: int) -> tuple[tuple[Any, ...], ...]:
    # The kernel, grid, block and arguments for a plan (cached: a repeated layout pays only the launch).
    vec_bytes = p.vec * itemsize
    if not transposable(itemsize, p, src_mod):
        raise ValueError(f"no transpose kernel for a {vec_bytes}-byte element at an address {src_mod} mod 16")
    tiled = vec_bytes <= 16
    w = vec_bytes if tiled else word(vec_bytes, src_mod, dst_mod)
    v = vec_bytes // w
    batch = [(1, 0, 0)] * (3 - len(p.batch)) + list(p.batch)
    inner = batch[-3:]
    strides = (inner[1][0], inner[2][0], *(st * v for _, st, _ in inner), *(st * v for _, _, st in inner))
    nb = inner[0][0] * inner[1][0] * inner[2][0]
    vec = 16 // w
    words = (p.rows, p.cols, p.src_row_stride, p.dst_col_stride, *(st for _, st, _ in inner),
             *(st for _, _, st in inner))
    if not tiled:
        lanes = min(256, 1 << (v - 1).bit_length())
        per_block = max(1, 256 // lanes)
        n_rows = nb * p.rows * p.cols
        return ((f"copy_rows<{_WORD_TYPES[w]}>", (-(-n_rows // per_block),), (lanes, per_block, 1),
                 _pack(p.rows, p.cols, v, p.src_row_stride * v, p.dst_col_stride * v, n_rows, *strides)),)
    if w < 16 and min(p.rows, p.cols) >= _VEC_TILE and src_mod == 0 and dst_mod == 0 \
            and all(n % vec == 0 for n in words):
        threads = 128 if w == 2 else 256  # 2-byte words: 4 loads in flight a thread, not 2
        name, tr, tc = f"transpose_tile_v<{_WORD_TYPES[w]}, {vec}, {_VEC_TILE}, {threads}>", _VEC_TILE, _VEC_TILE
        block = (threads, 1, 1)
    elif few_rows(p, itemsize, src_mod, dst_mod):
        ncv = p.cols // vec
        total = nb * ncv
        return ((f"transpose_few_rows<{_WORD_TYPES[w]}, {p.rows}>", (-(-total // 128),), (128, 1, 1),
                 _pack(ncv, p.src_row_stride, total, *strides[:5])),)
    elif min(p.rows, p.cols) <= _SKINNY:
        short = 4 if min(p.rows, p.cols) <= 4 else 16
        long = _LONG[w] * 4 // short
        tr, tc = (short, long) if p.rows <= p.cols else (long, short)
        pad = 32 // tr if tr < tc else 1  # a few rows: a warp writes 32 / tr columns of tr words at once
        name, block = f"transpose_skinny<{_WORD_TYPES[w]}, {tr}, {tc}, {pad}>", (256, 1, 1)
    else:
        tr, rows = _TILE[w]
        name, tc, block = f"transpose_tile<{_WORD_TYPES[w]}, {tr}, {rows}>", tr, (tr, rows, 1)
    nr, nc = -(-p.rows // tr), -(-p.cols // tc)
    return ((name, (nr * nc * nb,), block,
             _pack(p.rows, p.cols, p.src_row_stride, p.dst_col_stride, nr, nc, *strides)),)


@functools.lru_cache(maxsize=512)
def _offsets(p: Plan, itemsize: int) -> tuple[tuple[int, int], ...]:
    # Byte offsets of the launches: one, unless more than three batch axes are left after merging.
    return tuple(outer_offsets(p, p.vec * itemsize))
