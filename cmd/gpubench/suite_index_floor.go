package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/go-gpu/gpu/backend/cuda/cu"
	"github.com/go-gpu/gpu/bench"
)

// The device's floor under the random gathers and scatters at /16k: raw kernels that do
// only the random accesses of a row, nothing else, as fast as the device lets them
// (eight independent accesses per thread, their addresses hashed from the element
// number in registers, so no index array is read), over cuMemAlloc memory of the row's
// sizes. A row's own work includes these accesses plus its indices and values, so its
// time can't go below its floor's: a target under the floor is under what the
// hardware allows.
//
//   - raw/index/take/float32/random/floor/16k: 2^26 random 4-byte loads from 2^28
//     float32 (Take's gathers; its indices, 512 MiB, and output, 256 MiB, not moved).
//   - raw/index/put/float32/random/floor/16k: 2^26 random 4-byte stores into 2^28
//     float32 (Put's scatters).
//   - raw/index/addat/float32/many/floor/16k: 2^26 red.global.add.f32 at random among
//     2^20 float32 (AddAt's updates).
//   - raw/index/bincount/many/bins/floor/16k: 2^26 red.global.add.u64 at random among
//     2^20 int64 counts (Bincount's updates).
//
// The hash is SplitMix64's finalizer (Steele, Lea & Flood 2014) of the element number
// times the golden ratio, masked to the array's power-of-two length: uniform, as the
// rows' indices are.

// floorPerThread is the random accesses each thread of a floor kernel makes.
const floorPerThread = 8

// rawFloorKernels are the floor kernels: the entry, the log2 of the element size, and
// the access of the element at address %rd7 ({k}: the element's number in the thread,
// 0 to 7, for a register %f{k} to load into).
var rawFloorKernels = []struct {
	entry  string
	shift  int
	access string
}{
	{"floor_load", 2, "ld.global.f32 %f{k}, [%rd7];"},
	{"floor_store", 2, "st.global.f32 [%rd7], 0f3F800000;"},
	{"floor_red_f32", 2, "red.global.add.f32 [%rd7], 0f3F800000;"},
	{"floor_red_u64", 3, "red.global.add.u64 [%rd7], 1;"},
}

// rawFloorModule returns the PTX of the floor kernels: parameters (a, out, n, mask);
// thread t does elements 8t to 8t+7 below n (a multiple of 8), element e accessing
// a[hash(e) & mask]; floor_load adds its eight values and stores the sum at out[t], so
// that the loads can't be dropped.
func rawFloorModule() string {
	var b strings.Builder
	b.WriteString(".version 7.0\n.target sm_80\n.address_size 64\n")
	for _, k := range rawFloorKernels {
		fmt.Fprintf(&b, `
.visible .entry %s(.param .u64 a, .param .u64 out, .param .u64 n, .param .u64 mask)
{
	.reg .pred %%p;
	.reg .b32 %%r<4>;
	.reg .b64 %%rd<10>;
	.reg .f32 %%f<%d>;
	ld.param.u64 %%rd1, [a];
	ld.param.u64 %%rd2, [out];
	ld.param.u64 %%rd3, [n];
	ld.param.u64 %%rd4, [mask];
	mov.u32 %%r1, %%ctaid.x;
	mov.u32 %%r2, %%ntid.x;
	mov.u32 %%r3, %%tid.x;
	cvt.u64.u32 %%rd5, %%r3;
	mad.wide.u32 %%rd5, %%r1, %%r2, %%rd5;
	shl.b64 %%rd6, %%rd5, 3;
	setp.ge.u64 %%p, %%rd6, %%rd3;
	@%%p ret;
`, k.entry, floorPerThread)
		for e := range floorPerThread {
			fmt.Fprintf(&b, `	add.u64 %%rd7, %%rd6, %d;
	mul.lo.u64 %%rd7, %%rd7, 0x9E3779B97F4A7C15U;
	shr.u64 %%rd8, %%rd7, 30;
	xor.b64 %%rd7, %%rd7, %%rd8;
	mul.lo.u64 %%rd7, %%rd7, 0xBF58476D1CE4E5B9U;
	shr.u64 %%rd8, %%rd7, 27;
	xor.b64 %%rd7, %%rd7, %%rd8;
	mul.lo.u64 %%rd7, %%rd7, 0x94D049BB133111EBU;
	shr.u64 %%rd8, %%rd7, 31;
	xor.b64 %%rd7, %%rd7, %%rd8;
	and.b64 %%rd7, %%rd7, %%rd4;
	shl.b64 %%rd7, %%rd7, %d;
	add.u64 %%rd7, %%rd1, %%rd7;
	`, e, k.shift)
			b.WriteString(strings.ReplaceAll(k.access, "{k}", fmt.Sprint(e)) + "\n")
		}
		if k.entry == "floor_load" {
			for e := 1; e < floorPerThread; e++ {
				fmt.Fprintf(&b, "\tadd.rn.f32 %%f0, %%f0, %%f%d;\n", e)
			}
			b.WriteString("\tshl.b64 %rd9, %rd5, 2;\n\tadd.u64 %rd9, %rd2, %rd9;\n\tst.global.f32 [%rd9], %f0;\n")
		}
		b.WriteString("\tret;\n}\n")
	}
	return b.String()
}

// rawFloorPTX is the module of the floor kernels.
var rawFloorPTX = rawFloorModule()

// registerRawFloor registers the floor "raw/" + prefix + "/floor" + LargeSuffix of the
// /16k row prefix + LargeSuffix (its Interleave group): entry over n = side^2/4
// elements into dstN(side) elements of 1<<shift bytes (a power of two).
func registerRawFloor(prefix, entry string, shift int, dstN func(side int) int64) {
	full := prefix + bench.LargeSuffix
	side := int64(bench.LargeSide)
	var (
		mod     cu.Module
		fn      cu.Function
		a, out  uint64
		n, mask int64
	)
	free := func(r *raw) error { return r.freeKernel(&mod, &a, &out) }
	registerRaw(rawSpec{
		Name:       "raw/" + prefix + "/floor" + bench.LargeSuffix,
		Interleave: full,
		Bytes:      (side * side / 4) << shift,
		SyncTimer:  true,
		Setup: func(r *raw, env *bench.Env) (err error) {
			side := env.Side()
			n = int64(side) * int64(side) / 4
			dn := dstN(side)
			if dn&(dn-1) != 0 || n%floorPerThread != 0 {
				return fmt.Errorf("%s: %d elements into %d: want a multiple of %d into a power of two", entry, n, dn, floorPerThread)
			}
			mask = dn - 1
			env.Bytes = n << shift
			if mod, err = r.ctx.ModuleLoadData(append([]byte(rawFloorPTX), 0)); err != nil {
				return err
			}
			defer func() {
				if err != nil {
					err = errors.Join(err, free(r))
				}
			}()
			if fn, err = r.ctx.ModuleGetFunction(mod, entry); err != nil {
				return err
			}
			if a, err = r.memAlloc(dn << shift); err != nil {
				return err
			}
			if err = r.ctx.MemsetAsync(cu.DevicePtr(a), 0x3f800000, 4, (dn<<shift)/4, r.s); err != nil {
				return err
			}
			if out, err = r.memAlloc(4 * (n / floorPerThread)); err != nil {
				return err
			}
			return r.syncStream()
		},
		Teardown: free,
		Body: func(r *raw) error {
			var blob [32]byte
			for i, v := range []uint64{a, out, uint64(n), uint64(mask)} {
				binary.LittleEndian.PutUint64(blob[8*i:], v)
			}
			threads := n / floorPerThread
			grid := uint32((threads + rawIndexBlock - 1) / rawIndexBlock)
			return r.ctx.LaunchKernel(fn, [3]uint32{grid, 1, 1}, [3]uint32{rawIndexBlock, 1, 1}, 0, r.s, blob[:], []int32{0, 8, 16, 24})
		},
	})
}

// registerRawFloors registers the floors of the random index rows (see above).
func registerRawFloors() {
	idx := func(side int) int64 { return int64(side) * int64(side) }
	bins := func(side int) int64 { return int64(side) * int64(side) / 256 }
	registerRawFloor("index/take/float32/random", "floor_load", 2, idx)
	registerRawFloor("index/put/float32/random", "floor_store", 2, idx)
	registerRawFloor("index/addat/float32/many", "floor_red_f32", 2, bins)
	registerRawFloor("index/bincount/many/bins", "floor_red_u64", 3, bins)
}

// freeKernel ends a raw kernel row: it waits for the raw stream, frees the nonzero
// cuMemAlloc addresses of ptrs and unloads *mod when it is loaded, zeroing each (so that
// a second call, after a failed Setup's, does nothing).
func (r *raw) freeKernel(mod *cu.Module, ptrs ...*uint64) error {
	err := r.syncStream()
	for _, p := range ptrs {
		if *p != 0 {
			err = errors.Join(err, r.memFree(*p))
			*p = 0
		}
	}
	if *mod != 0 {
		err = errors.Join(err, r.ctx.ModuleUnload(*mod))
		*mod = 0
	}
	return err
}
