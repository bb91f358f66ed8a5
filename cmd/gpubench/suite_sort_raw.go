package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/go-gpu/gpu/backend/cuda/cu"
	"github.com/go-gpu/gpu/bench"
)

// The raw driver floor of array/searchsorted/2^26_in_2^24/16k: what any search must at
// least do, in the simplest hand-written PTX kernel. Whatever its upper levels (a
// binary search's, a tree's), a search of a query in the sorted array ends by reading
// the array itself where the query lands: one 32-byte sector (8 float32), at a random
// place of a 64 MiB array (more than the H200's 50 MiB L2) for uniform queries. The
// floor kernel skips the upper levels: it guesses where a uniform query lands
// (interpolation, j = floor(v*m) rounded down to 8), reads those 8 keys as two 16-byte
// vectors, counts the keys below v and writes the int64 j + count, reading the query
// and writing the index as SearchSorted does. The sectors it reads are as random as a
// search's last ones, but its result is the answer only where the answer lies in the
// sector guessed (a few thousand keys off at 2^24): a floor for timing, not a search.
// So "vs raw" near 1 says that the row is at the cost of its random sector reads on
// this device, which no search layout avoids.
//
//   - raw/array/searchsorted/2^26_in_2^24/16k: the same sizes as the row (scaled with
//     the side: m = side^2/16, n = side^2/4), keys uniform in [0, 1) sorted on the
//     host, queries uniform, fixed seeds; 12 bytes a query, as the row counts.

// rawSearchPTX is the floor kernel's module: entry searchsorted_sector(out, a, q, n,
// m), out int64[n], a float32[m] sorted (m a multiple of 8, at least 8), q float32[n].
var rawSearchPTX = rawSearchModule()

func rawSearchModule() string {
	var count strings.Builder
	for k := range 8 {
		// key k of the sector (%f3 to %f10) below v (%f1): one more in %r4
		fmt.Fprintf(&count, "\tsetp.lt.f32 %%p2, %%f%d, %%f1;\n\tselp.u32 %%r5, 1, 0, %%p2;\n\tadd.u32 %%r4, %%r4, %%r5;\n", k+3)
	}
	return `
.version 7.0
.target sm_80
.address_size 64

.visible .entry searchsorted_sector(.param .u64 out, .param .u64 a, .param .u64 q, .param .u64 n, .param .u64 m)
{
	.reg .pred %p<3>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<12>;
	.reg .f32 %f<11>;
	ld.param.u64 %rd1, [out];
	ld.param.u64 %rd2, [a];
	ld.param.u64 %rd3, [q];
	ld.param.u64 %rd4, [n];
	ld.param.u64 %rd5, [m];
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	cvt.u64.u32 %rd6, %r3;
	mad.wide.u32 %rd6, %r1, %r2, %rd6;
	setp.ge.u64 %p1, %rd6, %rd4;
	@%p1 ret;
	// v = q[i]; j = min(floor(v*m), m-8) & ~7 (cvt saturates: a NaN or a negative v
	// gives 0)
	shl.b64 %rd7, %rd6, 2;
	add.u64 %rd7, %rd3, %rd7;
	ld.global.nc.f32 %f1, [%rd7];
	cvt.rn.f32.u64 %f2, %rd5;
	mul.rn.f32 %f2, %f1, %f2;
	cvt.rzi.u64.f32 %rd8, %f2;
	sub.u64 %rd9, %rd5, 8;
	min.u64 %rd8, %rd8, %rd9;
	and.b64 %rd8, %rd8, -8;
	// the sector: a[j .. j+8), and the count of its keys below v
	shl.b64 %rd9, %rd8, 2;
	add.u64 %rd9, %rd2, %rd9;
	ld.global.nc.v4.f32 {%f3, %f4, %f5, %f6}, [%rd9];
	ld.global.nc.v4.f32 {%f7, %f8, %f9, %f10}, [%rd9+16];
	mov.u32 %r4, 0;
` + count.String() + `	cvt.u64.u32 %rd10, %r4;
	add.u64 %rd10, %rd8, %rd10;
	shl.b64 %rd11, %rd6, 3;
	add.u64 %rd11, %rd1, %rd11;
	st.global.u64 [%rd11], %rd10;
	ret;
}
`
}

// rawSearchBlock is the floor kernel's block size.
const rawSearchBlock = 256

// rawSearchSizes returns the row's sizes at a side: m sorted keys, n queries.
func rawSearchSizes(side int) (m, n int64) {
	s := int64(side) * int64(side)
	return max(8, s/16&^7), max(1, s/4)
}

// rawSearchKeys returns m sorted uniform float32 keys and n uniform queries (fixed
// seeds), as little-endian bytes.
func rawSearchKeys(m, n int64) (keys, queries []byte) {
	rng := rand.New(rand.NewPCG(benchSeed, 21))
	a := make([]float32, m)
	for i := range a {
		a[i] = rng.Float32()
	}
	slices.Sort(a)
	keys = make([]byte, 4*m)
	for i, v := range a {
		binary.LittleEndian.PutUint32(keys[4*i:], math.Float32bits(v))
	}
	queries = make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(queries[4*i:], math.Float32bits(rng.Float32()))
	}
	return keys, queries
}

// registerRawSearch registers the floor (see above).
func registerRawSearch() {
	var (
		mod          cu.Module
		fn           cu.Function
		out, a, q    uint64
		m, n         int64
		freeAll      func(r *raw) error
		full         = "array/searchsorted/2^26_in_2^24" + bench.LargeSuffix
		side         = bench.LargeSide
		_, nominalNs = rawSearchSizes(side)
	)
	freeAll = func(r *raw) error {
		err := r.syncStream()
		for _, p := range []*uint64{&out, &a, &q} {
			if *p != 0 {
				err = errors.Join(err, r.memFree(*p))
				*p = 0
			}
		}
		if mod != 0 {
			err = errors.Join(err, r.ctx.ModuleUnload(mod))
			mod = 0
		}
		return err
	}
	registerRaw(rawSpec{
		Name:       "raw/" + full,
		Interleave: full,
		Bytes:      12 * nominalNs,
		SyncTimer:  true,
		Setup: func(r *raw, env *bench.Env) (err error) {
			m, n = rawSearchSizes(env.Side())
			env.Bytes = 12 * n
			if mod, err = r.ctx.ModuleLoadData(append([]byte(rawSearchPTX), 0)); err != nil {
				return err
			}
			defer func() {
				if err != nil {
					err = errors.Join(err, freeAll(r))
				}
			}()
			if fn, err = r.ctx.ModuleGetFunction(mod, "searchsorted_sector"); err != nil {
				return err
			}
			if out, err = r.memAlloc(8 * n); err != nil {
				return err
			}
			if a, err = r.memAlloc(4 * m); err != nil {
				return err
			}
			if q, err = r.memAlloc(4 * n); err != nil {
				return err
			}
			keys, queries := rawSearchKeys(m, n)
			r.pinGo(keys)
			r.pinGo(queries)
			if err = r.copyHtoD(a, keys); err != nil {
				return err
			}
			return r.copyHtoD(q, queries)
		},
		Teardown: freeAll,
		Body: func(r *raw) error {
			var blob [40]byte
			for i, v := range []uint64{out, a, q, uint64(n), uint64(m)} {
				binary.LittleEndian.PutUint64(blob[8*i:], v)
			}
			grid := uint32((n + rawSearchBlock - 1) / rawSearchBlock)
			return r.ctx.LaunchKernel(fn, [3]uint32{grid, 1, 1}, [3]uint32{rawSearchBlock, 1, 1}, 0, r.s, blob[:], []int32{0, 8, 16, 24, 32})
		},
	})
}
