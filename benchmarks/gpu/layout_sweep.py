#!/usr/bin/env python3
"""Which tile configuration moves 2-byte words fastest in ua.ascontiguousarray's CUDA transpose? (cupy + numpy only)

Run from the repository root:  python3 benchmarks/gpu/layout_sweep.py        (GPU; under a minute)
                               python3 benchmarks/gpu/layout_sweep.py --dry  (CPU: checks the cases' kernel arguments)
Options: --only SUBSTR (candidates whose label contains it), --samples N (default 15).

Each candidate kernel is compiled on its own (cupy.RawModule over the module's _SOURCE plus the variants
below; transpose_tile_p zips two rows into 4-byte pairs in registers, BRANCH marks one of its configurations),
checked bit for bit against cupy.ascontiguousarray of the permuted view, and timed with CUDA events
(3 warm-ups, median of N samples of a few back-to-back launches) against a copy of the same bytes (the faster
of ndarray.copy and cupy.copyto). Fraction = copy time / kernel time.
"""
from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

# unarray/_kernels/transpose_cupy.py's _SOURCE, verbatim.
BASE_SOURCE = r"""
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

template <typename W, int VEC, int TILE>
__global__ void transpose_tile_v(TILE_ARGS) {
    // The padded-tile transpose with 16-byte global accesses: VEC words per thread each way (rows,
    // columns, strides and addresses are multiples of VEC words, checked by the caller). 256 threads,
    // a TILE x TILE tile, TILE * TILE / 256 / VEC loads in flight per thread.
    constexpr int TPR = TILE / VEC;  // threads along a tile row
    constexpr int RPP = 256 / TPR;   // tile rows per pass
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

EXTRA_SOURCE = r"""
// ---- sweep candidates ----
template <typename W, int VEC, int TILE, int NT, int PAD>
__global__ void __launch_bounds__(NT) tile_vx(TILE_ARGS) {
    // transpose_tile_v with NT threads and TILE + PAD words a shared row.
    constexpr int TPR = TILE / VEC;
    constexpr int RPP = NT / TPR;
    __shared__ W tile[TILE][TILE + PAD];
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

template <typename W, int TILE, int NT, int SWZ, int RSW>
__global__ void __launch_bounds__(NT) tile_pair(TILE_ARGS) {
    // 2-byte words: rows 2p and 2p+1 of a TILE x TILE tile are read 16 bytes at a time and zipped in registers
    // (__byte_perm) into 4-byte pairs (src[2p][c], src[2p+1][c]), which are the destination row c's words 2p and
    // 2p+1; shared memory holds TILE/2 x TILE pairs, pair (p, c) at column c ^ ((c / 32) * SWZ ^ (p / 32) * RSW) % 32.
    constexpr int TPR = TILE / 8;       // threads along a tile row, 16 bytes each
    constexpr int PPP = NT / TPR;       // row pairs per pass
    constexpr int K = TILE / 2 / PPP;   // passes: 2 K loads in flight per thread
    __shared__ unsigned int sh[TILE / 2][TILE + 1];
    TILE_START
    const int tx = threadIdx.x % TPR, ty = threadIdx.x / TPR;
    uint4 ra[K], rb[K];
    long long c = tc * TILE + tx * 8;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        long long r = tr * TILE + 2 * (ty + k * PPP);
        if (r < R && c < C) {
            ra[k] = *reinterpret_cast<const uint4*>(s + r * SR + c);
            rb[k] = *reinterpret_cast<const uint4*>(s + (r + 1) * SR + c);
        }
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
        unsigned int* row = sh[ty + k * PPP];
        const unsigned int* x = reinterpret_cast<const unsigned int*>(&ra[k]);
        const unsigned int* y = reinterpret_cast<const unsigned int*>(&rb[k]);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            int c0 = tx * 8 + 2 * i;
            int p = ty + k * PPP;
            int sw = (((c0 >> 5) * SWZ) ^ ((p >> 5) * RSW)) & 31;
            row[c0 ^ sw] = __byte_perm(x[i], y[i], 0x5410);
            row[(c0 + 1) ^ sw] = __byte_perm(x[i], y[i], 0x7632);
        }
    }
    __syncthreads();
    long long r = tr * TILE + tx * 8;
#pragma unroll
    for (int k = 0; k < TILE / PPP; ++k) {
        int j = ty + k * PPP;
        int p = 4 * tx, cj = j ^ ((((j >> 5) * SWZ) ^ ((p >> 5) * RSW)) & 31);  // p to p + 3: one 32-row block
        long long cc = tc * TILE + j;
        uint4 o;
        o.x = sh[p][cj];
        o.y = sh[p + 1][cj];
        o.z = sh[p + 2][cj];
        o.w = sh[p + 3][cj];
        if (r < R && cc < C) *reinterpret_cast<uint4*>(d + cc * DC + r) = o;
    }
}

// ---- the branch's transpose_tile_p, verbatim ----
template <typename W, int TILE, int NT>
__global__ void __launch_bounds__(NT) transpose_tile_p(TILE_ARGS) {
    // transpose_tile_v for 2-byte W: a thread reads 16 bytes of rows 2p and 2p + 1 and zips them (__byte_perm) into
    // 4-byte pairs (src[2p][c], src[2p + 1][c]), words 2p and 2p + 1 of destination row c; the shared tile holds
    // TILE / 2 x TILE pairs, pair (p, c) at column c ^ (c / 32 * 256 / TILE ^ p / 32 * 2) % 32: no bank shared
    // by a warp's stores (TPR columns 8 apart on 32 / TPR rows) or loads (TPR rows 4 apart on 32 / TPR columns).
    constexpr int TPR = TILE / 8, PPP = NT / TPR, K = TILE / 2 / PPP;  // threads a row, row pairs a pass, passes
    __shared__ unsigned int tile[TILE / 2][TILE + 1];
    TILE_START
    const int tx = threadIdx.x % TPR, ty = threadIdx.x / TPR;
    uint4 qa[K], qb[K];
    long long c = tc * TILE + tx * 8;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        long long r = tr * TILE + 2 * (ty + k * PPP);
        if (r < R && c < C) {
            qa[k] = *reinterpret_cast<const uint4*>(s + r * SR + c);
            qb[k] = *reinterpret_cast<const uint4*>(s + (r + 1) * SR + c);
        }
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int p = ty + k * PPP;
        const unsigned int* x = reinterpret_cast<const unsigned int*>(&qa[k]);
        const unsigned int* y = reinterpret_cast<const unsigned int*>(&qb[k]);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            int c0 = tx * 8 + 2 * i, sw = ((c0 >> 5) * (256 / TILE) ^ (p >> 5) * 2) & 31;
            tile[p][c0 ^ sw] = __byte_perm(x[i], y[i], 0x5410);
            tile[p][(c0 + 1) ^ sw] = __byte_perm(x[i], y[i], 0x7632);
        }
    }
    __syncthreads();
    long long r = tr * TILE + tx * 8;
    const int p = 4 * tx;  // rows p to p + 3: one 32-row block, one swizzle
#pragma unroll
    for (int k = 0; k < TILE / PPP; ++k) {
        int j = ty + k * PPP, cj = j ^ (((j >> 5) * (256 / TILE) ^ (p >> 5) * 2) & 31);
        long long cc = tc * TILE + j;
        uint4 o = make_uint4(tile[p][cj], tile[p + 1][cj], tile[p + 2][cj], tile[p + 3][cj]);
        if (r < R && cc < C) *reinterpret_cast<uint4*>(d + cc * DC + r) = o;
    }
}
"""

SOURCE = BASE_SOURCE + EXTRA_SOURCE

US = "unsigned short"
# label, template instantiation, threads a block, tile side (elements), word bytes.
CANDIDATES = [
    ("BASELINE tile_v 64 256thr 2ld", f"transpose_tile_v<{US}, 8, 64>", 256, 64, 2),
    ("tile_v 128 256thr 8ld", f"transpose_tile_v<{US}, 8, 128>", 256, 128, 2),
    ("tile_vx 64 128thr 4ld", f"tile_vx<{US}, 8, 64, 128, 1>", 128, 64, 2),
    ("tile_vx 64 64thr 8ld", f"tile_vx<{US}, 8, 64, 64, 1>", 64, 64, 2),
    ("tile_vx 64 256thr pad2", f"tile_vx<{US}, 8, 64, 256, 2>", 256, 64, 2),
    ("tile_vx 128 512thr 4ld", f"tile_vx<{US}, 8, 128, 512, 1>", 512, 128, 2),
    ("pair 64 256thr 2ld noswz", f"tile_pair<{US}, 64, 256, 0, 0>", 256, 64, 2),
    ("pair 128 256thr 8ld rd2way", f"tile_pair<{US}, 128, 256, 2, 0>", 256, 128, 2),
    ("tile_p 64 256thr 2ld", f"transpose_tile_p<{US}, 64, 256>", 256, 64, 2),
    ("tile_p 64 128thr 4ld BRANCH", f"transpose_tile_p<{US}, 64, 128>", 128, 64, 2),
    ("tile_p 64 64thr 8ld", f"transpose_tile_p<{US}, 64, 64>", 64, 64, 2),
    ("tile_p 128 256thr 8ld", f"transpose_tile_p<{US}, 128, 256>", 256, 128, 2),
    ("tile_p 128 128thr 16ld", f"transpose_tile_p<{US}, 128, 128>", 128, 128, 2),
    ("tile_p 128 512thr 4ld", f"transpose_tile_p<{US}, 128, 512>", 512, 128, 2),
    ("REF f32 tile_v 64 256thr", "transpose_tile_v<unsigned int, 4, 64>", 256, 64, 4),
]


def cases(scale: int) -> list[tuple[str, int, tuple[int, ...], tuple[int, ...], tuple[int, ...]]]:
    # name, word bytes, source shape, permutation, kernel plan (R, C, SR, DC, batches, batch stride src, dst):
    # dst[b, c * DC + r] = src[b, r * SR + c].
    n = 16384 // scale
    hw = 56 // (2 if scale > 1 else 1)
    return [
        ("16k^2 bf16 transpose", 2, (n, n), (1, 0), (n, n, n, n, 1, 0, 0)),
        ("NCHW->NHWC 64x256x56x56 fp16", 2, (64, 256, hw, hw), (0, 2, 3, 1),
         (256, hw * hw, hw * hw, 256, 64, 256 * hw * hw, 256 * hw * hw)),
        ("NHWC->NCHW 64x56x56x256 fp16 (info)", 2, (64, hw, hw, 256), (0, 3, 1, 2),
         (hw * hw, 256, 256, hw * hw, 64, 256 * hw * hw, 256 * hw * hw)),
        ("16k^2 f32 transpose (info)", 4, (n, n), (1, 0), (n, n, n, n, 1, 0, 0)),
    ]


def kernel_args(plan: tuple[int, ...], tile: int) -> tuple[int, tuple[int, ...]]:
    # The grid and the scalar arguments after (src, dst), as unarray's _config packs them.
    R, C, SR, DC, nb, sbs, dbs = plan
    nr, nc = -(-R // tile), -(-C // tile)
    return nr * nc * nb, (R, C, SR, DC, nr, nc, 1, nb, 0, 0, sbs, 0, 0, dbs)


def dry() -> int:
    # CPU check of the case plans: the kernels' index map applied with NumPy equals the permuted view's copy.
    bad = 0
    for name, wb, shape, perm, plan in cases(8):
        dt = np.uint16 if wb == 2 else np.uint32
        src = (np.arange(math.prod(shape), dtype=np.uint64) * 2654435761 % (1 << (8 * wb))).astype(dt)
        want = np.ascontiguousarray(src.reshape(shape).transpose(perm)).ravel()
        R, C, SR, DC, nb, sbs, dbs = plan
        got = np.empty_like(want)
        r, c = np.meshgrid(np.arange(R), np.arange(C), indexing="ij")
        for b in range(nb):
            got[b * dbs + c * DC + r] = src[b * sbs + r * SR + c]
        ok = np.array_equal(got, want)
        bad += not ok
        print(f"dry {name}: plan {plan} {'ok' if ok else 'WRONG'}", flush=True)
        for _label, _, threads, tile, cwb in CANDIDATES:
            if cwb == wb:
                assert threads % 32 == 0 and threads <= 1024 and all(v % (16 // wb) == 0 for v in plan[:4])
                kernel_args(plan, tile)
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dry", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--samples", type=int, default=15)
    ap.add_argument("--scale", type=int, default=1, help="divide the sides by this (a quick smoke run)")
    opts = ap.parse_args()
    if opts.dry:
        return dry()
    import cupy

    t0 = time.time()
    dev = cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(dev.id)
    print(f"device {props['name'].decode()}, cupy {cupy.__version__}, numpy {np.__version__}, "
          f"python {sys.version.split()[0]}, CUDA runtime {cupy.cuda.runtime.runtimeGetVersion()}", flush=True)
    pool = cupy.get_default_memory_pool()

    def time_ms(fn, inner: int) -> float:
        for _ in range(3):
            fn()
        s, e = cupy.cuda.Event(), cupy.cuda.Event()
        out = []
        for _ in range(opts.samples):
            s.record()
            for _ in range(inner):
                fn()
            e.record()
            e.synchronize()
            out.append(cupy.cuda.get_elapsed_time(s, e) / inner)
        return float(np.median(out))

    kernels = {}
    for label, expr, *_ in CANDIDATES:
        if opts.only not in label and not label.startswith(("BASELINE", "REF")):
            continue
        tc = time.time()
        try:
            mod = cupy.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=[expr])
            kernels[label] = mod.get_function(expr)
            print(f"compiled {label:28s} {expr} in {time.time() - tc:.1f} s", flush=True)
        except Exception as exc:  # one bad candidate must not stop the sweep
            print(f"COMPILE FAILED {label}: {type(exc).__name__}: {str(exc)[:800]}", flush=True)

    table: dict[tuple[str, str], float] = {}
    for name, wb, shape, perm, plan in cases(opts.scale):
        dt = cupy.uint16 if wb == 2 else cupy.uint32
        size = math.prod(shape)
        x = cupy.arange(size, dtype=cupy.uint32) * cupy.uint32(2654435761)
        x ^= x >> cupy.uint32(13)
        src = x.astype(dt).reshape(shape)
        del x
        ref = cupy.ascontiguousarray(src.transpose(perm))
        out = cupy.empty_like(ref)
        cout = cupy.empty_like(src)
        nbytes = src.nbytes
        inner = 3 if nbytes >= (256 << 20) else 10
        t_copy = min(time_ms(lambda s=src: s.copy(), inner), time_ms(lambda s=src, o=cout: cupy.copyto(o, s), inner))
        print(f"\n== {name}: {nbytes / 2**20:.0f} MiB, copy {t_copy * 1e3:.1f} us = "
              f"{2 * nbytes / t_copy / 1e9:.2f} TB/s (read + write)", flush=True)
        for label, _expr, threads, tile, cwb in CANDIDATES:
            if cwb != wb or label not in kernels:
                continue
            fn = kernels[label]
            grid, scal = kernel_args(plan, tile)
            args = (src, out, *(np.int64(v) for v in scal))
            try:
                out.fill(0)
                fn((grid,), (threads,), args)
                cupy.cuda.Device().synchronize()
                ok = bool(cupy.array_equal(out, ref))
                if not ok:
                    print(f"  {label:28s} WRONG RESULT", flush=True)
                    continue
                t = time_ms(lambda fn=fn, grid=grid, threads=threads, args=args: fn((grid,), (threads,), args),
                            inner)
            except Exception as exc:
                print(f"  {label:28s} FAILED {type(exc).__name__}: {str(exc)[:400]}", flush=True)
                continue
            table[(name, label)] = t_copy / t
            print(f"  {label:28s} {t * 1e3:8.1f} us  {2 * nbytes / t / 1e9:5.2f} TB/s  "
                  f"{t_copy / t:.3f} of copy  exact", flush=True)
        del src, ref, out, cout
        pool.free_all_blocks()

    names = [c[0] for c in cases(opts.scale)]
    print("\nFraction of copy bandwidth (median of device-event samples; exact results only)\n", flush=True)
    print("| candidate | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for label, expr, *_ in CANDIDATES:
        if label in kernels:
            cells = [f"{table[(n, label)]:.3f}" if (n, label) in table else "" for n in names]
            print(f"| {label} (`{expr}`) | " + " | ".join(cells) + " |")
    print(f"\ntotal {time.time() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
