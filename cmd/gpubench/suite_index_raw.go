package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cuda"
	"github.com/go-gpu/gpu/backend/cuda/cu"
	"github.com/go-gpu/gpu/bench"
)

// Raw driver baselines of the scatter and gather rows at /16k: the simplest
// hand-written PTX kernel for each (one element per thread, what a CUDA programmer
// writes first: plain loads and stores, red.global for the sums, no index checks),
// loaded with cuModuleLoadData and launched with cuLaunchKernel on the raw stream,
// over cuMemAlloc memory of the same sizes, with random indices of the same
// distribution (drawn on the host, fixed seed). Random 4-byte accesses into a large
// array cost a DRAM sector each whatever the kernel does, so "vs raw" near 1 says
// that a row is at this pattern's limit on the device, not at the copy bandwidth.
//
//   - raw/index/take/float32/random/16k: out[i] = x[idx[i]], 2^26 int64 indices
//     into 2^28 float32.
//   - raw/index/put/float32/random/16k: x[idx[i]] = v[i], the same sizes.
//   - raw/index/addat/float32/many/16k: red.global.add.f32 [x + 4*idx[i]], v[i],
//     2^26 updates into 2^20 float32 (PyTorch's and CuPy's plain atomicAdd).
//   - raw/index/bincount/many/bins/16k: red.global.add.u64 [c + 8*x[i]], 1, 2^26
//     values into 2^20 int64 counts (the counts zeroed first, as Bincount does).

// rawIndexPTX is the module of the raw index kernels, each rawIndexPrologue followed by
// its body (rawIndexKernels).
var rawIndexPTX = rawIndexModule()

// rawIndexPrologue is what the raw index kernels share: the parameters (a, b, idx, n;
// fmt's %[1]s is the entry's name, %[2]s and %[3]s name a and b) in %rd1 to %rd4, the
// element i = ctaid*ntid + tid in %rd5, the threads at n or past it returning, and the
// index idx[i] in %rd7. A body may use %rd8 to %rd11 and %f.
const rawIndexPrologue = `
.visible .entry %[1]s(.param .u64 %[2]s, .param .u64 %[3]s, .param .u64 idx, .param .u64 n)
{
	.reg .pred %%p;
	.reg .b32 %%r<4>;
	.reg .b64 %%rd<12>;
	.reg .f32 %%f;
	ld.param.u64 %%rd1, [%[2]s];
	ld.param.u64 %%rd2, [%[3]s];
	ld.param.u64 %%rd3, [idx];
	ld.param.u64 %%rd4, [n];
	mov.u32 %%r1, %%ctaid.x;
	mov.u32 %%r2, %%ntid.x;
	mov.u32 %%r3, %%tid.x;
	cvt.u64.u32 %%rd5, %%r3;
	mad.wide.u32 %%rd5, %%r1, %%r2, %%rd5;
	setp.ge.u64 %%p, %%rd5, %%rd4;
	@%%p ret;
	shl.b64 %%rd6, %%rd5, 3;
	add.u64 %%rd6, %%rd3, %%rd6;
	ld.global.u64 %%rd7, [%%rd6];
`

// rawIndexKernels are the raw index kernels: the entry, the names of its a and b
// parameters, and its body after rawIndexPrologue.
var rawIndexKernels = []struct{ entry, a, b, body string }{
	// out[i] = x[idx[i]]
	{"take", "out", "x", `
	shl.b64 %rd8, %rd7, 2;
	add.u64 %rd8, %rd2, %rd8;
	ld.global.f32 %f, [%rd8];
	shl.b64 %rd9, %rd5, 2;
	add.u64 %rd9, %rd1, %rd9;
	st.global.f32 [%rd9], %f;`},
	// x[idx[i]] = v[i]
	{"put", "x", "v", `
	shl.b64 %rd9, %rd5, 2;
	add.u64 %rd9, %rd2, %rd9;
	ld.global.f32 %f, [%rd9];
	shl.b64 %rd8, %rd7, 2;
	add.u64 %rd8, %rd1, %rd8;
	st.global.f32 [%rd8], %f;`},
	// x[idx[i]] += v[i]
	{"addat", "x", "v", `
	shl.b64 %rd9, %rd5, 2;
	add.u64 %rd9, %rd2, %rd9;
	ld.global.f32 %f, [%rd9];
	shl.b64 %rd8, %rd7, 2;
	add.u64 %rd8, %rd1, %rd8;
	red.global.add.f32 [%rd8], %f;`},
	// c[idx[i]] += 1 (b unused)
	{"bincount", "c", "unused", `
	shl.b64 %rd8, %rd7, 3;
	add.u64 %rd8, %rd1, %rd8;
	red.global.add.u64 [%rd8], 1;`},
}

// rawIndexModule returns the PTX of the raw index kernels.
func rawIndexModule() string {
	var b strings.Builder
	b.WriteString(".version 7.0\n.target sm_80\n.address_size 64\n")
	for _, k := range rawIndexKernels {
		fmt.Fprintf(&b, rawIndexPrologue, k.entry, k.a, k.b)
		b.WriteString(k.body[1:])
		b.WriteString("\n\tret;\n}\n")
	}
	return b.String()
}

// rawIndexBlock is the raw index kernels' block size.
const rawIndexBlock = 256

// rawIndexKernel is a raw index baseline's state.
type rawIndexKernel struct {
	mod       cu.Module
	fn        cu.Function
	a, b, idx uint64 // cuMemAlloc memory; b is 0 for bincount
	n, aBytes int64
	zero      bool // zero a before each launch (bincount)
}

// registerRawIndex registers the raw baseline "raw/" + name of the /16k row name
// (its Interleave group): kernel entry over n = side^2/4 indices below dstN(side),
// with a (dstN elements of aSize bytes) and, but for bincount, b (n float32 values or
// outputs).
func registerRawIndex(name, entry string, bytes func(n, dst int64) int64, dstN func(side int) int64, aSize int64) {
	var k rawIndexKernel
	full := name + bench.LargeSuffix
	side := int64(bench.LargeSide)
	registerRaw(rawSpec{
		Name:       "raw/" + full,
		Interleave: full,
		Bytes:      bytes(side*side/4, dstN(int(side))),
		SyncTimer:  true,
		Setup: func(r *raw, env *bench.Env) (err error) {
			side := env.Side()
			n, dn := int64(side)*int64(side)/4, dstN(side)
			env.Bytes = bytes(n, dn)
			k = rawIndexKernel{n: n, aBytes: dn * aSize, zero: entry == "bincount"}
			if k.mod, err = r.ctx.ModuleLoadData(append([]byte(rawIndexPTX), 0)); err != nil {
				return err
			}
			defer func() {
				if err != nil {
					err = errors.Join(err, k.free(r))
				}
			}()
			if k.fn, err = r.ctx.ModuleGetFunction(k.mod, entry); err != nil {
				return err
			}
			if k.a, err = r.memAlloc(k.aBytes); err != nil {
				return err
			}
			if err = r.ctx.MemsetAsync(cu.DevicePtr(k.a), 0, 4, k.aBytes/4, r.s); err != nil {
				return err
			}
			if entry != "bincount" {
				if k.b, err = r.memAlloc(4 * n); err != nil {
					return err
				}
				// Values 1.0f (put, addat); take overwrites them.
				if err = r.ctx.MemsetAsync(cu.DevicePtr(k.b), 0x3f800000, 4, n, r.s); err != nil {
					return err
				}
			}
			if k.idx, err = r.memAlloc(8 * n); err != nil {
				return err
			}
			host := make([]byte, 8*n)
			rng := rand.New(rand.NewPCG(benchSeed, 20))
			for i := range n {
				binary.LittleEndian.PutUint64(host[8*i:], uint64(rng.Int64N(dn)))
			}
			r.pinGo(host)
			return r.copyHtoD(k.idx, host)
		},
		Teardown: func(r *raw) error { return k.free(r) },
		Body: func(r *raw) error {
			if k.zero {
				if err := r.ctx.MemsetAsync(cu.DevicePtr(k.a), 0, 4, k.aBytes/4, r.s); err != nil {
					return err
				}
			}
			var blob [32]byte
			for i, v := range []uint64{k.a, k.b, k.idx, uint64(k.n)} {
				binary.LittleEndian.PutUint64(blob[8*i:], v)
			}
			grid := uint32((k.n + rawIndexBlock - 1) / rawIndexBlock)
			return r.ctx.LaunchKernel(k.fn, [3]uint32{grid, 1, 1}, [3]uint32{rawIndexBlock, 1, 1}, 0, r.s, blob[:], []int32{0, 8, 16, 24})
		},
	})
}

// free releases what Setup made (on the raw stream's context, after its work).
func (k *rawIndexKernel) free(r *raw) error {
	err := r.syncStream()
	for _, p := range []*uint64{&k.a, &k.b, &k.idx} {
		if *p != 0 {
			err = errors.Join(err, r.memFree(*p))
			*p = 0
		}
	}
	if k.mod != 0 {
		err = errors.Join(err, r.ctx.ModuleUnload(k.mod))
		k.mod = 0
	}
	return err
}

// registerRawIndexOps registers the raw index baselines (see above).
func registerRawIndexOps() {
	idx := func(side int) int64 { return int64(side) * int64(side) }
	bins := func(side int) int64 { return int64(side) * int64(side) / 256 }
	registerRawIndex("index/take/float32/random", "take", func(n, _ int64) int64 { return 16 * n }, idx, 4)
	registerRawIndex("index/put/float32/random", "put", func(n, _ int64) int64 { return 16 * n }, idx, 4)
	registerRawIndex("index/addat/float32/many", "addat", func(n, d int64) int64 { return 12*n + 8*d }, bins, 4)
	registerRawIndex("index/bincount/many/bins", "bincount", func(n, d int64) int64 { return 8*n + 8*d }, bins, 8)
}

// setL2Fetch sets the CUDA context's CU_LIMIT_MAX_L2_FETCH_GRANULARITY to
// $GPUBENCH_L2_FETCH bytes (0 to 128) when that is set, for every row of the run
// (ours, the raw baselines'; the peers run in their own processes): an experiment on
// the random gathers and scatters, whose every miss fetches this much from DRAM at
// most. It reports the value before and after on stderr.
func setL2Fetch(d *gpu.Device) error {
	v := os.Getenv("GPUBENCH_L2_FETCH")
	if v == "" {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 128 {
		return fmt.Errorf("GPUBENCH_L2_FETCH=%q: want bytes from 0 to 128", v)
	}
	cd, ok := d.BackendDevice().(*cuda.Device)
	if !ok {
		return nil
	}
	ctx := cd.Context()
	old, err := ctx.Limit(cu.LimitMaxL2FetchGranularity)
	if err != nil {
		return err
	}
	if err := ctx.SetLimit(cu.LimitMaxL2FetchGranularity, int64(n)); err != nil {
		return err
	}
	now, err := ctx.Limit(cu.LimitMaxL2FetchGranularity)
	fmt.Fprintf(os.Stderr, "gpubench: L2 fetch granularity %d bytes, now %d (GPUBENCH_L2_FETCH=%d)\n", old, now, n)
	return err
}
