package main

import (
	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/bench"
)

// Indexing and data movement (index.go, scatter.go, join.go), at Metal.jl's size (its
// 512000-element vector and 1000x512 matrix; one call plus a synchronize, Host mode)
// and at /16k (GPU mode: device events around back-to-back calls), where the sizes are
// those of the peers' anchors (../shared/peers/h200-2026-12-01-extra.md) for side
// 16384: side^2 = 2^28 elements, a quarter of them (2^26) indices or updates:
//
//   - index/take/float32/random: gpu.Take of n random int64 indices from a float32
//     vector (small: 512000 of 512000; /16k: 2^26 of 2^28). stride4: the indices
//     0, 4, 8, ... (small: 128000 of 512000). Bytes: 8 per index, 4 per element read
//     and 4 per element written. random/16k is sampled in turn (one Interleave group,
//     with its raw baseline and floor) with index/take/float32/random/<variant>/16k,
//     the same call under other Tuning.GatherVariant and GatherStream choices
//     (takeVariants; no peers).
//   - index/put/float32/random: gpu.Put of n random float32 values at random int64
//     indices into a float32 vector (small: 128000 into 512000; /16k: 2^26 into
//     2^28). Bytes: 8 per index, 4 per value read and 4 per element written.
//     random/16k is sampled in turn (with its raw baseline and floor) with
//     index/put/float32/random/<variant>/16k under other Tuning.PutVariant choices
//     (putVariants; no peers).
//   - index/addat/float32/8bins and many: gpu.AddAt of n float32 values at random
//     int64 indices into 8 bins, or into side^2/256 (2^20) bins (small: 512000 into 8
//     and 8192); the /deterministic variants with gpu.Deterministic (no peer). Bytes:
//     12 per update, and the bins read and written.
//   - index/bincount/many: gpu.Bincount of n random int64 values below the bin count
//     (as addat/many), which waits for their largest value first; /bins gives
//     gpu.Bins (no wait; no peer). Bytes: 8 per value and 8 per bin.
//   - index/concat/float32/axis0: gpu.Concatenate of two float32 vectors of half the
//     elements each (small: 2x256000; /16k: 2x2^27); axis1: of two float32 matrices
//     side by side (small: Metal.jl's 1000x512 twice; /16k: two (side/2)^2 =
//     8192^2). Bytes: read and written, 8 per element of the result. At /16k each is
//     sampled in turn (one Interleave group per axis) with the same call under other
//     Tuning.Concat choices, index/concat/float32/axisN/<variant>/16k (concatVariants;
//     on axis 0 with Axis0Kernel, the default there being the driver's copies), on
//     axis 1 with .../memcpy2d/16k, the driver's pitched copies (one cuMemcpy2DAsync
//     an input: the driver's own way to copy rows into a wider array), and
//     with .../dtod/16k, gpu.Copy of a contiguous float32 array of the result's
//     size (the driver's copy of the same bytes, whose "% copy" is the most a
//     concatenation of this size can show): no peers.
//
// Indices and values are drawn once in Setup (Generator, fixed seed); the inputs are
// larger than the L2 cache at /16k and the same in every call.
func registerIndexOps() {
	for _, large := range []bool{false, true} {
		registerTake(large, "random", "", 0, false)
		registerTake(large, "stride4", "", 0, false)
		registerPut(large, "", 0)
		for _, many := range []bool{false, true} {
			for _, det := range []bool{false, true} {
				registerAddAt(large, many, det)
			}
		}
		registerBincount(large, false)
		registerBincount(large, true)
		registerConcat(large, 0)
		registerConcat(large, 1)
	}
	for _, v := range takeVariants {
		registerTake(true, "random", v.name, v.variant, v.stream)
	}
	for _, v := range putVariants {
		registerPut(true, v.name, v.variant)
	}
	registerRawIndexOps()
	registerRawFloors()
	registerRawSMCopies()
}

// indexSizes returns the source elements and the index count of a benchmark.
func indexSizes(c *setupCtx, n4 bool) (src, n int) {
	if c.large {
		return c.side * c.side, c.side * c.side / 4
	}
	if n4 {
		return matElems, matElems / 4
	}
	return matElems, matElems
}

// randIndices returns n random int64 indices in [0, hi).
func randIndices(c *setupCtx, n, hi int) (*gpu.Array[int64], error) {
	a, err := newArr[int64](c, devMem, n)
	if err != nil {
		return nil, err
	}
	return a, gpu.RandIntInto(c.s(), c.g, a, 0, int64(hi))
}

// takeVariants are the /16k take rows' variants: Tuning.GatherVariant and
// GatherStream.
var takeVariants = []struct {
	name    string
	variant int
	stream  bool
}{{"v1", 1, false}, {"v2", 2, false}, {"v2cs", 2, true}}

// registerTake registers index/take/float32/<pattern>; with a variant name (large
// random only), the row index/take/float32/random/<name>/16k under
// Tuning.GatherVariant variant and GatherStream stream, sampled in turn with the row
// (its Interleave group), which then runs under the default tuning.
func registerTake(large bool, pattern, vname string, variant int, stream bool) {
	nom := nominalElems(large) / 4
	if !large && pattern == "random" {
		nom = matElems
	}
	name, group := "index/take/float32/"+pattern, ""
	if vname != "" {
		name += "/" + vname
		group = "index/take/float32/random" + bench.LargeSuffix
	}
	tuned := large && pattern == "random" // sets its tuning in each call
	registerOp(op{
		name: name, large: large, bytes: 16 * nom, raw: large && pattern == "random" && vname == "", interleave: group,
		setup: func(c *setupCtx) (func() error, int64, error) {
			srcN, n := indexSizes(c, pattern == "stride4")
			src, err := uniform(c, devMem, srcN)
			if err != nil {
				return nil, 0, err
			}
			var idx *gpu.Array[int64]
			if pattern == "random" {
				idx, err = randIndices(c, n, srcN)
			} else {
				idx, err = gpu.Arange[int64](c.s(), 0, int64(4*n), 4)
				if err == nil {
					c.k.add(idx.Free)
				}
			}
			if err != nil {
				return nil, 0, err
			}
			s, d := c.s(), c.d.dev
			if !tuned {
				return func() error {
					out, err := gpu.Take(s, src, idx)
					return freeing(err, out)
				}, 16 * int64(n), nil
			}
			// Sampled in turn with the variants: each call sets its tuning (an atomic
			// swap), the teardown restores the default.
			tu := gpu.DefaultTuning()
			if vname != "" {
				tu.GatherVariant, tu.GatherStream = variant, stream
			}
			c.k.add(func() error { _, err := d.SetTuning(gpu.DefaultTuning()); return err })
			return func() error {
				if _, err := d.SetTuning(tu); err != nil {
					return err
				}
				out, err := gpu.Take(s, src, idx)
				return freeing(err, out)
			}, 16 * int64(n), nil
		},
	})
}

// putVariants are the /16k put row's variants: Tuning.PutVariant.
var putVariants = []struct {
	name    string
	variant int
}{{"v1", 1}, {"v2", 2}}

// registerPut registers index/put/float32/random; with a variant name (large only),
// index/put/float32/random/<name>/16k under Tuning.PutVariant variant, sampled in turn
// with the /16k row (its Interleave group), which then runs under the default tuning.
func registerPut(large bool, vname string, variant int) {
	name, group := "index/put/float32/random", ""
	if vname != "" {
		name += "/" + vname
		group = "index/put/float32/random" + bench.LargeSuffix
	}
	registerOp(op{
		name: name, large: large, bytes: 16 * nominalElems(large) / 4, raw: large && vname == "", interleave: group,
		setup: func(c *setupCtx) (func() error, int64, error) {
			dstN, n := indexSizes(c, true)
			dst, err := uniform(c, devMem, dstN)
			if err != nil {
				return nil, 0, err
			}
			vals, err := uniform(c, devMem, n)
			if err != nil {
				return nil, 0, err
			}
			idx, err := randIndices(c, n, dstN)
			if err != nil {
				return nil, 0, err
			}
			s, d := c.s(), c.d.dev
			if !large {
				return func() error { return gpu.Put(s, dst, idx, vals) }, 16 * int64(n), nil
			}
			// Sampled in turn with the variants: each call sets its tuning (an atomic
			// swap), the teardown restores the default.
			tu := gpu.DefaultTuning()
			if vname != "" {
				tu.PutVariant = variant
			}
			c.k.add(func() error { _, err := d.SetTuning(gpu.DefaultTuning()); return err })
			return func() error {
				if _, err := d.SetTuning(tu); err != nil {
					return err
				}
				return gpu.Put(s, dst, idx, vals)
			}, 16 * int64(n), nil
		},
	})
}

// manyBins returns the bin count of the many-bins benchmarks: 8192, or side^2/256.
func manyBins(c *setupCtx) int {
	if c.large {
		return c.side * c.side / 256
	}
	return 8192
}

func registerAddAt(large, many, det bool) {
	name := "index/addat/float32/8bins"
	if many {
		name = "index/addat/float32/many"
	}
	if det {
		name += "/deterministic"
	}
	nomN := nominalElems(large) / 4
	if !large {
		nomN = matElems
	}
	registerOp(op{
		name: name, large: large, bytes: 12 * nomN, raw: large && many && !det,
		setup: func(c *setupCtx) (func() error, int64, error) {
			_, n := indexSizes(c, false)
			bins := 8
			if many {
				bins = manyBins(c)
			}
			dst, err := uniform(c, devMem, bins)
			if err != nil {
				return nil, 0, err
			}
			vals, err := uniform(c, devMem, n)
			if err != nil {
				return nil, 0, err
			}
			idx, err := randIndices(c, n, bins)
			if err != nil {
				return nil, 0, err
			}
			var opts []gpu.IndexOption
			if det {
				opts = append(opts, gpu.Deterministic())
			}
			s := c.s()
			return func() error { return gpu.AddAt(s, dst, idx, vals, opts...) }, 12*int64(n) + 8*int64(bins), nil
		},
	})
}

func registerBincount(large, fixed bool) {
	name := "index/bincount/many"
	if fixed {
		name += "/bins"
	}
	nomN := nominalElems(large) / 4
	if !large {
		nomN = matElems
	}
	registerOp(op{
		name: name, large: large, bytes: 8 * nomN, raw: large && fixed,
		setup: func(c *setupCtx) (func() error, int64, error) {
			_, n := indexSizes(c, false)
			bins := manyBins(c)
			x, err := randIndices(c, n, bins)
			if err != nil {
				return nil, 0, err
			}
			var opts []gpu.IndexOption
			if fixed {
				opts = append(opts, gpu.Bins(bins))
			}
			s := c.s()
			return func() error {
				out, err := gpu.Bincount(bg, s, x, bins, opts...)
				return freeing(err, out)
			}, 8*int64(n) + 8*int64(bins), nil
		},
	})
}

// concatShape returns the shape of each of the two arrays concatenated.
func concatShape(large bool, side, axis int) []int {
	switch {
	case axis == 0 && large:
		return []int{side * side / 2}
	case axis == 0:
		return []int{matElems / 2}
	case large:
		return []int{side / 2, side / 2}
	}
	return []int{matRows, matCols}
}

// concatVariants are the Tuning.Concat choices of the /16k concat rows' variants: the
// first kernel as it was the default on 2026-12-02 (rows r and r + gridDim.y, 32
// blocks a multiprocessor), and the tiled kernel (Variant 2) with one tile per block:
// of one row by 4 vectors a thread, of two rows, of 8 vectors a thread, evict-first;
// and with 32 blocks a multiprocessor looping over the tiles of rows.
var concatVariants = []struct {
	name string
	c    gpu.ConcatTuning
}{
	{"v1", gpu.ConcatTuning{Variant: 1, Rows: 2, BlocksPerSM: 32, Items: 4, RowsKernel: true}},
	{"v2", gpu.ConcatTuning{Variant: 2, Rows: 1, BlocksPerSM: 0, Items: 4, RowsKernel: true}},
	{"v2r2", gpu.ConcatTuning{Variant: 2, Rows: 2, BlocksPerSM: 0, Items: 4, RowsKernel: true}},
	{"v2i8", gpu.ConcatTuning{Variant: 2, Rows: 1, BlocksPerSM: 0, Items: 8, RowsKernel: true}},
	{"v2cs", gpu.ConcatTuning{Variant: 2, Rows: 1, BlocksPerSM: 0, Items: 4, Stream: true, RowsKernel: true}},
	{"v2b32", gpu.ConcatTuning{Variant: 2, Rows: 1, BlocksPerSM: 32, Items: 4, RowsKernel: true}},
}

func registerConcat(large bool, axis int) {
	name := "index/concat/float32/axis" + string(rune('0'+axis))
	group := ""
	if large {
		group = name + bench.LargeSuffix
	}
	reg := func(variant string, tune func(*gpu.ConcatTuning)) {
		full := name
		if variant != "" {
			full += "/" + variant
		}
		registerOp(op{
			name: full, large: large, interleave: group,
			bytes: 16 * int64(elems(concatShape(large, bench.LargeSide, axis))),
			setup: func(c *setupCtx) (func() error, int64, error) {
				shape := concatShape(c.large, c.side, axis)
				a, err := uniform(c, devMem, shape...)
				if err != nil {
					return nil, 0, err
				}
				b, err := uniform(c, devMem, shape...)
				if err != nil {
					return nil, 0, err
				}
				parts := []*gpu.Array[float32]{a, b}
				s, d := c.s(), c.d.dev
				bytes := 16 * int64(elems(shape))
				if variant == "dtod" {
					whole, err := gpu.Concatenate(s, parts, axis)
					if err != nil {
						return nil, 0, err
					}
					c.k.add(whole.Free)
					return func() error {
						out, err := gpu.Clone(s, whole)
						return freeing(err, out)
					}, bytes, nil
				}
				if group == "" {
					return func() error {
						out, err := gpu.Concatenate(s, parts, axis)
						return freeing(err, out)
					}, bytes, nil
				}
				// Sampled in turn with the variants: each call sets its tuning (an
				// atomic swap), the group's teardown restores the default.
				tu := gpu.DefaultTuning()
				if tune != nil {
					tune(&tu.Concat)
				}
				c.k.add(func() error { _, err := d.SetTuning(gpu.DefaultTuning()); return err })
				return func() error {
					if _, err := d.SetTuning(tu); err != nil {
						return err
					}
					out, err := gpu.Concatenate(s, parts, axis)
					return freeing(err, out)
				}, bytes, nil
			},
		})
	}
	reg("", nil)
	if !large {
		return
	}
	for _, v := range concatVariants {
		reg(v.name, func(ct *gpu.ConcatTuning) {
			*ct = v.c
			ct.Axis0Kernel = axis == 0
		})
	}
	if axis == 1 {
		reg("memcpy2d", func(ct *gpu.ConcatTuning) { ct.RowsKernel = false })
	}
	reg("dtod", nil)
}
