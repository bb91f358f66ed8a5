#!/usr/bin/env python3
"""Time CuPy and PyTorch on this machine for gpubench's peer columns.

Measures, with CuPy and PyTorch on the current CUDA device, the benchmarks of
Metal.jl's CI suite (perf/array.jl, perf/kernel.jl, perf/metal.jl, and the
integration benchmarks perf/byval.jl and perf/metaldevrt.jl) that gpubench
keeps, at two sizes:

  S  Metal.jl's own fixtures: its 512x1000 Julia matrix, which is a NumPy
     (1000, 512) array (the 1d benchmarks use its 512000-element vector), and
     for the dims=1L/dims=2L names its 3x1000000 Julia matrix, a NumPy
     (1000000, 3) array.
  L  a (16384, 16384) array, 2^28 elements (1d: its flattened vector).

The hand-written kernels (kernel/*, integration/*) are CUDA C compiled with
CuPy's RawModule, the same kernels as gpubench's PTX (cmd/gpubench/
suite_kernels.go); PyTorch has no such figures. The integration benchmarks use
Metal.jl's 3072x1536 Julia matrix, a NumPy (1536, 3072) array, at S only.

The examples' workloads (workload/*, listed at S only, cmd/gpubench/suite_workload.go)
are the work of the programs in examples/ at their full sizes, as a PyTorch (and,
but for the bfloat16 transformer, CuPy) user writes it: k-means, a decoder block,
Monte Carlo options, a filtered group-by, an image filter; one call includes the
read-back of what the example reads back.

Julia is column-major: Julia's dims=1 is the last NumPy axis (axis=1 of a
matrix), dims=2 is axis=0, and a Julia permutation p of an n-d array is the
NumPy transpose with axes[j] = n - p[n-1-j].

Each figure is the median wall time, in nanoseconds, of one call plus a
synchronize of the current stream (as Metal.@sync measures), after a warm-up
(at least 3 calls and 0.1 s). Exceptions, documented per benchmark below:
kernel/launch times the launch call alone (as Metal.jl does; the synchronize
follows, untimed), sync/* time the synchronization itself, and the anchors of
../shared/peers/h200-2026-12-01-extra.md (the indexing and concatenation keys
take/*, put/*, scatter_add/*, bincount/*, concat/* without "+sync", and the
matrix products matmul/*, bmm/* but matmul/float32/512x1000x512+sync) are the
GPU time of one call by CUDA events (mode "events"). Inputs stay the
same between calls (no rotation): S inputs sit in the L2 cache, as in
Metal.jl's suite.

The ceilings are bandwidths in GB/s (10^9 bytes per second) of large
operations, timed the same way; "(read+write)" counts both directions.

Output: JSON in the format of peers/h200-2026-11-30.json:

  {"ceilings": {name: GB/s},
   "cupy_S": {key: ns}, "torch_S": {key: ns}, "cupy_L": {key: ns}, "torch_L": {key: ns},
   "meta": {...}}

"meta" is added by this script (gpubench ignores it): date, host, device,
driver, python/numpy/cupy/torch versions, the settings, "samples" (the number
of samples behind each figure, keyed "cupy_S/<key>") and "skipped" (why a
figure is missing, keyed the same way, or by ceiling name).

The keys are gpubench's peer keys (bench.PeerNames in bench/peers.go): the
Metal.jl name without "array/" and the storage level, copyto! written copyto;
gpubench's test checks that this script's --dry-run lists exactly the keys and
sizes of that table.

Usage:

  python3 peers/peers.py -o peers/h200-$(date +%F).json
  python3 peers/peers.py --select 'reductions/' --sizes L --libs torch
  python3 peers/peers.py --dry-run        # list what would be measured

It needs no network. A missing CuPy or PyTorch (or no CUDA device for it) is
skipped with a message; NumPy is needed for any measurement.
"""

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import sys
import time

# Metal.jl's fixtures (Julia m x n, column-major) and ours, as NumPy shapes.
M, N = 512, 1000
M_LONG, N_LONG = 3, 1_000_000
BIG = 16384
GiB = 1 << 30

SHAPES = {
    "S": {
        "mat": (N, M),                # Julia 512x1000
        "long": (N_LONG, M_LONG),     # Julia 3x1000000
        "3d": (25, 40, M),            # Julia (512, 40, 25)
        "4d": (10, 10, 10, M),        # Julia (512, 10, 10, 10)
        "byval": (1536, 3072),        # Julia 3072x1536 (perf/byval.jl, perf/metaldevrt.jl)
    },
    "L": {
        "mat": (BIG, BIG),
        "3d": (128, 128, BIG),        # Julia (16384, 128, 128)
        "4d": (32, 32, 16, BIG),      # Julia (16384, 16, 32, 32)
    },
}

# The indexing benchmarks' sizes: the anchors' 2^28-element sources with 2^26
# indices, and Metal.jl's 512000-element vector; tests shrink the large ones by
# INDEX_SCALE.
IDX_SRC, IDX_N, IDX_BINS = 1 << 28, 1 << 26, 1 << 20
IDX_SCALE = 1.0


def idx_dim(n):
    return max(64, int(n * IDX_SCALE))
# The matrix products' sizes (n x n times n x n); tests shrink them by MM_SCALE.
MM_SIZES = (512, 4096, 8192)
MM_SCALE = 1.0


def mm_dim(n):
    return max(8, int(n * MM_SCALE))


LIBS = ("cupy", "torch")
SIZES = ("S", "L")
WARMUP_CALLS = 3
WARMUP_SECONDS = 0.1
MIN_SAMPLES = 5


class Unsupported(Exception):
    """The library has no such operation."""


def julia_axis(dims, ndim):
    """The NumPy axis of Julia's dims (1-based, column-major)."""
    return ndim - dims


def julia_perm(perm):
    """The NumPy transpose axes of Julia's permutedims permutation."""
    n = len(perm)
    return tuple(n - perm[n - 1 - j] for j in range(n))


def numel(shape):
    p = 1
    for s in shape:
        p *= s
    return p


# ---------------------------------------------------------------------------
# Library adapters: the same operations in CuPy and PyTorch.


class CuPy:
    name = "cupy"

    def __init__(self):
        import cupy
        import numpy
        self.cp = cupy
        self.np = numpy
        cupy.cuda.Device().use()
        self.rng = numpy.random.default_rng(123)
        self._kernels = None

    def version(self):
        return self.cp.__version__

    def device_name(self):
        props = self.cp.cuda.runtime.getDeviceProperties(self.cp.cuda.Device().id)
        name = props["name"]
        return name.decode() if isinstance(name, bytes) else str(name)

    def sync(self):
        self.cp.cuda.get_current_stream().synchronize()

    def free(self):
        self.sync()
        self.cp.get_default_memory_pool().free_all_blocks()
        self.cp.get_default_pinned_memory_pool().free_all_blocks()

    def dtype(self, t):
        if t == "bf16":
            raise Unsupported("CuPy has no bfloat16")
        return {"f32": self.cp.float32, "i64": self.cp.int64, "f16": self.cp.float16}[t]

    def empty(self, shape, t):
        return self.cp.empty(shape, dtype=self.dtype(t))

    def uniform(self, shape, t):  # uniform in [0, 1) of type t (f32, f16, bf16)
        return self.cp.random.random(shape, dtype=self.cp.float32).astype(self.dtype(t))

    def axpb(self, x):
        return 2.5 * x + 1.25

    def f32(self, shape):
        return self.cp.random.random(shape, dtype=self.cp.float32)

    def i64(self, shape):  # Metal.jl: rand(rng, -10:10, ...)
        return self.cp.random.randint(-10, 11, size=shape, dtype=self.cp.int64)

    def i32(self, shape, lo, hi):  # uniform int32 in [lo, hi)
        return self.cp.random.randint(lo, hi, size=shape, dtype=self.cp.int32)

    def bools(self, shape):
        return self.cp.random.random(shape, dtype=self.cp.float32) < 0.5

    def host_f32(self, shape, pinned):
        a = self.rng.random(shape, dtype=self.np.float32)
        if not pinned:
            return a
        import cupyx
        p = cupyx.empty_pinned(shape, dtype=self.np.float32)
        p[...] = a
        return p

    def copy(self, x):
        return x.copy()

    def h2d(self, dst, src):
        dst.set(src, stream=self.cp.cuda.get_current_stream())

    def d2h(self, dst, src):
        src.get(out=dst, stream=self.cp.cuda.get_current_stream())

    def d2d(self, dst, src):
        self.cp.copyto(dst, src)

    def scalar10(self, v):
        return [float(v[i]) for i in range(10)]

    def logical(self, v, mask):
        return v[mask]

    def isodd(self, x):
        return x % 2 != 0

    def findall(self, mask):
        return self.cp.flatnonzero(mask)

    def findfirst(self, mask):
        return int(self.cp.argmax(mask))

    def findmin(self, x, axis):
        i = self.cp.argmin(x, axis=axis)
        if axis is None:
            return x[i], i
        return self.cp.take_along_axis(x, self.cp.expand_dims(i, axis), axis), i

    def fill0(self, x):
        x.fill(0)

    def floor_divide(self, x, y):
        return self.cp.floor_divide(x, y)

    def remainder(self, x, y):
        return self.cp.remainder(x, y)

    def cumsum(self, x, axis):
        return self.cp.cumsum(x, axis=axis)

    def sum(self, x, axis):
        return self.cp.sum(x, axis=axis)

    def mapreduce(self, x, axis):
        return self.cp.sum(x + 1, axis=axis)

    def rand(self, n, t):
        if t == "f32":
            return self.cp.random.rand(n, dtype=self.cp.float32)
        if t in ("f16", "bf16"):
            raise Unsupported("CuPy generates no half-precision random numbers")
        return self.cp.random.randint(0, 2**63 - 1, size=n, dtype=self.cp.int64)

    def rand_(self, x):
        if x.dtype != self.cp.float32:
            raise Unsupported("CuPy has no in-place integer generator")
        self._gen().random(size=x.shape, dtype=self.cp.float32, out=x)

    def randn(self, n, t="f32"):
        if t != "f32":
            raise Unsupported("CuPy generates no half-precision random numbers")
        return self.cp.random.standard_normal(n, dtype=self.cp.float32)

    def randn_(self, x):
        self._gen().standard_normal(size=x.shape, dtype=self.cp.float32, out=x)

    def _gen(self):
        if not hasattr(self, "_generator"):
            self._generator = self.cp.random.default_rng(123)
        return self._generator

    def permute(self, x, axes):
        return self.cp.ascontiguousarray(x.transpose(axes))

    def kernels(self):
        if self._kernels is None:
            src = r'''
            extern "C" __global__ void empty_kernel() {}
            extern "C" __global__ void copy_unchecked(float *dest, const float *src) {
                size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
                dest[i] = src[i];
            }
            extern "C" __global__ void copy_checked(float *dest, const float *src, size_t n) {
                size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
                if (i < n) dest[i] = src[i];
            }
            ''' + KERNELS_SRC
            mod = self.cp.RawModule(code=src)
            names = ("empty_kernel", "copy_unchecked", "copy_checked", "rand_f32", "add_f32",
                     "add_slices1", "add_slices2", "add_slices3", "add_mat_vec")
            self._kernels = {k: mod.get_function(k) for k in names}
        return self._kernels

    def launch_empty(self):
        self.kernels()["empty_kernel"]((1,), (1,), ())

    def launch_copy(self, dest, src, checked, threads):
        n = dest.size
        blocks = (n + threads - 1) // threads
        if checked:
            self.kernels()["copy_checked"]((blocks,), (threads,), (dest, src, self.np.uint64(n)))
        else:
            self.kernels()["copy_unchecked"]((blocks,), (threads,), (dest, src))

    def muladd1(self, x, y, out):  # out = x*y + 1, y broadcast (gpubench's gokernel/func2)
        if not hasattr(self, "_muladd1"):
            self._muladd1 = self.cp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x * y + 1.0f", "muladd1")
        self._muladd1(x, y, out)

    def launch_rand(self, dest, ctr):
        blocks = dest.size // RAND_BLOCK
        self.kernels()["rand_f32"]((blocks,), (RAND_BLOCK,), (dest, self.np.uint32(RAND_SEED), self.np.uint32(ctr)))

    def launch_add(self, y, x1, x2):
        n = y.size
        self.kernels()["add_f32"](((n + BYVAL_BLOCK - 1) // BYVAL_BLOCK,), (BYVAL_BLOCK,), (self.np.uint64(n), x1, x2, y))

    def launch_add_slices(self, ys, x1s, x2s):
        k, n = len(ys), ys[0].size
        grid = ((n + BYVAL_BLOCK - 1) // BYVAL_BLOCK, k)
        self.kernels()["add_slices%d" % k](grid, (BYVAL_BLOCK,), (self.np.uint64(n), *x1s, *x2s, *ys))

    def launch_add_mat_vec(self, y, x1, x2):
        rows, m = y.shape
        self.kernels()["add_mat_vec"]((rows,), (BYVAL_BLOCK,), (self.np.uint64(m), x1, x2, y))

    def stream_sync(self):
        self.cp.cuda.get_current_stream().synchronize()

    def device_sync(self):
        self.cp.cuda.Device().synchronize()

    # Graphs and host functions (gpubench's suite_graph.go).

    def ten_ops(self, x, y):
        cp = self.cp
        cp.multiply(x, 0.5, out=y)
        cp.multiply(y, y, out=x)
        cp.sqrt(x, out=y)
        cp.subtract(y, 0.5, out=x)
        cp.multiply(x, x, out=y)
        cp.sin(y, out=x)
        cp.add(x, 1.5, out=y)
        cp.multiply(y, 0.75, out=x)
        cp.abs(x, out=y)
        cp.subtract(y, 0.2, out=x)

    def graph_of(self, f):
        """A function launching a graph of f's work on the current stream."""
        s = self.cp.cuda.Stream(non_blocking=True)
        f()  # compile the kernels outside the capture
        with s:
            s.begin_capture()
            f()
            g = s.end_capture()
        return lambda: g.launch()

    def host_func_round_trip(self):
        s = self.cp.cuda.get_current_stream()
        s.launch_host_func(lambda arg: None, None)
        self.launch_empty()

    def var_rows(self, x):
        return self.cp.var(x, axis=1)

    def logsumexp_rows(self, x):
        m = x.max(axis=1, keepdims=True)
        return self.cp.log(self.cp.exp(x - m).sum(axis=1)) + m[:, 0]

    def softmax_rows(self, x):
        e = self.cp.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def layernorm(self, x, w, b):
        raise Unsupported("CuPy has no layer norm")

    # Indexing and concatenation.

    def randint(self, n, hi):
        return self.cp.random.randint(0, hi, size=n, dtype=self.cp.int64)

    def arange_i64(self, n, step):
        return self.cp.arange(0, n * step, step, dtype=self.cp.int64)

    def take(self, x, idx):
        return self.cp.take(x, idx)

    def put(self, x, idx, v):
        self.cp.put(x, idx, v)

    def scatter_add(self, x, idx, v):
        import cupyx
        cupyx.scatter_add(x, idx, v)

    def bincount(self, x, n):
        return self.cp.bincount(x, minlength=n)

    def concat(self, xs, axis):
        return self.cp.concatenate(xs, axis=axis)
    # Matrix products.

    def mm_inputs(self, batch, m, k, n, t):
        if t == "bf16":
            raise Unsupported("CuPy has no bfloat16")
        dt = {"f32": self.cp.float32, "f16": self.cp.float16, "f64": self.cp.float64}[t]
        lead = (batch,) if batch > 1 else ()
        a = self.cp.random.random(lead + (m, k), dtype=self.cp.float32).astype(dt)
        b = self.cp.random.random(lead + (k, n), dtype=self.cp.float32).astype(dt)
        return a, b, self.cp.empty(lead + (m, n), dtype=dt)

    def allow_tf32(self, on):
        if on:
            raise Unsupported("CuPy's TF32 is the process-wide CUPY_TF32 setting, read at import")

    def matmul(self, a, b, out):
        self.cp.matmul(a, b, out=out)

    def matmul_new(self, a, b):
        return self.cp.matmul(a, b)

    def timed(self, fn):
        start, end = self.cp.cuda.Event(), self.cp.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        return self.cp.cuda.get_elapsed_time(start, end) * 1e6


class Torch:
    name = "torch"

    def __init__(self):
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
        self.t = torch
        self.dev = torch.device("cuda", torch.cuda.current_device())
        self.gen = torch.Generator(device="cpu").manual_seed(123)

    def version(self):
        return self.t.__version__

    def device_name(self):
        return self.t.cuda.get_device_name(self.dev)

    def sync(self):
        self.t.cuda.current_stream().synchronize()

    def free(self):
        self.sync()
        self.t.cuda.empty_cache()

    def dtype(self, t):
        return {"f32": self.t.float32, "i64": self.t.int64, "f16": self.t.float16, "bf16": self.t.bfloat16}[t]

    def empty(self, shape, t):
        return self.t.empty(shape, dtype=self.dtype(t), device=self.dev)

    def uniform(self, shape, t):  # uniform in [0, 1) of type t (f32, f16, bf16)
        return self.t.rand(shape, dtype=self.dtype(t), device=self.dev)

    def axpb(self, x):
        return 2.5 * x + 1.25

    def f32(self, shape):
        return self.t.rand(shape, device=self.dev)

    def i64(self, shape):
        return self.t.randint(-10, 11, shape, dtype=self.t.int64, device=self.dev)

    def i32(self, shape, lo, hi):  # uniform int32 in [lo, hi)
        return self.t.randint(lo, hi, shape, dtype=self.t.int32, device=self.dev)

    def bools(self, shape):
        return self.t.rand(shape, device=self.dev) < 0.5

    def host_f32(self, shape, pinned):
        a = self.t.rand(shape, generator=self.gen)
        return a.pin_memory() if pinned else a

    def copy(self, x):
        return x.clone()

    def h2d(self, dst, src):
        dst.copy_(src, non_blocking=src.is_pinned())

    def d2h(self, dst, src):
        dst.copy_(src, non_blocking=dst.is_pinned())

    def d2d(self, dst, src):
        dst.copy_(src)

    def scalar10(self, v):
        return [v[i].item() for i in range(10)]

    def logical(self, v, mask):
        return v[mask]

    def isodd(self, x):
        return x % 2 != 0

    def findall(self, mask):
        return self.t.nonzero(mask)

    def findfirst(self, mask):
        # argmax is not implemented for bool; it returns the first maximum.
        return int(self.t.argmax(mask.to(self.t.uint8)))

    def findmin(self, x, axis):
        if axis is None:
            return self.t.min(x, 0)
        return self.t.min(x, dim=axis)

    def fill0(self, x):
        x.fill_(0)

    def floor_divide(self, x, y):  # rounds toward -inf (PyTorch 1.13 and later)
        return self.t.floor_divide(x, y)

    def remainder(self, x, y):
        return self.t.remainder(x, y)

    def cumsum(self, x, axis):
        return self.t.cumsum(x, dim=axis)

    def sum(self, x, axis):
        return self.t.sum(x) if axis is None else self.t.sum(x, dim=axis)

    def mapreduce(self, x, axis):
        return self.sum(x + 1, axis)

    def rand(self, n, t):
        if t in ("f32", "f16", "bf16"):
            return self.t.rand(n, dtype=self.dtype(t), device=self.dev)
        return self.t.empty(n, dtype=self.t.int64, device=self.dev).random_()

    def rand_(self, x):
        if x.dtype == self.t.float32:
            x.uniform_()
        else:
            x.random_()

    def randn(self, n, t="f32"):
        return self.t.randn(n, dtype=self.dtype(t), device=self.dev)

    def randn_(self, x):
        x.normal_()

    def permute(self, x, axes):
        return x.permute(axes).contiguous()

    def muladd1(self, x, y, out):  # out = x*y + 1, y broadcast: one fused kernel
        if not hasattr(self, "_one"):
            self._one = self.t.ones((), dtype=self.t.float32, device=self.dev)
        self.t.addcmul(self._one, x, y, out=out)

    def launch_empty(self):
        raise Unsupported("PyTorch launches no user kernels without compiling them")

    def launch_copy(self, dest, src, checked, threads):
        raise Unsupported("PyTorch launches no user kernels without compiling them")

    def launch_rand(self, *args):
        raise Unsupported("PyTorch launches no user kernels without compiling them")

    launch_add = launch_add_slices = launch_add_mat_vec = launch_rand

    def var_rows(self, x):
        return self.t.var(x, dim=1, correction=0)

    def logsumexp_rows(self, x):
        return self.t.logsumexp(x, dim=1)

    def softmax_rows(self, x):
        return self.t.softmax(x, dim=1)

    def layernorm(self, x, w, b):
        return self.t.nn.functional.layer_norm(x, x.shape[-1:], w, b, 1e-5)

    def stream_sync(self):
        self.t.cuda.current_stream().synchronize()

    def device_sync(self):
        self.t.cuda.synchronize()

    # Graphs (gpubench's suite_graph.go).

    def ten_ops(self, x, y):
        t = self.t
        t.mul(x, 0.5, out=y)
        t.mul(y, y, out=x)
        t.sqrt(x, out=y)
        t.sub(y, 0.5, out=x)
        t.mul(x, x, out=y)
        t.sin(y, out=x)
        t.add(x, 1.5, out=y)
        t.mul(y, 0.75, out=x)
        t.abs(x, out=y)
        t.sub(y, 0.2, out=x)

    def graph_of(self, f):
        """A function replaying a CUDA graph of f's work (torch.cuda.CUDAGraph)."""
        t = self.t
        s = t.cuda.Stream()
        s.wait_stream(t.cuda.current_stream())
        with t.cuda.stream(s):  # warm up on a side stream, as PyTorch advises
            f()
        t.cuda.current_stream().wait_stream(s)
        g = t.cuda.CUDAGraph()
        with t.cuda.graph(g):
            f()
        self._graphs = getattr(self, "_graphs", []) + [g]
        return g.replay

    def host_func_round_trip(self):
        raise Unsupported("PyTorch has no host functions in stream order")

    # Indexing and concatenation.

    def randint(self, n, hi):
        return self.t.randint(0, hi, (n,), dtype=self.t.int64, device=self.dev)

    def arange_i64(self, n, step):
        return self.t.arange(0, n * step, step, dtype=self.t.int64, device=self.dev)

    def take(self, x, idx):
        return self.t.index_select(x, 0, idx)

    def put(self, x, idx, v):
        x.index_put_((idx,), v)

    def scatter_add(self, x, idx, v):
        x.scatter_add_(0, idx, v)

    def bincount(self, x, n):
        return self.t.bincount(x, minlength=n)

    def concat(self, xs, axis):
        return self.t.cat(xs, dim=axis)
    # Matrix products.

    def mm_inputs(self, batch, m, k, n, t):
        dt = {"f32": self.t.float32, "bf16": self.t.bfloat16, "f16": self.t.float16, "f64": self.t.float64}[t]
        lead = (batch,) if batch > 1 else ()
        a = self.t.rand(lead + (m, k), device=self.dev).to(dt)
        b = self.t.rand(lead + (k, n), device=self.dev).to(dt)
        return a, b, self.t.empty(lead + (m, n), dtype=dt, device=self.dev)

    def allow_tf32(self, on):
        self.t.backends.cuda.matmul.allow_tf32 = on

    def matmul(self, a, b, out):
        self.t.matmul(a, b, out=out)

    def matmul_new(self, a, b):
        return self.t.matmul(a, b)

    def timed(self, fn):
        start = self.t.cuda.Event(enable_timing=True)
        end = self.t.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1e6


ADAPTERS = {"cupy": CuPy, "torch": Torch}


# The hand-written kernels of kernel/rand and integration/*, as gpubench's PTX
# computes them (cmd/gpubench/suite_kernels.go).
RAND_BLOCK = 512        # kernel/*: Metal.jl's threads=size(src,1) of its 512x1000 matrix
RAND_SEED = 0x5eed1234
BYVAL_BLOCK = 256       # perf/byval.jl and perf/metaldevrt.jl: threads = 256

KERNELS_SRC = r'''
// kernel/rand: dest[i] = the upper 24 bits of the first word of Philox2x32-10
// (Random123) of the counter (i, ctr) under key seed, times 2^-24.
extern "C" __global__ void rand_f32(float *dest, unsigned int seed, unsigned int ctr) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int x0 = i, x1 = ctr, key = seed;
    for (int r = 0; r < 10; r++) {
        unsigned long long p = (unsigned long long)x0 * 0xD256D193u;
        x0 = (unsigned int)(p >> 32) ^ x1 ^ key;
        x1 = (unsigned int)p;
        key += 0x9E3779B9u;
    }
    dest[(size_t)blockIdx.x * blockDim.x + threadIdx.x] = (float)(x0 >> 8) * (1.0f / 16777216.0f);
}

// integration/byval/reference: y = x1 + x2, the arrays as pointer arguments.
extern "C" __global__ void add_f32(size_t n, const float *x1, const float *x2, float *y) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x1[i] + x2[i];
}

// integration/byval/slices=k: Julia's kernel_add_mat_z_slices, the 3k arrays
// passed by value (x1s, x2s, ys), block row j adding slice j.
#define SLICE(j, a, b, c) ((j) == 0 ? (a) : (j) == 1 ? (b) : (c))
extern "C" __global__ void add_slices1(size_t n, const float *a0, const float *b0, float *c0) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c0[i] = a0[i] + b0[i];
}
extern "C" __global__ void add_slices2(size_t n, const float *a0, const float *a1,
        const float *b0, const float *b1, float *c0, float *c1) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int j = blockIdx.y;
    const float *a = SLICE(j, a0, a1, a1), *b = SLICE(j, b0, b1, b1);
    float *c = SLICE(j, c0, c1, c1);
    if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void add_slices3(size_t n, const float *a0, const float *a1, const float *a2,
        const float *b0, const float *b1, const float *b2, float *c0, float *c1, float *c2) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int j = blockIdx.y;
    const float *a = SLICE(j, a0, a1, a2), *b = SLICE(j, b0, b1, b2);
    float *c = SLICE(j, c0, c1, c2);
    if (i < n) c[i] = a[i] + b[i];
}

// integration/metaldevrt: y[j, :] = x1[j, :] + x2[j], one block per row of m
// (Julia's column), every element through a call of a device function.
__device__ __noinline__ float addf(float a, float b) { return a + b; }
extern "C" __global__ void add_mat_vec(size_t m, const float *x1, const float *x2, float *y) {
    size_t off = (size_t)blockIdx.x * m;
    float v = x2[blockIdx.x];
    for (size_t i = threadIdx.x; i < m; i += blockDim.x) y[off + i] = addf(x1[off + i], v);
}
'''


def launcher(lib, method, fallback):
    """lib's raw-kernel launcher method, or, for an adapter without raw
    kernels (the NumPy stand-in of test_peers.py), fallback: the same
    arithmetic with array operations. The real adapters have the methods
    (PyTorch's raise Unsupported, and the kernel benchmarks list CuPy only)."""
    return getattr(lib, method, None) or fallback


# ---------------------------------------------------------------------------
# The benchmarks.


class Bench:
    """One peer key: make(lib, size) prepares the inputs and returns the call."""

    def __init__(self, key, sizes, make, desc, mode="call", libs=LIBS):
        self.key, self.sizes, self.make, self.desc, self.mode, self.libs = key, sizes, make, desc, mode, libs


def flat(x):
    return x.reshape(-1)


def benchmarks():
    B = []
    SL = ("S", "L")

    def add(key, sizes, make, desc, mode="call", libs=LIBS):
        B.append(Bench(key, sizes, make, desc, mode, libs))

    def construct(lib, sz):
        if sz == "S":
            return lambda: lib.empty((1,), "i64")
        return lambda: lib.empty(SHAPES["L"]["mat"], "f32")
    add("construct", SL, construct, "S: empty Int64 array of one element; L: empty float32 16384x16384")

    def copy(lib, sz):
        x = lib.f32(SHAPES[sz]["mat"])
        return lambda: lib.copy(x)
    add("copy", SL, copy, "copy of the float32 matrix (new array)")

    def copyto(direction, pinned):
        def make(lib, sz):
            shape = SHAPES[sz]["mat"]
            if direction == "gpu_to_gpu":
                src, dst = lib.f32(shape), lib.empty(shape, "f32")
                return lambda: lib.d2d(dst, src)
            host = lib.host_f32(shape, pinned)
            dev = lib.f32(shape)
            if direction == "cpu_to_gpu":
                return lambda: lib.h2d(dev, host)
            return lambda: lib.d2h(host, dev)
        return make
    for direction in ("cpu_to_gpu", "gpu_to_cpu", "gpu_to_gpu"):
        add("copyto/" + direction, SL, copyto(direction, False), "copyto! of the float32 matrix, " + direction)
    for direction in ("cpu_to_gpu", "gpu_to_cpu"):
        add("copyto/%s_pinned" % direction, SL, copyto(direction, True),
            "copyto! of the float32 matrix, %s, page-locked host memory" % direction)

    def scalar(lib, sz):
        v = flat(lib.f32(SHAPES[sz]["mat"]))
        return lambda: lib.scalar10(v)
    add("iteration/scalar", SL, scalar, "read elements 0..9 one by one to the host")

    def logical(lib, sz):
        shape = SHAPES[sz]["mat"]
        v, mask = flat(lib.f32(shape)), flat(lib.bools(shape))
        return lambda: lib.logical(v, mask)
    add("iteration/logical", SL, logical, "v[mask] of the float32 vector and a random bool mask")

    def findall(kind):
        def make(lib, sz):
            shape = SHAPES[sz]["mat"]
            if kind == "bool":
                mask = flat(lib.bools(shape))
                return lambda: lib.findall(mask)
            x = flat(lib.i64(shape))
            return lambda: lib.findall(lib.isodd(x))
        return make
    add("iteration/findall/bool", SL, findall("bool"), "indices of the true elements of a bool vector")
    add("iteration/findall/int", SL, findall("int"), "indices of the odd elements of an Int64 vector in [-10, 10]")

    def findfirst(kind):
        def make(lib, sz):
            shape = SHAPES[sz]["mat"]
            if kind == "bool":
                mask = flat(lib.bools(shape))
                return lambda: lib.findfirst(mask)
            x = flat(lib.i64(shape))
            return lambda: lib.findfirst(lib.isodd(x))
        return make
    add("iteration/findfirst/bool", SL, findfirst("bool"), "index of the first true element (argmax), to the host")
    add("iteration/findfirst/int", SL, findfirst("int"), "index of the first odd element (argmax of the mask), to the host")

    def findmin(d):
        def make(lib, sz):
            x = lib.f32(SHAPES[sz]["mat"])
            if d == "1d":
                v = flat(x)
                return lambda: lib.findmin(v, None)
            return lambda: lib.findmin(x, julia_axis(1, 2))
        return make
    add("iteration/findmin/1d", SL, findmin("1d"), "minimum and its index of the float32 vector")
    add("iteration/findmin/2d", SL, findmin("2d"), "minima and indices along Julia dims=1 (axis 1)")

    def broadcast(lib, sz):
        x = lib.f32(SHAPES[sz]["mat"])
        return lambda: lib.fill0(x)
    add("broadcast", SL, broadcast, "fill the float32 matrix with 0 (mat .= 0f0)")

    # NumPy's floor_divide and remainder (not in Metal.jl's suite; gpubench's
    # registerDivmod): a new array per call. Both signs in both operands, no divisor at
    # or near 0: int32 x in [-1000, 1000], y in [-1000, 1000] without 0; float32 x in
    # [-100, 100), y in [-10, -1) or [1, 10).
    def divmod_inputs(lib, sz, t):
        shape = SHAPES[sz]["mat"]
        if t == "i32":
            x, y = lib.i32(shape, -1000, 1001), lib.i32(shape, -1000, 1000)
            return x, y + (y >= 0)
        x, v = lib.f32(shape) * 200 - 100, lib.f32(shape) * 18 - 9
        pos = v >= 0
        return x, v + pos + pos - 1  # v - 1 below 0, v + 1 above; stays float32

    def floor_divide(lib, sz):
        x, y = divmod_inputs(lib, sz, "i32")
        return lambda: lib.floor_divide(x, y)

    def remainder(lib, sz):
        x, y = divmod_inputs(lib, sz, "f32")
        return lambda: lib.remainder(x, y)
    add("floor_divide/int32", SL, floor_divide, "x // y of int32 matrices, x in [-1000, 1000], y in [-1000, 1000] "
        "without 0 (new array; floor_divide)")
    add("remainder/float32", SL, remainder, "x mod y, the sign of y, of float32 matrices, x in [-100, 100), y in "
        "[-10, -1) or [1, 10) (new array; remainder)")

    for op, what in (("accumulate", "cumsum"), ("reductions/reduce", "sum"), ("reductions/mapreduce", "sum of x+1")):
        for T in ("Float32", "Int64"):
            for d in ("1d", "dims=1", "dims=2", "dims=1L", "dims=2L"):
                sizes = ("S",) if d.endswith("L") else SL

                def make(lib, sz, op=op, T=T, d=d):
                    fixture = "long" if d.endswith("L") else "mat"
                    shape = SHAPES[sz][fixture]
                    x = lib.f32(shape) if T == "Float32" else lib.i64(shape)
                    if d == "1d":
                        x, axis = flat(x), (0 if op == "accumulate" else None)
                    else:
                        axis = julia_axis(int(d[5]), 2)
                    f = {"accumulate": lib.cumsum, "reductions/reduce": lib.sum, "reductions/mapreduce": lib.mapreduce}[op]
                    return lambda: f(x, axis)
                fixture = "the 3x1000000 matrix" if d.endswith("L") else "the matrix"
                where = "of the vector" if d == "1d" else "along Julia %s (axis %d) of %s" % (
                    d.rstrip("L"), julia_axis(int(d[5]), 2), fixture)
                add("%s/%s/%s" % (op, T, d), sizes, make, "%s %s %s" % (what, T, where))

    def rand(t):
        def make(lib, sz):
            n = numel(SHAPES[sz]["mat"])
            return lambda: lib.rand(n, t)
        return make

    def rand_(t):
        def make(lib, sz):
            shape = SHAPES[sz]["mat"]
            x = flat(lib.f32(shape) if t == "f32" else lib.i64(shape))
            return lambda: lib.rand_(x)
        return make
    add("random/rand/Float32", SL, rand("f32"), "new vector of uniform float32 in [0, 1)")
    add("random/rand/Int64", SL, rand("i64"), "new vector of uniform Int64 (non-negative)")
    add("random/rand!/Float32", SL, rand_("f32"), "fill a float32 vector with uniform [0, 1)")
    add("random/rand!/Int64", SL, rand_("i64"), "fill an Int64 vector with uniform integers (PyTorch only)")

    def randn(lib, sz):
        n = numel(SHAPES[sz]["mat"])
        return lambda: lib.randn(n)

    def randn_(lib, sz):
        x = flat(lib.f32(SHAPES[sz]["mat"]))
        return lambda: lib.randn_(x)
    add("random/randn/Float32", SL, randn, "new vector of standard normal float32")
    add("random/randn!/Float32", SL, randn_, "fill a float32 vector with standard normals")

    # Half precision, at L only (gpubench's cmd/gpubench/suite_half.go): the float32
    # bandwidth rows in bfloat16 and float16, inputs uniform in [0, 1) of the type.
    # axpb/<t> is 2.5*x + 1.25 of the 2^28-element vector (new array; the anchor
    # axpb/bfloat16/2^28 of the 2026-12-01 extra peer figures); CuPy has no bfloat16
    # and no half-precision generators (those figures are skipped as unsupported).
    def half(t, f, vec=False):
        def make(lib, sz):
            x = lib.uniform(SHAPES[sz]["mat"], t)
            if vec:
                x = flat(x)
            return lambda: f(lib, x)
        return make
    for jl, np_, t in (("BFloat16", "bfloat16", "bf16"), ("Float16", "float16", "f16")):
        add("copy/" + jl, ("L",), half(t, lambda lib, x: lib.copy(x)), "copy of the %s matrix (new array)" % np_)
        add("broadcast/" + jl, ("L",), half(t, lambda lib, x: lib.fill0(x)), "fill the %s matrix with 0" % np_)
        add("axpb/" + np_, ("L",), half(t, lambda lib, x: lib.axpb(x), vec=True),
            "2.5*x + 1.25 of the %s vector (new array)" % np_)
        for d in ("1d", "dims=1", "dims=2"):
            axis = None if d == "1d" else julia_axis(int(d[5]), 2)
            add("reductions/reduce/%s/%s" % (jl, d), ("L",), half(t, lambda lib, x, a=axis: lib.sum(x, a), vec=d == "1d"),
                "sum %s %s" % (np_, "of the vector" if d == "1d" else "along Julia %s (axis %d)" % (d, axis)))
        for d in ("1d", "dims=1"):
            axis = 0 if d == "1d" else julia_axis(int(d[5]), 2)
            add("accumulate/%s/%s" % (jl, d), ("L",), half(t, lambda lib, x, a=axis: lib.cumsum(x, a), vec=d == "1d"),
                "cumsum %s %s" % (np_, "of the vector" if d == "1d" else "along Julia %s (axis %d)" % (d, axis)))

        def hrand(lib, sz, t=t):
            n = numel(SHAPES[sz]["mat"])
            return lambda: lib.rand(n, t)

        def hrandn(lib, sz, t=t):
            n = numel(SHAPES[sz]["mat"])
            return lambda: lib.randn(n, t)
        add("random/rand/" + jl, ("L",), hrand, "new vector of uniform %s in [0, 1)" % np_)
        add("random/randn/" + jl, ("L",), hrandn, "new vector of standard normal %s" % np_)
    add("axpb/float32", ("L",), half("f32", lambda lib, x: lib.axpb(x), vec=True),
        "2.5*x + 1.25 of the float32 vector (new array)")

    for nd, perm in (("2d", (2, 1)), ("3d", (3, 1, 2)), ("4d", (2, 1, 4, 3))):
        def make(lib, sz, nd=nd, perm=perm):
            shape = SHAPES[sz]["mat" if nd == "2d" else nd]
            x = lib.f32(shape)
            axes = julia_perm(perm)
            return lambda: lib.permute(x, axes)
        add("permutedims/" + nd, SL, make, "materialized permutedims %s (NumPy transpose %s)" % (perm, julia_perm(perm)))

    add("kernel/launch", ("S",), lambda lib, sz: lib.launch_empty,
        "launch an empty kernel, host time of the launch call only", mode="launch", libs=("cupy",))

    def indexing(checked):
        def make(lib, sz):
            shape = SHAPES[sz]["mat"]
            src, dst = lib.f32(shape), lib.empty(shape, "f32")
            return lambda: lib.launch_copy(dst, src, checked, 512)
        return make
    add("kernel/indexing", SL, indexing(False), "copy kernel dest[i] = src[i], 512 threads per block", libs=("cupy",))
    add("kernel/indexing_checked", SL, indexing(True), "the same with a bounds check (i < n)", libs=("cupy",))

    def func2(lib, sz):
        shape = SHAPES[sz]["mat"]
        x, y, z = lib.f32(shape), lib.f32((shape[1],)), lib.empty(shape, "f32")
        return lambda: lib.muladd1(x, y, z)
    add("func2", SL, func2, "z = x*y + 1 into z, y a float32 row broadcast over the float32 matrix "
        "(CuPy: an ElementwiseKernel; PyTorch: addcmul)")

    def krand(lib, sz):
        dest = lib.empty((numel(SHAPES[sz]["mat"]),), "f32")
        run = launcher(lib, "launch_rand", lambda d, ctr: lib.rand_(d))
        ctr = [0]

        def call():
            ctr[0] += 1
            run(dest, ctr[0])
        return call
    add("kernel/rand", SL, krand, "each thread writes a uniform float32 from Philox2x32-10 of its index, "
        "512 threads per block", libs=("cupy",))

    def byval(k):
        def make(lib, sz):
            shape = SHAPES[sz]["byval"]
            x1 = [lib.f32(shape) for _ in range(max(k, 1))]
            x2 = [lib.f32(shape) for _ in range(max(k, 1))]
            y = [lib.empty(shape, "f32") for _ in range(max(k, 1))]
            if k == 0:
                run = launcher(lib, "launch_add", lambda y, a, b: lib.d2d(y, a + b))
                return lambda: run(y[0], x1[0], x2[0])
            run = launcher(lib, "launch_add_slices", lambda ys, As, Bs: [lib.d2d(c, a + b) for a, b, c in zip(As, Bs, ys)])
            return lambda: run(y, x1, x2)
        return make
    add("integration/byval/reference", ("S",), byval(0),
        "y = x1 + x2 of the float32 (1536, 3072) matrices, kernel with pointer arguments, 256 threads per block",
        libs=("cupy",))
    for k in range(1, 4):
        add("integration/byval/slices=%d" % k, ("S",), byval(k),
            "y_j = x1_j + x2_j for %d slices in one launch, the %d arrays as by-value arguments" % (k, 3 * k),
            libs=("cupy",))

    def devrt(lib, sz):
        rows, m = SHAPES[sz]["byval"]
        x1, x2, y = lib.f32((rows, m)), lib.f32((rows, 1)), lib.empty((rows, m), "f32")
        run = launcher(lib, "launch_add_mat_vec", lambda y, a, b: lib.d2d(y, a + b))
        return lambda: run(y, x1, x2)
    add("integration/metaldevrt", ("S",), devrt,
        "y[j, :] = x1[j, :] + x2[j], one block per row, every element through a __noinline__ device function",
        libs=("cupy",))

    def stat(name):
        def make(lib, sz):
            x = lib.f32(SHAPES[sz]["mat"])
            if name == "layernorm":
                w, b = lib.f32(x.shape[-1:]), lib.f32(x.shape[-1:])
                return lambda: lib.layernorm(x, w, b)
            f = getattr(lib, name)
            return lambda: f(x)
        return make
    add("stats/var", SL, stat("var_rows"), "variance (ddof 0) of each row of the float32 matrix (axis 1)")
    add("stats/logsumexp", SL, stat("logsumexp_rows"), "log(sum(exp)) of each row of the float32 matrix")
    add("stats/softmax", SL, stat("softmax_rows"), "softmax along axis 1 of the float32 matrix (CuPy: "
        "exp(x - max) / sum, as a CuPy user writes it)")
    add("stats/layernorm", SL, stat("layernorm"), "layer norm over axis 1 with a weight and a bias, eps 1e-5",
        libs=("torch",))

    # Indexing and concatenation (cmd/gpubench/suite_index.go): the anchors' keys, GPU
    # time of one call by CUDA events, and the same operations at Metal.jl's size
    # (512000 elements) as "+sync" keys, a call plus a synchronize.
    def take(src, n, stride4):
        def make(lib, sz):
            x = lib.f32((src,))
            idx = lib.arange_i64(n, 4) if stride4 else lib.randint(n, src)
            return lambda: lib.take(x, idx)
        return make

    def put(dst, n):
        def make(lib, sz):
            x, v, idx = lib.f32((dst,)), lib.f32((n,)), lib.randint(n, dst)
            return lambda: lib.put(x, idx, v)
        return make

    def scatter_add(n, bins):
        def make(lib, sz):
            x, v, idx = lib.f32((bins,)), lib.f32((n,)), lib.randint(n, bins)
            return lambda: lib.scatter_add(x, idx, v)
        return make

    def bincount(n, bins):
        def make(lib, sz):
            x = lib.randint(n, bins)
            return lambda: lib.bincount(x, bins)
        return make

    def concat(shape, axis):
        def make(lib, sz):
            a, b = lib.f32(shape), lib.f32(shape)
            return lambda: lib.concat((a, b), axis)
        return make

    src, n, bins = idx_dim(IDX_SRC), idx_dim(IDX_N), idx_dim(IDX_BINS)
    half = idx_dim(IDX_SRC // 2)
    side = max(8, int(8192 * IDX_SCALE ** 0.5))
    for key, make, desc in (
            ("take/float32/2^26 of 2^28 random", take(src, n, False), "take of 2^26 random int64 indices from 2^28 float32"),
            ("take/float32/2^26 of 2^28 stride4", take(src, n, True), "take of the int64 indices 0, 4, 8, ... (2^26) from 2^28 float32"),
            ("put/float32/2^26 into 2^28", put(src, n), "put of 2^26 float32 at random int64 indices into 2^28 float32"),
            ("scatter_add/float32/2^26 into 2^20", scatter_add(n, bins), "scatter-add of 2^26 float32 at random int64 indices into 2^20 bins"),
            ("scatter_add/float32/2^26 into 8", scatter_add(n, 8), "scatter-add of 2^26 float32 at random int64 indices into 8 bins"),
            ("bincount/2^26 into 2^20", bincount(n, bins), "bincount of 2^26 random int64 in [0, 2^20), minlength 2^20"),
            ("concat/float32/2x2^27", concat((half,), 0), "concatenation of two float32 vectors of 2^27"),
            ("concat/float32/8192^2 x2 axis1", concat((side, side), 1), "concatenation of two float32 8192x8192 matrices along axis 1")):
        add(key, ("L",), make, desc, mode="events")
    for key, make, desc in (
            ("take/float32/512000 of 512000 random+sync", take(512000, 512000, False), "take of 512000 random int64 indices from 512000 float32"),
            ("take/float32/128000 of 512000 stride4+sync", take(512000, 128000, True), "take of the int64 indices 0, 4, 8, ... (128000) from 512000 float32"),
            ("put/float32/128000 into 512000+sync", put(512000, 128000), "put of 128000 float32 at random int64 indices into 512000 float32"),
            ("scatter_add/float32/512000 into 8192+sync", scatter_add(512000, 8192), "scatter-add of 512000 float32 at random int64 indices into 8192 bins"),
            ("scatter_add/float32/512000 into 8+sync", scatter_add(512000, 8), "scatter-add of 512000 float32 at random int64 indices into 8 bins"),
            ("bincount/512000 into 8192+sync", bincount(512000, 8192), "bincount of 512000 random int64 in [0, 8192), minlength 8192"),
            ("concat/float32/2x256000+sync", concat((256000,), 0), "concatenation of two float32 vectors of 256000"),
            ("concat/float32/1000x512 x2 axis1+sync", concat((N, M), 1), "concatenation of two float32 (1000, 512) matrices along axis 1")):
        add(key, ("S",), make, desc)
    # Matrix products, the keys of ../shared/peers/h200-2026-12-01-extra.md: GPU time of
    # one call by CUDA events (mode "events"), but the +sync key (wall time of a call
    # and a synchronize). TF32 is PyTorch's allow_tf32 (CuPy's is process-wide).
    def matmul(t, n, tf32=False, batch=1):
        def make(lib, sz):
            lib.allow_tf32(tf32)
            d = mm_dim(n)
            a, b, out = lib.mm_inputs(batch, d, d, d, t)

            def call():
                lib.allow_tf32(tf32)
                lib.matmul(a, b, out)
            return call
        return make
    for n in MM_SIZES:
        for key, t, tf32 in (("float32", "f32", False), ("float32/tf32", "f32", True), ("bfloat16", "bf16", False),
                             ("float16", "f16", False), ("float64", "f64", False)):
            add("matmul/%s/%d" % (key, n), ("S",), matmul(t, n, tf32),
                "matmul of %dx%d %s matrices into a preallocated result%s" % (n, n, t, " (TF32 allowed)" if tf32 else ""),
                mode="events")
    for key, t in (("float32", "f32"), ("bfloat16", "bf16")):
        add("bmm/%s/256x128^3" % key, ("S",), matmul(t, 128, batch=256),
            "256 products of 128x128 %s matrices (a batched matmul) into a preallocated result" % t, mode="events")

    def mm_sync(lib, sz):
        lib.allow_tf32(False)
        a, b, _ = lib.mm_inputs(1, 512, 1000, 512, "f32")
        return lambda: lib.matmul_new(a, b)
    add("matmul/float32/512x1000x512+sync", ("S",), mm_sync,
        "(512, 1000) @ (1000, 512) float32 allocating its result, plus a synchronize")

    def ten_ops(graph):
        def make(lib, sz):
            shape = SHAPES[sz]["mat"]
            x, y = lib.f32(shape), lib.empty(shape, "f32")
            run = lambda: lib.ten_ops(x, y)
            return lib.graph_of(run) if graph else run
        return make
    add("graph/launch/10ops/512x1000", ("S",), ten_ops(True),
        "a graph of ten elementwise operations (one kernel each, into preallocated arrays) on the float32 matrix, launched")
    add("graph/eager/10ops/512x1000", ("S",), ten_ops(False),
        "the same ten elementwise operations issued one by one")
    add("hostfunc/round_trip", ("S",), lambda lib, sz: lib.host_func_round_trip,
        "a host function that does nothing (CuPy: Stream.launch_host_func), then the empty kernel")

    add("sync/stream", ("S",), lambda lib, sz: lib.stream_sync, "synchronize the idle current stream", mode="sync")
    add("sync/context", ("S",), lambda lib, sz: lib.device_sync, "synchronize the idle device", mode="sync")
    sort_benchmarks(add)
    workload_benchmarks(add)
    return B


# Sorting and selection: gpubench's cmd/gpubench/suite_sort.go, the keys of
# peers/h200-2026-12-01-extra.md (spaces written _). Sizes are in the keys, for L's
# 2^28 elements (they scale with SHAPES["L"]); the S row is Metal.jl's 512000-element
# vector. Inputs: float32 and float64 uniform in [0, 1), int32 uniform over its range.


class SortOps:
    """The sorting operations on lib's arrays: PyTorch's, else CuPy's or NumPy's."""

    def __init__(self, lib):
        self.lib = lib
        self.torch = getattr(lib, "t", None) if lib.name == "torch" else None
        if self.torch is None:
            self.xp = getattr(lib, "cp", None)
            if self.xp is None:
                import numpy
                self.xp = numpy

    def f64(self, n):
        x = self.lib.f32((n,))
        return x.double() if self.torch is not None else x.astype(self.xp.float64)

    def i32(self, n, hi=None):
        if self.torch is not None:
            lo, hi = (0, hi) if hi else (-2**31, 2**31 - 1)
            return self.torch.randint(lo, hi, (n,), dtype=self.torch.int32, device=self.lib.dev)
        if hi:
            return self.xp.random.randint(0, hi, size=n).astype(self.xp.int32)
        return self.xp.random.randint(-2**31, 2**31 - 1, size=n, dtype=self.xp.int64).astype(self.xp.int32)

    def i64(self, n, hi):
        x = self.i32(n, hi)
        return x.long() if self.torch is not None else x.astype(self.xp.int64)

    def sort(self, x):
        return self.torch.sort(x, dim=-1)[0] if self.torch is not None else self.xp.sort(x, axis=-1)

    def argsort(self, x):
        if self.torch is not None:
            return self.torch.sort(x, dim=-1, stable=True)[1]
        return self.xp.argsort(x, axis=-1, kind="stable")

    def topk(self, x, k):
        if self.torch is not None:
            return self.torch.topk(x, k)
        raise Unsupported("no top-k")

    def unique(self, x):
        return self.torch.unique(x) if self.torch is not None else self.xp.unique(x)

    def searchsorted(self, a, v):
        return self.torch.searchsorted(a, v) if self.torch is not None else self.xp.searchsorted(a, v)

    def with_nans(self, x, frac):
        """x with its elements below frac (uniform x: that share of them) made NaN."""
        if self.torch is not None:
            return x.masked_fill(x < frac, float("nan"))
        return self.xp.where(x < frac, self.xp.nan, x).astype(x.dtype)

    def median(self, x, skip_nan=False):
        """numpy.median (nanmedian); torch.median (nanmedian) is the lower of the two
        middle elements of an even count: the same selection."""
        if self.torch is not None:
            return (self.torch.nanmedian if skip_nan else self.torch.median)(x)
        return (self.xp.nanmedian if skip_nan else self.xp.median)(x)


def sort_benchmarks(add):
    def n_of(n28):
        return max(1, n28 * numel(SHAPES["L"]["mat"]) >> 28)

    def sort1d(kind, t, n28):
        def make(lib, sz):
            ops = SortOps(lib)
            n = numel(SHAPES["S"]["mat"]) if sz == "S" else n_of(n28)
            x = {"f32": lambda: flat(lib.f32((n,))), "f64": lambda: ops.f64(n), "i32": lambda: ops.i32(n)}[t]()
            f = ops.sort if kind == "sort" else ops.argsort
            return lambda: f(x)
        return make
    for kind in ("sort", "argsort"):
        for t, T in (("f32", "float32"), ("i32", "int32")):
            add("%s/%s/2^28" % (kind, T), ("L",), sort1d(kind, t, 1 << 28),
                "%s of 2^28 %s%s" % (kind, T, " (stable)" if kind == "argsort" else ""))
        add("%s/float64/2^27" % kind, ("L",), sort1d(kind, "f64", 1 << 27), "%s of 2^27 float64" % kind)
    add("sort/float32/512000+sync", ("S",), sort1d("sort", "f32", 0), "sort of Metal.jl's 512000 float32")

    def rows(lib, sz):
        x = lib.f32(SHAPES["L"]["mat"])
        ops = SortOps(lib)
        return lambda: ops.sort(x)
    add("sort/rows/float32/16384x16384", ("L",), rows, "sort of every row of the 16384x16384 float32 matrix")

    def topk(lib, sz):
        ops = SortOps(lib)
        x = flat(lib.f32((n_of(1 << 24),)))
        k = min(100, n_of(1 << 24))
        return lambda: ops.topk(x, k)
    add("topk/100/float32/2^24", ("L",), topk, "the 100 largest of 2^24 float32 (torch.topk)", libs=("torch",))

    def unique(lib, sz):
        ops = SortOps(lib)
        x = ops.i64(n_of(1 << 26), 1 << 20)
        return lambda: ops.unique(x)
    add("unique/int64/2^26/2^20_distinct", ("L",), unique, "sorted unique values of 2^26 int64 in [0, 2^20)")

    def searchsorted(lib, sz):
        ops = SortOps(lib)
        a = ops.sort(flat(lib.f32((n_of(1 << 24),))))
        v = flat(lib.f32((n_of(1 << 26),)))
        return lambda: ops.searchsorted(a, v)
    add("searchsorted/2^26_in_2^24", ("L",), searchsorted, "searchsorted (left) of 2^26 float32 in 2^24 sorted float32")

    def median(skip_nan):
        def make(lib, sz):
            ops = SortOps(lib)
            x = flat(lib.f32((n_of(1 << 24),)))
            if skip_nan:
                x = ops.with_nans(x, 1 / 64)
            return lambda: ops.median(x, skip_nan)
        return make
    add("median/float32/2^24", ("L",), median(False), "median of 2^24 float32 (torch.median: the lower middle)")
    add("nanmedian/float32/2^24", ("L",), median(True),
        "median of 2^24 float32 leaving out the 1/64 that are NaN (torch.nanmedian: the lower middle)")


# The examples' workloads: gpubench's cmd/gpubench/suite_workload.go, whose names are
# the keys. Each is the example's work as a PyTorch (or CuPy) user writes it, on inputs
# made before the timing, one call plus a synchronize (the results the example reads
# back are copied to the host inside the call, as ours are). Sizes are the examples'
# full ones, times WL_SCALE (tests shrink it).
WL_SCALE = 1.0


def wl_n(n, lo=64):
    return max(lo, int(n * WL_SCALE))


class WorkloadOps(SortOps):
    """The array module of lib as SortOps finds it (PyTorch's self.torch, else CuPy's or
    NumPy's self.xp), with the generators and read-backs the workloads use."""

    def __init__(self, lib):
        SortOps.__init__(self, lib)
        self.dev = getattr(lib, "dev", None)
        if self.torch is not None:
            self.xp = None
        self.cupy = self.torch is None and getattr(lib, "cp", None) is not None

    def host(self, x):
        if self.torch is not None:
            return x.cpu()
        return x.get() if self.cupy else x

    def randn(self, *shape, dtype="f32"):
        if self.torch is not None:
            return self.torch.randn(*shape, device=self.dev, dtype={"f32": self.torch.float32, "f64": self.torch.float64}[dtype])
        if self.cupy:
            return self.xp.random.standard_normal(shape, dtype={"f32": self.xp.float32, "f64": self.xp.float64}[dtype])
        return self.xp.random.standard_normal(shape).astype({"f32": self.xp.float32, "f64": self.xp.float64}[dtype])

    def rand(self, *shape):
        if self.torch is not None:
            return self.torch.rand(*shape, device=self.dev)
        if self.cupy:
            return self.xp.random.random(shape, dtype=self.xp.float32)
        return self.xp.random.random(shape).astype(self.xp.float32)

    def randint(self, lo, hi, n, dtype="i32"):
        if self.torch is not None:
            return self.torch.randint(lo, hi, (n,), device=self.dev, dtype={"i32": self.torch.int32, "i64": self.torch.int64}[dtype])
        return self.xp.random.randint(lo, hi, size=n).astype({"i32": self.xp.int32, "i64": self.xp.int64}[dtype])

    def arange(self, n):
        if self.torch is not None:
            return self.torch.arange(n, device=self.dev, dtype=self.torch.float32)
        return self.xp.arange(n, dtype=self.xp.float32)


def wl_kmeans(lib, sz):
    """cluster.Fit: 10^7 points of 16 dimensions, k = 64, 20 iterations."""
    o = WorkloadOps(lib)
    n, d, k, iters = wl_n(10_000_000, 1000), 16, 64, 20
    centres = o.rand(k, d) * 20
    which = o.randint(0, k, n, "i64")
    x = centres[which] + o.randn(n, d)
    if o.torch is not None:
        torch = o.torch

        def call():
            c = x[torch.rand(n, device=o.dev).topk(k).indices]
            xx = (x * x).sum(1, keepdim=True)
            for it in range(iters + 1):
                dist = torch.addmm(xx + (c * c).sum(1), x, c.T, alpha=-2)
                mind, labels = dist.min(1)
                if it == iters:
                    break
                sums = torch.zeros(k, d, device=o.dev).index_add_(0, labels, x)
                counts = torch.bincount(labels, minlength=k)
                c = torch.where(counts[:, None] > 0, sums / counts[:, None], c)
            return o.host(torch.bincount(labels, minlength=k)), mind.sum(dtype=torch.float64).item()
        return call
    xp = o.xp
    if o.cupy:
        import cupyx
        add_at = cupyx.scatter_add
    else:
        add_at = xp.add.at

    def call():
        c = x[xp.argpartition(o.rand(n), n - k)[n - k:]]
        xx = (x * x).sum(1, keepdims=True)
        for it in range(iters + 1):
            dist = xx + (c * c).sum(1) - 2 * (x @ c.T)
            labels = dist.argmin(1)
            mind = xp.take_along_axis(dist, labels[:, None], 1)
            if it == iters:
                break
            sums = xp.zeros((k, d), dtype=x.dtype)
            add_at(sums, labels, x)
            counts = xp.bincount(labels, minlength=k)
            c = xp.where(counts[:, None] > 0, sums / xp.maximum(counts, 1)[:, None].astype(x.dtype), c).astype(x.dtype)
        return o.host(xp.bincount(labels, minlength=k)), float(mind.sum(dtype=xp.float64))
    return call


def wl_transformer(lib, sz):
    """decoder.Weights.Forward: GPT-2 small's block in bfloat16, 16 sequences of 1024
    tokens, written as nanoGPT writes it."""
    o = WorkloadOps(lib)
    if o.torch is None:
        raise Unsupported("bfloat16 needs PyTorch")
    torch = o.torch
    F = torch.nn.functional
    b, t, d, h, f, v = max(1, int(16 * WL_SCALE)), 1024, 768, 12, 3072, 50257
    if WL_SCALE < 1:
        t, d, h, f, v = 32, 64, 2, 256, 1000
    bf = torch.bfloat16

    def w(*shape, std=0.02, mean=0.0):
        return (mean + std * torch.randn(*shape, device=o.dev)).to(bf)
    emb, pos = w(v, d), w(t, d)
    ln1w, ln1b, ln2w, ln2b = w(d, std=0.1, mean=1), w(d, std=0.1), w(d, std=0.1, mean=1), w(d, std=0.1)
    wqkv, wo, w1, b1, w2 = w(d, 3 * d), w(d, d), w(d, f), w(f, std=0.1), w(f, d)
    mask = torch.tril(torch.ones(t, t, device=o.dev, dtype=torch.bool))
    tokens = torch.randint(0, v, (b, t), device=o.dev)
    dh = d // h

    def call():
        x = emb[tokens] + pos[:t]
        q, k, vv = (F.layer_norm(x, (d,), ln1w, ln1b, 1e-5) @ wqkv).split(d, dim=-1)
        q, k, vv = (z.view(b, t, h, dh).transpose(1, 2) for z in (q, k, vv))
        att = (q @ k.transpose(-2, -1)) * (1.0 / dh ** 0.5)
        att = F.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
        y = (att @ vv).transpose(1, 2).contiguous().view(b, t, d)
        x = x + y @ wo
        return x + F.gelu(F.layer_norm(x, (d,), ln2w, ln2b, 1e-5) @ w1 + b1) @ w2
    return call


# montecarlo.Example and its batches: 2^24 normals per batch.
OPT_S0, OPT_K, OPT_R, OPT_SIGMA, OPT_T = 100.0, 100.0, 0.05, 0.2, 1.0
OPT_BATCH = 1 << 24


def wl_options(kind):
    """montecarlo.European (10^8 paths) or Asian (10^8 paths of 64 dates)."""
    def make(lib, sz):
        import math
        o = WorkloadOps(lib)
        paths, steps = wl_n(100_000_000, 1000), 64
        f64 = o.torch.float64 if o.torch is not None else o.xp.float64
        if o.torch is not None:
            clip = lambda x: x.clamp(min=0)  # noqa: E731
            exp, cumsum = o.torch.exp, o.torch.cumsum
        else:
            clip = lambda x: o.xp.maximum(x, 0)  # noqa: E731
            exp, cumsum = o.xp.exp, lambda x, dim: o.xp.cumsum(x, axis=dim)

        def fsum(x):
            return x.sum(dtype=f64)

        if kind == "european":
            mu, vol = (OPT_R - OPT_SIGMA ** 2 / 2) * OPT_T, OPT_SIGMA * math.sqrt(OPT_T)

            def call():
                s = ss = 0
                for off in range(0, paths, OPT_BATCH):
                    z = o.randn(min(OPT_BATCH, paths - off))
                    p = clip(OPT_S0 * exp(mu + vol * z) - OPT_K)
                    s, ss = s + fsum(p), ss + fsum(p * p)
                return float(s), float(ss)
            return call
        dt = OPT_T / steps
        mu, vol = (OPT_R - OPT_SIGMA ** 2 / 2) * dt, OPT_SIGMA * math.sqrt(dt)
        j = o.arange(steps) + 1
        lns0, batch = math.log(OPT_S0), OPT_BATCH // steps

        def call():
            tot = [0] * 5
            for off in range(0, paths, batch):
                w = cumsum(o.randn(min(batch, paths - off), steps), 1)
                a = exp(lns0 + mu * j + vol * w).sum(1)
                g = w.sum(1)
                pa = clip(a / steps - OPT_K)
                pg = clip(exp(lns0 + mu * (steps + 1) / 2 + vol * g / steps) - OPT_K)
                for i, v in enumerate((pa, pa * pa, pg, pg * pg, pa * pg)):
                    tot[i] = tot[i] + fsum(v)
            return [float(v) for v in tot]
        return call
    return make


def wl_columns(lib, sz):
    """groupby.Query on a device table of 10^8 rows: qty > 50, 1000 keys, sums, means,
    counts and maxima ordered by the sum, read back."""
    o = WorkloadOps(lib)
    rows, groups = wl_n(100_000_000, 1000), 1000
    key, qty = o.randint(0, groups, rows), o.randint(1, 101, rows)
    z = o.randn(rows, dtype="f64")
    if o.torch is not None:
        torch = o.torch
        amount = torch.round(torch.exp(3 + z) * 100) / 100

        def call():
            m = qty > 50
            k, a = key[m].long(), amount[m]
            sums = torch.zeros(groups, dtype=torch.float64, device=o.dev).index_add_(0, k, a)
            counts = torch.bincount(k, minlength=groups)
            mx = torch.full((groups,), float("-inf"), dtype=torch.float64, device=o.dev).scatter_reduce_(0, k, a, "amax")
            present = counts.nonzero().squeeze(1)
            rows_ = present[torch.sort(sums[present], descending=True, stable=True).indices]
            s, c = o.host(sums[rows_]), o.host(counts[rows_])
            return s, s / c, c, o.host(mx[rows_]), o.host(rows_.int())
        return call
    xp = o.xp
    amount = xp.round(xp.exp(3 + z) * 100) / 100
    if o.cupy:
        import cupyx
        scatter_add, scatter_max = cupyx.scatter_add, cupyx.scatter_max
    else:
        scatter_add, scatter_max = xp.add.at, xp.maximum.at

    def call():
        m = qty > 50
        k, a = key[m], amount[m]
        sums = xp.zeros(groups)
        scatter_add(sums, k, a)
        counts = xp.bincount(k, minlength=groups)
        mx = xp.full(groups, -xp.inf)
        scatter_max(mx, k, a)
        present = xp.flatnonzero(counts)
        rows_ = present[xp.argsort(-sums[present], kind="stable") if not o.cupy else xp.argsort(-sums[present])]
        s, c = o.host(sums[rows_]), o.host(counts[rows_])
        return s, s / c, c, o.host(mx[rows_]), o.host(rows_.astype(xp.int32))
    return call


def wl_image(lib, sz):
    """filter.Pipeline on filter.TestCard's 3 planes of 8192x8192: Gaussian blur (sigma
    3, nearest-edge padding), luminance, Sobel magnitude."""
    import math
    o = WorkloadOps(lib)
    side = max(64, int(8192 * WL_SCALE ** 0.5))
    sigma, r = 3.0, 9
    taps = [math.exp(-(i - r) ** 2 / (2 * sigma * sigma)) for i in range(2 * r + 1)]
    taps = [v / sum(taps) for v in taps]
    norm = 1 / (4 * math.sqrt(2))
    c = o.arange(3).reshape(3, 1, 1)
    y = o.arange(side).reshape(1, side, 1)
    x = o.arange(side).reshape(1, 1, side)
    rr = ((x - side / 2) ** 2 + (y - side / 2) ** 2) ** 0.5 / side
    checker = ((x // 64) + (y // 64)) % 2
    planes = 0.35 + 0.25 * (rr * rr * 400).sin() if o.torch is not None else 0.35 + 0.25 * o.xp.sin(rr * rr * 400)
    planes = planes + 0.2 * checker + 0.2 * (c * x / side + (2 - c) * y / side) / 2
    planes = planes.clamp(0, 1) if o.torch is not None else o.xp.clip(planes, 0, 1).astype(o.xp.float32)
    if o.torch is not None:
        torch = o.torch
        F = torch.nn.functional
        kt = torch.tensor(taps, device=o.dev, dtype=torch.float32)
        krow, kcol = kt.view(1, 1, 1, -1), kt.view(1, 1, -1, 1)
        sob = torch.tensor([[[[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]], [[[-1, -2, -1], [0, 0, 0], [1, 2, 1]]]],
                           device=o.dev, dtype=torch.float32)
        p4 = planes.unsqueeze(1)  # (3, 1, H, W)

        def call():
            b = F.conv2d(F.pad(p4, (r, r, 0, 0), mode="replicate"), krow)
            b = F.conv2d(F.pad(b, (0, 0, r, r), mode="replicate"), kcol)
            lum = 0.299 * b[0] + 0.587 * b[1] + 0.114 * b[2]
            g = F.conv2d(F.pad(lum.unsqueeze(0), (1, 1, 1, 1), mode="replicate"), sob)[0]  # (2, H, W)
            return b, norm * torch.sqrt(g[0] ** 2 + g[1] ** 2)
        return call
    xp = o.xp
    if o.cupy:
        import cupyx.scipy.ndimage as ndi

        def call():
            b = ndi.gaussian_filter1d(planes, sigma, axis=-1, mode="nearest", truncate=3.0)
            b = ndi.gaussian_filter1d(b, sigma, axis=-2, mode="nearest", truncate=3.0)
            lum = 0.299 * b[0] + 0.587 * b[1] + 0.114 * b[2]
            gx = ndi.sobel(lum, axis=-1, mode="nearest")
            gy = ndi.sobel(lum, axis=-2, mode="nearest")
            return b, norm * xp.hypot(gx, gy)
        return call

    def conv(a, w, axis):  # correlation with nearest-edge padding (NumPy stand-in)
        pad = [(0, 0)] * a.ndim
        pad[axis] = (len(w) // 2, len(w) // 2)
        p = xp.pad(a, pad, mode="edge")
        n = a.shape[axis]
        return sum(wi * xp.take(p, range(i, i + n), axis=axis) for i, wi in enumerate(w))

    def call():
        b = conv(conv(planes, taps, 2), taps, 1)
        lum = 0.299 * b[0] + 0.587 * b[1] + 0.114 * b[2]
        gx = conv(conv(lum, [-1, 0, 1], 1), [1, 2, 1], 0)
        gy = conv(conv(lum, [-1, 0, 1], 0), [1, 2, 1], 1)
        return b, norm * xp.hypot(gx, gy)
    return call


def workload_benchmarks(add):
    S = ("S",)
    add("workload/kmeans/1e7x16/k64/20it", S, wl_kmeans,
        "k-means of 10^7 float32 points of 16 dimensions, k 64, 20 iterations: addmm distances, min, index_add_, "
        "bincount (CuPy: matmul, argmin, add.at, bincount)")
    add("workload/transformer/bf16/16x1024/d768", S, wl_transformer,
        "GPT-2 small's decoder block in bfloat16 on 16x1024 tokens, nanoGPT's forward (no SDPA)", libs=("torch",))
    add("workload/options/european/1e8", S, wl_options("european"),
        "Monte Carlo European call, 10^8 paths in batches of 2^24 normals, float64 sums")
    add("workload/options/asian/1e8x64", S, wl_options("asian"),
        "Monte Carlo Asian calls (arithmetic and geometric averages) of 10^8 paths of 64 dates: randn, cumsum, "
        "row sums, five float64 payoff sums")
    add("workload/columns/1e8/1000keys", S, wl_columns,
        "filter (qty > 50), group by 1000 keys (sum, count, max, mean), sort by the sum, read back; 10^8 rows")
    add("workload/image/8192x8192/sigma3", S, wl_image,
        "Gaussian blur (sigma 3, replicate padding) of 3 planes of 8192^2, luminance, Sobel magnitude "
        "(PyTorch: conv2d; CuPy: cupyx.scipy.ndimage)")


class Ceiling:
    """A bandwidth ceiling: make(lib) returns (call, bytes moved)."""

    def __init__(self, name, libs, make, desc):
        self.name, self.libs, self.make, self.desc = name, libs, make, desc


def ceilings():
    n4 = 4 * GiB // 4  # float32 elements in 4 GiB

    def d2d(lib):
        x, y = lib.f32((n4,)), lib.empty((n4,), "f32")
        return (lambda: lib.d2d(y, x)), 2 * 4 * GiB

    def sum4(lib):
        x = lib.f32((n4,))
        return (lambda: lib.sum(x, None)), 4 * GiB

    def cumsum4(lib):
        x = lib.f32((n4,))
        return (lambda: lib.cumsum(x, 0)), 2 * 4 * GiB

    def transpose(lib):
        x = lib.f32((BIG, BIG))
        return (lambda: lib.permute(x, (1, 0))), 2 * BIG * BIG * 4

    return [
        Ceiling("d2d_copy_GBps(read+write)", ("torch", "cupy"), d2d, "4 GiB float32 device-to-device copy (PyTorch; CuPy if PyTorch is missing)"),
        Ceiling("torch_sum_4GiB_GBps", ("torch",), sum4, "torch.sum of 4 GiB float32"),
        Ceiling("torch_cumsum_4GiB_GBps(read+write)", ("torch",), cumsum4, "torch.cumsum of 4 GiB float32"),
        Ceiling("cupy_cumsum_4GiB_GBps(read+write)", ("cupy",), cumsum4, "cupy.cumsum of 4 GiB float32"),
        Ceiling("cupy_sum_4GiB_GBps", ("cupy",), sum4, "cupy.sum of 4 GiB float32"),
        Ceiling("torch_transpose_16k^2_GBps(read+write)", ("torch",), transpose, "x.t().contiguous() of a 16384^2 float32"),
    ]


# ---------------------------------------------------------------------------
# Measuring.


def measure(lib, fn, mode, budget, max_samples):
    """Median and count of samples (ns) of fn timed per mode."""
    clock = time.perf_counter_ns

    def once():
        if mode == "launch":
            t0 = clock()
            fn()
            t1 = clock()
            lib.sync()
            return t1 - t0
        if mode == "sync":
            t0 = clock()
            fn()
            return clock() - t0
        if mode == "events":
            return lib.timed(fn)
        t0 = clock()
        fn()
        lib.sync()
        return clock() - t0

    lib.sync()
    start, calls = time.perf_counter(), 0
    while calls < WARMUP_CALLS or time.perf_counter() - start < WARMUP_SECONDS:
        once()
        calls += 1
    samples = []
    start = time.perf_counter()
    while len(samples) < max_samples and (len(samples) < MIN_SAMPLES or time.perf_counter() - start < budget):
        samples.append(once())
    return statistics.median(samples), len(samples)


def driver_version():
    try:
        with open("/proc/driver/nvidia/version") as f:
            m = re.search(r"Kernel Module\s+([0-9.]+)", f.read())
            return m.group(1) if m else ""
    except OSError:
        return ""


def log(msg):
    print("peers.py: " + msg, file=sys.stderr, flush=True)


def plan(args):
    """The (size, key, libs, desc) entries and ceilings selected by args."""
    sel = re.compile(args.select) if args.select else None
    entries = []
    for b in benchmarks():
        if sel and not sel.search(b.key):
            continue
        libs = [l for l in b.libs if l in args.libs]
        for sz in b.sizes:
            if sz in args.sizes and libs:
                entries.append((sz, b, libs))
    cs = []
    if not args.no_ceilings:
        for c in ceilings():
            libs = [l for l in c.libs if l in args.libs]
            if libs and (not sel or sel.search(c.name)):
                cs.append((c, libs))
    return entries, cs


def empty_result():
    return {"ceilings": {}, "cupy_S": {}, "torch_S": {}, "cupy_L": {}, "torch_L": {}}


def write_json(result, path):
    text = json.dumps(result, indent=1) + "\n"
    if path and path != "-":
        with open(path, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def parse_args(argv):
    p = argparse.ArgumentParser(description="Time CuPy and PyTorch for gpubench's peer columns.")
    p.add_argument("-o", "--output", default="-", help="write the JSON to FILE (default: stdout)")
    p.add_argument("-k", "--select", default="", help="measure only keys (and ceilings) matching this regex (re.search)")
    p.add_argument("--sizes", default="S,L", help="sizes to measure: S, L or S,L (default S,L)")
    p.add_argument("--libs", default="cupy,torch", help="libraries: cupy, torch or both (default both)")
    p.add_argument("--no-ceilings", action="store_true", help="skip the bandwidth ceilings")
    p.add_argument("--time-per-bench", type=float, default=0.5, metavar="SECONDS",
                   help="sampling time per figure after the warm-up (default 0.5; at least %d samples)" % MIN_SAMPLES)
    p.add_argument("--max-samples", type=int, default=1000, help="most samples per figure (default 1000)")
    p.add_argument("--max-time", type=float, default=540, metavar="SECONDS",
                   help="stop starting new figures after this long; the rest are listed in meta.skipped (default 540)")
    p.add_argument("--dry-run", action="store_true",
                   help="list what would be measured (size, key, libraries, operation) on stdout and measure nothing; "
                        "with -o FILE also write the JSON skeleton there")
    args = p.parse_args(argv)
    args.sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    args.libs = [s.strip() for s in args.libs.split(",") if s.strip()]
    for s in args.sizes:
        if s not in SIZES:
            p.error("--sizes: unknown size %r (want S or L)" % s)
    for lib in args.libs:
        if lib not in LIBS:
            p.error("--libs: unknown library %r (want cupy or torch)" % lib)
    if args.select:
        try:
            re.compile(args.select)
        except re.error as e:
            p.error("--select: %s" % e)
    if args.time_per_bench <= 0 or args.max_samples <= 0 or args.max_time <= 0:
        p.error("--time-per-bench, --max-samples and --max-time must be positive")
    return args


def base_meta(args):
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": platform.node(),
        "python": platform.python_version(),
        "method": "median wall time of one call plus a stream synchronize, ns; warm-up %d calls and %.1f s"
                  % (WARMUP_CALLS, WARMUP_SECONDS),
        "settings": {"select": args.select, "sizes": args.sizes, "libs": args.libs,
                     "time_per_bench_s": args.time_per_bench, "max_samples": args.max_samples,
                     "max_time_s": args.max_time},
        "samples": {},
        "skipped": {},
    }


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    entries, cs = plan(args)
    result = empty_result()
    meta = base_meta(args)

    if args.dry_run:
        for sz, b, libs in entries:
            print("%s\t%s\t%s\t%s" % (sz, b.key, ",".join(libs), b.desc))
        for c, libs in cs:
            print("ceiling\t%s\t%s\t%s" % (c.name, libs[0], c.desc))
        log("dry run: %d figures in %d entries, %d ceilings" % (
            sum(len(libs) for _, _, libs in entries), len(entries), len(cs)))
        if args.output != "-":
            meta["dry_run"] = True
            result["meta"] = meta
            write_json(result, args.output)
        return 0

    adapters = {}
    for name in args.libs:
        try:
            adapters[name] = ADAPTERS[name]()
        except Exception as e:  # ImportError, no device, ...
            log("skipping %s: %s" % (name, e))
            meta["skipped"][name] = str(e)
    if not adapters:
        log("neither CuPy nor PyTorch can run here; writing an empty result")
    for name, lib in adapters.items():
        meta[name] = lib.version()
        meta.setdefault("device", lib.device_name())
    try:
        import numpy
        meta["numpy"] = numpy.__version__
    except ImportError:
        pass
    meta["driver"] = driver_version()

    start = time.perf_counter()

    def out_of_time():
        return time.perf_counter() - start > args.max_time

    for c, libs in cs:
        libs = [l for l in libs if l in adapters]
        if not libs:
            meta["skipped"][c.name] = "library not available"
            continue
        if out_of_time():
            meta["skipped"][c.name] = "--max-time reached"
            continue
        lib = adapters[libs[0]]
        try:
            fn, nbytes = c.make(lib)
            ns, n = measure(lib, fn, "call", args.time_per_bench, args.max_samples)
            result["ceilings"][c.name] = nbytes / ns
            meta["samples"][c.name] = n
            log("%-45s %s %9.1f GB/s" % (c.name, lib.name, nbytes / ns))
        except Exception as e:
            meta["skipped"][c.name] = "%s: %s" % (type(e).__name__, e)
            log("%s: %s" % (c.name, e))
        finally:
            fn = None
            lib.free()

    for name, lib in adapters.items():
        for sz, b, libs in entries:
            if name not in libs:
                continue
            section = "%s_%s" % (name, sz)
            tag = "%s/%s" % (section, b.key)
            if out_of_time():
                meta["skipped"][tag] = "--max-time reached"
                continue
            fn = None
            try:
                fn = b.make(lib, sz)
                ns, n = measure(lib, fn, b.mode, args.time_per_bench, args.max_samples)
                result[section][b.key] = ns
                meta["samples"][tag] = n
                log("%-45s %-8s %14.1f ns" % (b.key, section, ns))
            except Unsupported as e:
                meta["skipped"][tag] = "unsupported: %s" % e
            except Exception as e:
                meta["skipped"][tag] = "%s: %s" % (type(e).__name__, e)
                log("%s %s: %s: %s" % (section, b.key, type(e).__name__, e))
            finally:
                fn = None
                lib.free()

    meta["elapsed_s"] = round(time.perf_counter() - start, 1)
    result["meta"] = meta
    write_json(result, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
