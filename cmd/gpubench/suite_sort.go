package main

import (
	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/bench"
)

// Sorting and selection, with the peers' figures of peers/h200-2026-12-01-extra.md
// (peers/peers.py measures the same keys):
//
//   - array/sort/<T>/<n>/16k and array/argsort/<T>/<n>/16k: gpu.Sort and gpu.Argsort of
//     a 1-D array, float32 uniform in [0, 1), int32 uniform over its range, float64
//     uniform; n is 2^28 (2^27 for float64) at a side of 16384, scaled with the side's
//     square on the CPU backend;
//   - array/sort/float32/512000+sync: Metal.jl's vector of 512000 float32, one call and
//     a synchronize on the host clock;
//   - array/sort/rows/float32/16384x16384/16k: every row of the (side, side) matrix;
//   - array/topk/100/float32/2^24/16k: gpu.TopK, the 100 largest of 2^24 float32;
//   - array/unique/int64/2^26/2^20_distinct/16k: gpu.Unique of 2^26 int64 uniform in
//     [0, 2^20) (values only; it waits for the count inside the call);
//   - array/searchsorted/2^26_in_2^24/16k: gpu.SearchSorted (left) of 2^26 uniform
//     float32 queries in 2^24 sorted uniform float32, against the raw driver floor of
//     its random sector reads (suite_sort_raw.go);
//   - array/median/float32/2^24/16k and array/nanmedian/float32/2^24/16k: gpu.Median
//     and gpu.NanMedian (float32 result) of 2^24 uniform float32, 1/64 of them NaN for
//     NanMedian.
//
// Sizes scale with the large side (side^2 / 2^28 of the named size). Bytes are what
// one call must read and write once: the keys in and out (and argsort's int64 indices
// out), TopK's input, Unique's input and its values out, SearchSorted's queries in and
// indices out, Median's input.

// sortScale returns n (named for a side of 16384) at the run's side.
func sortScale(c *setupCtx, n int64) int {
	s := int64(c.side)
	return int(max(1, n*s*s/(bench.LargeSide*bench.LargeSide)))
}

func registerSort() {
	registerRawSearch()
	for _, st := range []struct {
		name  string
		n     int64
		arg   bool
		mk    func(c *setupCtx, n int) (any, error)
		size  int64
		float bool
	}{
		{"sort/float32/2^28", 1 << 28, false, sortF32, 4, true},
		{"sort/int32/2^28", 1 << 28, false, sortI32, 4, false},
		{"argsort/float32/2^28", 1 << 28, true, sortF32, 4, true},
		{"argsort/int32/2^28", 1 << 28, true, sortI32, 4, false},
		{"sort/float64/2^27", 1 << 27, false, sortF64, 8, true},
		{"argsort/float64/2^27", 1 << 27, true, sortF64, 8, true},
	} {
		out := st.size
		if st.arg {
			out = 8
		}
		registerOp(op{
			name: "array/" + st.name, large: true, bytes: st.n * (st.size + out),
			setup: func(c *setupCtx) (func() error, int64, error) {
				n := sortScale(c, st.n)
				x, err := st.mk(c, n)
				if err != nil {
					return nil, 0, err
				}
				return sortBody(c.s(), x, st.arg), int64(n) * (st.size + out), nil
			},
		})
	}
	registerOp(op{
		name: "array/sort/float32/512000+sync", bytes: 8 * matElems,
		setup: func(c *setupCtx) (func() error, int64, error) {
			x, err := uniform(c, devMem, matElems)
			if err != nil {
				return nil, 0, err
			}
			return sortBody(c.s(), x, false), 8 * matElems, nil
		},
	})
	registerOp(op{
		name: "array/sort/rows/float32/16384x16384", large: true, bytes: 8 * bench.LargeSide * bench.LargeSide,
		setup: func(c *setupCtx) (func() error, int64, error) {
			x, err := uniform(c, devMem, c.side, c.side)
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			return func() error {
				y, err := gpu.Sort(s, x, -1)
				return freeing(err, y)
			}, 8 * int64(c.side) * int64(c.side), nil
		},
	})
	registerOp(op{
		name: "array/topk/100/float32/2^24", large: true, bytes: 4 << 24,
		setup: func(c *setupCtx) (func() error, int64, error) {
			n := sortScale(c, 1<<24)
			x, err := uniform(c, devMem, n)
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			return func() error {
				v, i, err := gpu.TopK(s, x, min(100, n), -1)
				return freeing(err, v, i)
			}, 4 * int64(n), nil
		},
	})
	registerOp(op{
		name: "array/unique/int64/2^26/2^20_distinct", large: true, bytes: 8<<26 + 8<<20,
		setup: func(c *setupCtx) (func() error, int64, error) {
			n := sortScale(c, 1<<26)
			x, err := newArr[int64](c, devMem, n)
			if err != nil {
				return nil, 0, err
			}
			if err := gpu.RandIntInto(c.s(), c.g, x, 0, 1<<20); err != nil {
				return nil, 0, err
			}
			s := c.s()
			return func() error {
				r, err := gpu.Unique(bg, s, x)
				if err == nil {
					r.Free()
				}
				return err
			}, 8*int64(n) + 8<<20, nil
		},
	})
	registerOp(op{
		name: "array/searchsorted/2^26_in_2^24", large: true, bytes: 12 << 26, raw: true,
		setup: func(c *setupCtx) (func() error, int64, error) {
			m, n := sortScale(c, 1<<24), sortScale(c, 1<<26)
			a0, err := uniform(c, devMem, m)
			if err != nil {
				return nil, 0, err
			}
			a, err := gpu.Sort(c.s(), a0, -1)
			if err != nil {
				return nil, 0, err
			}
			c.k.add(a.Free)
			q, err := uniform(c, devMem, n)
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			return func() error {
				i, err := gpu.SearchSorted(s, a, q, gpu.SideLeft)
				return freeing(err, i)
			}, 12 * int64(n), nil
		},
	})
	for _, nan := range []bool{false, true} {
		name, f := "array/median/float32/2^24", gpu.Median[float32, float32]
		if nan {
			name, f = "array/nanmedian/float32/2^24", gpu.NanMedian[float32, float32]
		}
		registerOp(op{
			name: name, large: true, bytes: 4 << 24,
			setup: func(c *setupCtx) (func() error, int64, error) {
				n := sortScale(c, 1<<24)
				x, err := uniform(c, devMem, n)
				if err != nil {
					return nil, 0, err
				}
				if nan {
					y, err := gpu.Eval[float32](c.s(), "where(x < 0.015625, nan, x)", gpu.Vars{"x": x})
					if err != nil {
						return nil, 0, err
					}
					c.k.add(y.Free)
					x = y
				}
				s := c.s()
				return func() error {
					m, err := f(s, x)
					return freeing(err, m)
				}, 4 * int64(n), nil
			},
		})
	}
}

func sortF32(c *setupCtx, n int) (any, error) { return uniform(c, devMem, n) }

func sortF64(c *setupCtx, n int) (any, error) {
	a, err := newArr[float64](c, devMem, n)
	if err != nil {
		return nil, err
	}
	return a, gpu.RandInto(c.s(), c.g, a)
}

func sortI32(c *setupCtx, n int) (any, error) {
	a, err := newArr[int32](c, devMem, n)
	if err != nil {
		return nil, err
	}
	return a, gpu.RandBitsInto(c.s(), c.g, a)
}

// sortBody returns a call of Sort (or Argsort) of x.
func sortBody(s *gpu.Stream, x any, arg bool) func() error {
	switch a := x.(type) {
	case *gpu.Array[float32]:
		return sortCall(s, a, arg)
	case *gpu.Array[float64]:
		return sortCall(s, a, arg)
	case *gpu.Array[int32]:
		return sortCall(s, a, arg)
	}
	panic("sortBody: unexpected array type")
}

func sortCall[T gpu.Elem](s *gpu.Stream, a *gpu.Array[T], arg bool) func() error {
	if arg {
		return func() error {
			i, err := gpu.Argsort(s, a, -1)
			return freeing(err, i)
		}
	}
	return func() error {
		y, err := gpu.Sort(s, a, -1)
		return freeing(err, y)
	}
}
