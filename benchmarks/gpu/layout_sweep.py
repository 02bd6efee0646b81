#!/usr/bin/env python3
"""Which tile configuration moves 2-byte words fastest in ua.ascontiguousarray's CUDA transpose? (cupy + numpy only)

Run from the repository root:  python3 benchmarks/gpu/layout_sweep.py        (GPU; under a minute)
                               python3 benchmarks/gpu/layout_sweep.py --dry  (CPU: checks the cases' kernel arguments)
Options: --only SUBSTR (candidates whose label contains it), --samples N (default 15).

Each candidate kernel is compiled on its own (cupy.RawModule over unarray/_kernels/transpose_cupy.py's _SOURCE,
whose transpose_tile_v takes the thread count, plus tile_pair below, which zips two rows into 4-byte pairs in
registers), checked bit for bit against cupy.ascontiguousarray of the permuted view, and timed with CUDA events
(3 warm-ups, median of N samples of a few back-to-back launches) against a copy of the same bytes (the faster
of ndarray.copy and cupy.copyto). Fraction = copy time / kernel time.
"""
from __future__ import annotations

import argparse
import math
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # (the checkout's unarray: its kernels' source)

EXTRA_SOURCE = r"""
// ---- sweep candidates ----
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
"""


US = "unsigned short"
# label, template instantiation, threads a block, tile side (elements), word bytes.
CANDIDATES = [
    ("BASELINE tile_v 64 256thr 2ld", f"transpose_tile_v<{US}, 8, 64, 256>", 256, 64, 2),
    ("tile_v 64 128thr 4ld", f"transpose_tile_v<{US}, 8, 64, 128>", 128, 64, 2),
    ("tile_v 64 64thr 8ld", f"transpose_tile_v<{US}, 8, 64, 64>", 64, 64, 2),
    ("tile_v 128 256thr 8ld", f"transpose_tile_v<{US}, 8, 128, 256>", 256, 128, 2),
    ("tile_v 128 512thr 4ld", f"transpose_tile_v<{US}, 8, 128, 512>", 512, 128, 2),
    ("pair 64 256thr 2ld noswz", f"tile_pair<{US}, 64, 256, 0, 0>", 256, 64, 2),
    ("pair 128 256thr 8ld rd2way", f"tile_pair<{US}, 128, 256, 2, 0>", 256, 128, 2),
    # swizzled: pair (p, c) at column c ^ (c / 32 * 256 / TILE ^ p / 32 * 2) % 32, no bank shared by a warp
    ("pair 64 256thr 2ld", f"tile_pair<{US}, 64, 256, 4, 2>", 256, 64, 2),
    ("pair 64 128thr 4ld", f"tile_pair<{US}, 64, 128, 4, 2>", 128, 64, 2),
    ("pair 64 64thr 8ld", f"tile_pair<{US}, 64, 64, 4, 2>", 64, 64, 2),
    ("pair 128 256thr 8ld", f"tile_pair<{US}, 128, 256, 2, 2>", 256, 128, 2),
    ("pair 128 128thr 16ld", f"tile_pair<{US}, 128, 128, 2, 2>", 128, 128, 2),
    ("pair 128 512thr 4ld", f"tile_pair<{US}, 128, 512, 2, 2>", 512, 128, 2),
    ("REF f32 tile_v 64 256thr", "transpose_tile_v<unsigned int, 4, 64, 256>", 256, 64, 4),
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

    from unarray._kernels.transpose_cupy import _SOURCE

    kernels = {}
    for label, expr, *_ in CANDIDATES:
        if opts.only not in label and not label.startswith(("BASELINE", "REF")):
            continue
        tc = time.time()
        try:
            mod = cupy.RawModule(code=_SOURCE + EXTRA_SOURCE, options=("-std=c++17",), name_expressions=[expr])
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
