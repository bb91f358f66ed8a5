"""Tests of peers.py that need no GPU: NumPy stands in for CuPy and PyTorch.

Run: python3 peers/test_peers.py   (needs NumPy; skips without it)
"""

import io
import json
import os
import sys
import tempfile
import time
import unittest
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402

try:
    import numpy as np
except ImportError:
    np = None


class FakeLib:
    """The adapter interface on NumPy arrays, on the CPU."""

    name = "fake"

    def __init__(self):
        self.rng = np.random.default_rng(1)
        self.syncs = 0

    def version(self): return np.__version__
    def device_name(self): return "cpu (NumPy)"
    def sync(self): self.syncs += 1
    def free(self): pass
    def empty(self, shape, t): return np.empty(shape, dtype={"f32": np.float32, "i64": np.int64}[t])
    def f32(self, shape): return self.rng.random(shape, dtype=np.float32)
    def i64(self, shape): return self.rng.integers(-10, 11, size=shape, dtype=np.int64)
    def i32(self, shape, lo, hi): return self.rng.integers(lo, hi, size=shape, dtype=np.int32)
    def bools(self, shape): return self.rng.random(shape) < 0.5
    def host_f32(self, shape, pinned): return self.f32(shape)
    def copy(self, x): return x.copy()
    def h2d(self, dst, src): dst[...] = src
    def d2h(self, dst, src): dst[...] = src
    def d2d(self, dst, src): np.copyto(dst, src)
    def scalar10(self, v): return [float(v[i]) for i in range(10)]
    def logical(self, v, mask): return v[mask]
    def isodd(self, x): return x % 2 != 0
    def findall(self, mask): return np.flatnonzero(mask)
    def findfirst(self, mask): return int(np.argmax(mask))

    def findmin(self, x, axis):
        i = np.argmin(x, axis=axis)
        if axis is None:
            return x[i], i
        return np.take_along_axis(x, np.expand_dims(i, axis), axis), i

    def fill0(self, x): x.fill(0)
    def floor_divide(self, x, y): return np.floor_divide(x, y)
    def remainder(self, x, y): return np.remainder(x, y)
    def cumsum(self, x, axis): return np.cumsum(x, axis=axis)
    def sum(self, x, axis): return np.sum(x, axis=axis)
    def mapreduce(self, x, axis): return np.sum(x + 1, axis=axis)

    def uniform(self, shape, t):  # NumPy has no bfloat16: float32 stands in
        return self.rng.random(shape, dtype=np.float32).astype(np.float16 if t == "f16" else np.float32)

    def axpb(self, x): return 2.5 * x + 1.25

    def rand(self, n, t):
        if t in ("f16", "bf16"):
            return self.uniform(n, t)
        return self.rng.random(n, dtype=np.float32) if t == "f32" else self.rng.integers(0, 2**63 - 1, n)

    def rand_(self, x):
        if x.dtype != np.float32:
            raise peers.Unsupported("no in-place integers")
        self.rng.random(dtype=np.float32, out=x)

    def randn(self, n, t="f32"): return self.rng.standard_normal(n, dtype=np.float32).astype(np.float16 if t == "f16" else np.float32)
    def randn_(self, x): self.rng.standard_normal(dtype=np.float32, out=x)
    def permute(self, x, axes): return np.ascontiguousarray(x.transpose(axes))
    def launch_empty(self): pass
    def launch_copy(self, dest, src, checked, threads): dest[...] = src
    def stream_sync(self): self.syncs += 1
    def device_sync(self): self.syncs += 1

    def randint(self, n, hi): return self.rng.integers(0, hi, size=n, dtype=np.int64)
    def arange_i64(self, n, step): return np.arange(0, n * step, step, dtype=np.int64)
    def take(self, x, idx): return np.take(x, idx)
    def put(self, x, idx, v): np.put(x, idx, v)
    def scatter_add(self, x, idx, v): np.add.at(x, idx, v)
    def bincount(self, x, n): return np.bincount(x, minlength=n)
    def concat(self, xs, axis): return np.concatenate(xs, axis=axis)
    def mm_inputs(self, batch, m, k, n, t):
        dt = {"f32": np.float32, "bf16": np.float32, "f16": np.float16, "f64": np.float64}[t]  # no bfloat16 in NumPy
        lead = (batch,) if batch > 1 else ()
        return (self.rng.random(lead + (m, k)).astype(dt), self.rng.random(lead + (k, n)).astype(dt),
                np.empty(lead + (m, n), dtype=dt))

    def var_rows(self, x): return np.var(x, axis=1)
    def logsumexp_rows(self, x): return np.log(np.exp(x).sum(axis=1))
    def softmax_rows(self, x): return np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    def layernorm(self, x, w, b): return (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * w + b

    def allow_tf32(self, on): pass
    def matmul(self, a, b, out): np.matmul(a, b, out=out)
    def matmul_new(self, a, b): return np.matmul(a, b)

    def timed(self, fn):
        t0 = time.perf_counter_ns()
        fn()
        return time.perf_counter_ns() - t0


class FakeCuPy(FakeLib):
    name = "cupy"

    # As the real CuPy: no bfloat16, no half-precision generators.
    def uniform(self, shape, t):
        if t == "bf16":
            raise peers.Unsupported("no bfloat16")
        return FakeLib.uniform(self, shape, t)

    def rand(self, n, t):
        if t in ("f16", "bf16"):
            raise peers.Unsupported("no half-precision generators")
        return FakeLib.rand(self, n, t)

    def randn(self, n, t="f32"):
        if t != "f32":
            raise peers.Unsupported("no half-precision generators")
        return FakeLib.randn(self, n, t)
    def mm_inputs(self, batch, m, k, n, t):
        if t == "bf16":
            raise peers.Unsupported("CuPy has no bfloat16")
        return FakeLib.mm_inputs(self, batch, m, k, n, t)

    def allow_tf32(self, on):
        if on:
            raise peers.Unsupported("process-wide in CuPy")


class FakeTorch(FakeLib):
    name = "torch"

    def rand_(self, x):
        if x.dtype == np.float32:
            self.rng.random(dtype=np.float32, out=x)
        else:
            x[...] = self.rng.integers(0, 2**63 - 1, x.shape)


class PureTests(unittest.TestCase):
    def test_julia_layout(self):
        self.assertEqual(peers.julia_perm((2, 1)), (1, 0))
        self.assertEqual(peers.julia_perm((3, 1, 2)), (1, 2, 0))
        self.assertEqual(peers.julia_perm((2, 1, 4, 3)), (1, 0, 3, 2))
        self.assertEqual(peers.julia_axis(1, 2), 1)
        self.assertEqual(peers.julia_axis(2, 2), 0)
        self.assertEqual(peers.SHAPES["S"]["mat"], (1000, 512))
        self.assertEqual(peers.numel(peers.SHAPES["L"]["mat"]), 1 << 28)
        for sz in peers.SIZES:
            for k in ("3d", "4d"):
                self.assertEqual(peers.numel(peers.SHAPES[sz][k]), peers.numel(peers.SHAPES[sz]["mat"]))

    def test_keys_unique(self):
        keys = [b.key for b in peers.benchmarks()]
        self.assertEqual(len(keys), len(set(keys)))

    def test_dry_run(self):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            peers.main(["--dry-run", "--select", "^reductions/reduce/Int64", "--sizes", "L", "--no-ceilings"])
        lines = out.getvalue().splitlines()
        self.assertEqual([l.split("\t")[:3] for l in lines], [
            ["L", "reductions/reduce/Int64/1d", "cupy,torch"],
            ["L", "reductions/reduce/Int64/dims=1", "cupy,torch"],
            ["L", "reductions/reduce/Int64/dims=2", "cupy,torch"],
        ])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "p.json")
            with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
                peers.main(["--dry-run", "-o", path, "--libs", "cupy"])
            with open(path) as f:
                j = json.load(f)
        self.assertEqual(list(j), ["ceilings", "cupy_S", "torch_S", "cupy_L", "torch_L", "meta"])
        self.assertTrue(j["meta"]["dry_run"])

    def test_bad_flags(self):
        for argv in (["--sizes", "M"], ["--libs", "jax"], ["--select", "("], ["--time-per-bench", "0"]):
            with redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
                peers.parse_args(argv)


@unittest.skipIf(np is None, "NumPy is not installed")
class FakeRunTests(unittest.TestCase):
    def setUp(self):
        self.saved = (peers.ADAPTERS, dict(peers.SHAPES["L"]), peers.GiB, peers.BIG, peers.WARMUP_SECONDS,
                      peers.IDX_SCALE, peers.MM_SCALE, peers.WL_SCALE)
        peers.IDX_SCALE, peers.MM_SCALE, peers.WL_SCALE = 1 / 4096, 1 / 64, 1e-5
        peers.ADAPTERS = {"cupy": FakeCuPy, "torch": FakeTorch}
        # Shrink L and the ceilings so that a CPU gets through them.
        peers.SHAPES["L"].update({"mat": (64, 64), "3d": (4, 4, 256), "4d": (2, 2, 4, 256)})
        peers.GiB, peers.BIG, peers.WARMUP_SECONDS = 1 << 16, 64, 0.001

    def tearDown(self):
        (peers.ADAPTERS, L, peers.GiB, peers.BIG, peers.WARMUP_SECONDS,
         peers.IDX_SCALE, peers.MM_SCALE, peers.WL_SCALE) = self.saved
        peers.SHAPES["L"].clear()
        peers.SHAPES["L"].update(L)

    def test_results(self):
        lib = FakeLib()
        byk = {b.key: b for b in peers.benchmarks()}

        def run(key, sz="S"):
            return byk[key].make(lib, sz)()
        self.assertEqual(run("reductions/reduce/Float32/dims=1").shape, (1000,))   # Julia dims=1: 1000 sums of 512
        self.assertEqual(run("reductions/reduce/Float32/dims=2").shape, (512,))
        self.assertEqual(run("reductions/reduce/Int64/dims=1L").shape, (1000000,))  # 3x1000000: sums of 3
        self.assertEqual(run("reductions/reduce/Int64/dims=2L").shape, (3,))
        self.assertEqual(np.shape(run("reductions/mapreduce/Float32/1d")), ())
        self.assertEqual(run("accumulate/Int64/1d").shape, (512000,))
        self.assertEqual(run("accumulate/Float32/dims=2").shape, (1000, 512))
        self.assertEqual(run("permutedims/2d").shape, (512, 1000))
        self.assertEqual(run("permutedims/3d").shape, (40, 512, 25))      # Julia (25, 512, 40)
        self.assertEqual(run("permutedims/4d").shape, (10, 10, 512, 10))  # Julia (10, 512, 10, 10)
        self.assertEqual(run("random/rand/Float32", "L").shape, (64 * 64,))
        self.assertEqual(run("construct", "L").shape, (64, 64))
        v, i = run("iteration/findmin/2d")
        self.assertEqual(v.shape, (1000, 1))

    def test_workloads(self):
        """The examples' workloads on NumPy, at WL_SCALE: their answers, not only that
        they run."""
        lib = FakeLib()
        byk = {b.key: b for b in peers.benchmarks()}

        def run(key):
            return byk[key].make(lib, "S")()
        counts, inertia = run("workload/kmeans/1e7x16/k64/20it")
        self.assertEqual((counts.shape, int(counts.sum())), ((64,), 1000))
        self.assertGreater(inertia, 0)
        s, ss = run("workload/options/european/1e8")
        price = np.exp(-peers.OPT_R * peers.OPT_T) * s / 1000
        self.assertLess(abs(price - 10.4506), 5 * np.sqrt(ss / 1000) / np.sqrt(1000))  # Black-Scholes
        tot = run("workload/options/asian/1e8x64")
        self.assertEqual(len(tot), 5)
        self.assertTrue(0 < tot[2] <= tot[0])  # the geometric average is at most the arithmetic one
        sums, means, cnt, mx, keys = run("workload/columns/1e8/1000keys")
        self.assertEqual(len(set(keys.tolist())), len(keys))
        self.assertTrue(np.all(np.diff(sums) <= 0))
        np.testing.assert_allclose(means * cnt, sums)
        self.assertTrue(np.all(mx <= sums + 1e-9) and 0 < cnt.sum() < 1000)
        b, edges = run("workload/image/8192x8192/sigma3")
        self.assertEqual((b.shape, edges.shape), ((3, 64, 64), (64, 64)))
        self.assertTrue(0 <= b.min() and b.max() <= 1 and 0 <= edges.min() and edges.max() <= 1)
        with self.assertRaises(peers.Unsupported):  # bfloat16: PyTorch only
            run("workload/transformer/bf16/16x1024/d768")

    def test_main(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "p.json")
            err = io.StringIO()
            with redirect_stderr(err):
                peers.main(["-o", path, "--time-per-bench", "0.001", "--max-samples", "7"])
            with open(path) as f:
                j = json.load(f)
        self.assertEqual(list(j), ["ceilings", "cupy_S", "torch_S", "cupy_L", "torch_L", "meta"])
        entries, cs = peers.plan(peers.parse_args([]))
        want = {("%s_%s" % (lib, sz), b.key) for sz, b, libs in entries for lib in libs}
        got = {(sec, k) for sec in ("cupy_S", "torch_S", "cupy_L", "torch_L") for k in j[sec]}
        skipped = {tuple(t.split("/", 1)) for t in j["meta"]["skipped"]}
        self.assertEqual(got | skipped, want, err.getvalue())
        # Only what the fake CuPy cannot do (as the real one cannot) is missing, and the
        # rows that need the real PyTorch (NumPy stands in for the fake one).
        half = {("cupy_L", k) for k in want_keys("BFloat16", "bfloat16")}
        half |= {("cupy_L", "random/rand/Float16"), ("cupy_L", "random/randn/Float16")}
        cupy_cannot = {"random/rand!/Int64", "bmm/bfloat16/256x128^3"} | {
            "matmul/%s/%d" % (k, n) for k in ("bfloat16", "float32/tf32") for n in peers.MM_SIZES}
        cupy_cannot = {("cupy_S", k) for k in cupy_cannot} | {("cupy_L", "random/rand!/Int64")}
        torch_only = {("torch_L", "topk/100/float32/2^24"), ("torch_S", "workload/transformer/bf16/16x1024/d768")}
        self.assertEqual(skipped, half | cupy_cannot | torch_only)
        for sec in ("cupy_S", "torch_L"):
            for k, ns in j[sec].items():
                self.assertGreater(ns, 0, k)
                self.assertLessEqual(j["meta"]["samples"]["%s/%s" % (sec, k)], 7)
        self.assertEqual(set(j["ceilings"]), {c.name for c in peers.ceilings()})
        self.assertEqual(j["meta"]["device"], "cpu (NumPy)")

    def test_max_time(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "p.json")
            with redirect_stderr(io.StringIO()):
                peers.main(["-o", path, "--max-time", "1e-9", "--libs", "torch", "--select", "copy"])
            with open(path) as f:
                j = json.load(f)
        self.assertFalse(j["torch_S"])
        self.assertTrue(all(v == "--max-time reached" for v in j["meta"]["skipped"].values()))

    def test_measure_modes(self):
        lib = FakeLib()
        calls = []
        ns, n = peers.measure(lib, lambda: calls.append(1), "call", 0.001, 9)
        self.assertGreater(ns, 0)
        self.assertTrue(peers.MIN_SAMPLES <= n <= 9)
        self.assertGreaterEqual(lib.syncs, len(calls))
        lib.syncs = 0
        peers.measure(lib, lambda: None, "sync", 0.001, 9)
        self.assertEqual(lib.syncs, 1)  # only the one before the warm-up


def want_keys(jl, np_):
    """The half-precision keys of one type."""
    return ["copy/" + jl, "broadcast/" + jl, "axpb/" + np_, "random/rand/" + jl, "random/randn/" + jl,
            "reductions/reduce/%s/1d" % jl, "reductions/reduce/%s/dims=1" % jl, "reductions/reduce/%s/dims=2" % jl,
            "accumulate/%s/1d" % jl, "accumulate/%s/dims=1" % jl]


if __name__ == "__main__":
    unittest.main()
