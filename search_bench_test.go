package gpu_test

import (
	"context"
	"testing"

	"github.com/go-gpu/gpu"
)

// Metal.jl's iteration group: findall (Nonzero) of a random bool vector and of the odd
// elements of an Int64 vector in [-10, 10] (a predicate), findfirst of both, and
// logical indexing (Extract of a float32 vector with a random bool mask), at S (512000
// elements) and L (2^28). GB/s counts the flags read twice (count and scatter passes)
// plus the indices written. Acceptance: findall at L faster than PyTorch (827 us for
// bool), S at most half the better peer's time.
func BenchmarkFindall(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	ctx := context.Background()
	sizes := []struct {
		name string
		n    int
	}{{"S", 512000}}
	if scBenchLarge(d) {
		sizes = append(sizes, struct {
			name string
			n    int
		}{"L", 1 << 28})
	}
	for _, sz := range sizes {
		n := sz.n
		b.Run("bool/"+sz.name, func(b *testing.B) {
			u, err := gpu.Rand[float32](s, gpu.NewGenerator(5), n)
			if err != nil {
				b.Fatal(err)
			}
			mask, err := gpu.Eval[bool](s, "u < 0.5", gpu.Vars{"u": u})
			u.Free()
			if err != nil {
				b.Fatal(err)
			}
			defer mask.Free()
			cnt, err := gpu.CountNonzero(ctx, s, mask)
			if err != nil {
				b.Fatal(err)
			}
			scRun(b, s, int64(2*n+8*cnt), func() (interface{ Free() error }, error) { return gpu.Nonzero(ctx, s, mask) })
		})
		b.Run("int/"+sz.name, func(b *testing.B) {
			x, err := gpu.RandInt[int64](s, gpu.NewGenerator(6), -10, 11, n)
			if err != nil {
				b.Fatal(err)
			}
			defer x.Free()
			scRun(b, s, int64(8*n+n+2*n), func() (interface{ Free() error }, error) {
				return gpu.NonzeroWhere(ctx, s, "x % 2 != 0", gpu.Vars{"x": x})
			})
		})
	}
}

// BenchmarkFindfirst is Metal.jl's findfirst: the first true of a random bool vector,
// and the first odd element of an Int64 vector, to the host.
func BenchmarkFindfirst(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	ctx := context.Background()
	ns := map[string]int{"S": 512000}
	if scBenchLarge(d) {
		ns["L"] = 1 << 28
	}
	for _, name := range []string{"S", "L"} {
		n, ok := ns[name]
		if !ok {
			continue
		}
		b.Run("bool/"+name, func(b *testing.B) {
			u, err := gpu.Rand[float32](s, gpu.NewGenerator(7), n)
			if err != nil {
				b.Fatal(err)
			}
			mask, err := gpu.Eval[bool](s, "u < 0.5", gpu.Vars{"u": u})
			u.Free()
			if err != nil {
				b.Fatal(err)
			}
			defer mask.Free()
			scRun(b, s, 0, func() (interface{ Free() error }, error) {
				_, err := gpu.FindFirst(ctx, s, mask)
				return scNoFree{}, err
			})
		})
		b.Run("int/"+name, func(b *testing.B) {
			x, err := gpu.RandInt[int64](s, gpu.NewGenerator(8), -10, 11, n)
			if err != nil {
				b.Fatal(err)
			}
			defer x.Free()
			scRun(b, s, 0, func() (interface{ Free() error }, error) {
				_, err := gpu.FindFirstWhere(ctx, s, "x % 2 != 0", gpu.Vars{"x": x})
				return scNoFree{}, err
			})
		})
	}
}

// BenchmarkLogical is Metal.jl's iteration/logical: v[mask] of a float32 vector and a
// random bool mask.
func BenchmarkLogical(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	ctx := context.Background()
	ns := map[string]int{"S": 512000}
	if scBenchLarge(d) {
		ns["L"] = 1 << 28
	}
	for _, name := range []string{"S", "L"} {
		n, ok := ns[name]
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) {
			v, mask := logicalInputs(b, s, n)
			defer v.Free()
			defer mask.Free()
			cnt, err := gpu.CountNonzero(ctx, s, mask)
			if err != nil {
				b.Fatal(err)
			}
			scRun(b, s, int64(2*n+4*n+4*cnt), func() (interface{ Free() error }, error) { return gpu.Extract(ctx, s, mask, v) })
		})
	}
}

// logicalInputs returns Metal.jl's logical inputs: n uniform float32 values and the mask
// of those below 0.5.
func logicalInputs(b *testing.B, s *gpu.Stream, n int) (*gpu.Array[float32], *gpu.Array[bool]) {
	v, err := gpu.Rand[float32](s, gpu.NewGenerator(9), n)
	if err != nil {
		b.Fatal(err)
	}
	mask, err := gpu.Eval[bool](s, "v < 0.5", gpu.Vars{"v": v})
	if err != nil {
		b.Fatal(err)
	}
	return v, mask
}

// BenchmarkCompactWaits times Metal.jl's logical and findall at S (512000 elements) plus
// a synchronize with the output allocated before the count (one host wait, the count
// from the scatter, the status from the stream's pool: eager) and after it (a zeroed
// status, two waits: lazy, the count read through a pinned word or, pageable, into Go
// memory: the path before session 6), in turns.
func BenchmarkCompactWaits(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	ctx := context.Background()
	v, mask := logicalInputs(b, s, 512000)
	defer v.Free()
	defer mask.Free()
	ops := []struct {
		name string
		f    func() (interface{ Free() error }, error)
	}{
		{"logical", func() (interface{ Free() error }, error) { return gpu.Extract(ctx, s, mask, v) }},
		{"findall/bool", func() (interface{ Free() error }, error) { return gpu.Nonzero(ctx, s, mask) }},
	}
	for _, op := range ops {
		for _, eager := range []bool{true, false} {
			for _, pinned := range []bool{true, false} {
				name, max := op.name+"/eager", int64(4<<20)
				if !eager {
					name, max = op.name+"/lazy", 0
				}
				if !pinned {
					name += "/pageable"
				}
				b.Run(name, func(b *testing.B) {
					defer gpu.SetCompactEagerMax(s.Device(), gpu.SetCompactEagerMax(s.Device(), max))
					defer gpu.SetReadPinned(s.Device(), gpu.SetReadPinned(s.Device(), pinned))
					scRun(b, s, 0, op.f)
				})
			}
		}
	}
}

// BenchmarkScalarReads is Metal.jl's iteration/scalar: ten Array.At round trips of a
// float32 device array, through a pinned word (pinned) or into Go memory (pageable).
func BenchmarkScalarReads(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	ctx := context.Background()
	v, err := gpu.Rand[float32](s, gpu.NewGenerator(9), 512000)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Free()
	for _, pinned := range []bool{true, false} {
		name := "pinned"
		if !pinned {
			name = "pageable"
		}
		b.Run(name, func(b *testing.B) {
			defer gpu.SetReadPinned(s.Device(), gpu.SetReadPinned(s.Device(), pinned))
			scRun(b, s, 0, func() (interface{ Free() error }, error) {
				for i := range 10 {
					if _, err := v.At(ctx, i); err != nil {
						return nil, err
					}
				}
				return scNoFree{}, nil
			})
		})
	}
}
