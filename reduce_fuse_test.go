package gpu_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/internal/testenv"
)

// The fused one-launch form of split reductions (kernel.FuseReduce) against the two
// launches it replaces, on the PTX simulator behind the fake CUDA device: bitwise the
// same results, the stream's ticket counters back to zero after every launch, and
// repeated launches identical.

func rawBytes[T any](v []T) []byte {
	if len(v) == 0 {
		return nil
	}
	return slices.Clone(unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*int(unsafe.Sizeof(v[0]))))
}

type fuseOp struct {
	name string
	run  func(t *testing.T, s *gpu.Stream, o []gpu.ReduceOption) []byte
}

// fuseOps returns the reductions to compare over x (float32 with ties), nx (x with
// NaNs), d (float64), i (int32) and b (bool), all of one shape.
func fuseOps(x, nx *gpu.Array[float32], d *gpu.Array[float64], i *gpu.Array[int32], b *gpu.Array[bool]) []fuseOp {
	one := func(f func(*gpu.Stream, []gpu.ReduceOption) ([]byte, error)) func(*testing.T, *gpu.Stream, []gpu.ReduceOption) []byte {
		return func(t *testing.T, s *gpu.Stream, o []gpu.ReduceOption) []byte {
			t.Helper()
			r, err := f(s, o)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	vals := func(r any, err error) ([]byte, error) {
		if err != nil {
			return nil, err
		}
		switch a := r.(type) {
		case *gpu.Array[float32]:
			defer a.Free()
			v, err := a.ToSlice(bg)
			return rawBytes(v), err
		case *gpu.Array[float64]:
			defer a.Free()
			v, err := a.ToSlice(bg)
			return rawBytes(v), err
		case *gpu.Array[int64]:
			defer a.Free()
			v, err := a.ToSlice(bg)
			return rawBytes(v), err
		case *gpu.Array[bool]:
			defer a.Free()
			v, err := a.ToSlice(bg)
			return rawBytes(v), err
		}
		return nil, fmt.Errorf("result of type %T", r)
	}
	find := func(v *gpu.Array[float32], ix *gpu.Array[int64], err error) ([]byte, error) {
		if err != nil {
			return nil, err
		}
		a, err := vals(v, nil)
		if err != nil {
			return nil, err
		}
		c, err := vals(ix, nil)
		return append(a, c...), err
	}
	return []fuseOp{
		{"sum f32", one(func(s *gpu.Stream, o []gpu.ReduceOption) ([]byte, error) { return vals(gpu.Sum[float32](s, x, o...)) })},
		{"sum f64", one(func(s *gpu.Stream, o []gpu.ReduceOption) ([]byte, error) { return vals(gpu.Sum[float64](s, d, o...)) })},
		{"sum f32 in f64", one(func(s *gpu.Stream, o []gpu.ReduceOption) ([]byte, error) { return vals(gpu.Sum[float64](s, x, o...)) })},
		{"mean f32", one(func(s *gpu.Stream, o []gpu.ReduceOption) ([]byte, error) { return vals(gpu.Mean[float32](s, x, o...)) })},
		{"mean f64 of int32", one(func(s *gpu.Stream, o []gpu.ReduceOption) ([]byte, error) { return vals(gpu.Mean[float64](s, i, o...)) })},
		{"sum int32 in int64", one(func(s *gpu.Stream, o []gpu.ReduceOption) ([]byte, error) { return vals(gpu.Sum[int64](s, i, o...)) })},
		{"prod f64", one(func(s *gpu.Stream, o []gpu.ReduceOption) ([]byte, error) { return vals(gpu.Prod[float64](s, d, o...)) })},
		{"min nan", one(func(s *gpu.Stream, o []gpu.ReduceOption) ([]byte, error) { return vals(gpu.Min(s, nx, o...)) })},
		{"max nan", one(func(s *gpu.Stream, o []gpu.ReduceOption) ([]byte, error) { return vals(gpu.Max(s, nx, o...)) })},
		{"max", one(func(s *gpu.Stream, o []gpu.ReduceOption) ([]byte, error) { return vals(gpu.Max(s, x, o...)) })},
		{"all", one(func(s *gpu.Stream, o []gpu.ReduceOption) ([]byte, error) { return vals(gpu.All(s, b, o...)) })},
		{"count", one(func(s *gpu.Stream, o []gpu.ReduceOption) ([]byte, error) { return vals(gpu.Count(s, b, o...)) })},
		{"x*x+d", one(func(s *gpu.Stream, o []gpu.ReduceOption) ([]byte, error) {
			return vals(gpu.MapReduce[float64](s, "float64(x*x) + d", gpu.Vars{"x": x, "d": d}, gpu.OpSum, o...))
		})},
		{"findmax ties", one(func(s *gpu.Stream, o []gpu.ReduceOption) ([]byte, error) { return find(gpu.FindMax(s, x, o...)) })},
		{"findmin nan", one(func(s *gpu.Stream, o []gpu.ReduceOption) ([]byte, error) { return find(gpu.FindMin(s, nx, o...)) })},
		{"argmax nan", one(func(s *gpu.Stream, o []gpu.ReduceOption) ([]byte, error) { return vals(gpu.ArgMax(s, nx, o...)) })},
		{"argmin f64", one(func(s *gpu.Stream, o []gpu.ReduceOption) ([]byte, error) { return vals(gpu.ArgMin(s, d, o...)) })},
	}
}

func checkCountersZero(t *testing.T, s *gpu.Stream, what string) {
	t.Helper()
	cnt, err := gpu.ReduceCounters(s)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cnt {
		if c != 0 {
			t.Fatalf("%s: ticket counter %d is %d after the launch", what, i, c)
		}
	}
}

func TestReduceFused(t *testing.T) {
	sd, err := simGPU()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("sim", func(t *testing.T) { testReduceFused(t, sd) })
	// And on a GPU where there is one: the same comparisons with the real memory model.
	if cd, err := gpu.OpenBackend("cuda", 0); err == nil {
		t.Run("cuda", func(t *testing.T) { testReduceFused(t, cd) })
	} else if !errors.Is(err, gpu.ErrNoDevice) {
		t.Fatal(err)
	}
}

func testReduceFused(t *testing.T, d *gpu.Device) {
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	smallFusedSplits(t, d)
	rng := rand.New(rand.NewPCG(31, 32))
	type tc struct {
		shape []int
		axes  [][]int
	}
	cases := []tc{
		{[]int{9001}, [][]int{nil}},
		{[]int{64, 1000}, [][]int{nil, {0}}},
		{[]int{3001, 3}, [][]int{{0}}},
		{[]int{2000, 40}, [][]int{{0}}},
		{[]int{3, 3001}, [][]int{{1}}}, // a final pass of 192 threads in blocks of 256
		{[]int{5, 2, 1500}, [][]int{{0, 2}, {2}}},
	}
	if testenv.Race {
		cases = cases[:3]
	}
	fusedPlans, splitPlans := 0, 0
	var notFused []string
	for _, idx64 := range []bool{false, true} {
		if idx64 && testenv.Race {
			continue
		}
		gpu.SetReduceIndex64(d, idx64)
		for _, c := range cases {
			n := 1
			for _, v := range c.shape {
				n *= v
			}
			xs := randVals[float32](rng, n)
			for k := range xs {
				xs[k] = float32(math.Round(float64(xs[k]) * 2)) // many ties
			}
			nxs := slices.Clone(xs)
			nxs[n-3], nxs[n/2], nxs[7] = float32(math.NaN()), float32(math.NaN()), float32(math.NaN())
			ds := make([]float64, n)
			is := make([]int32, n)
			bs := make([]bool, n)
			for k := range ds {
				ds[k] = rng.NormFloat64() * 1e3
				if k%97 == 0 {
					ds[k] = math.Copysign(0, -1)
				}
				is[k] = int32(rng.Uint32())
				bs[k] = rng.IntN(50) != 0
			}
			x, nx, dd := upload(t, s, xs, c.shape...), upload(t, s, nxs, c.shape...), upload(t, s, ds, c.shape...)
			ii, bb := upload(t, s, is, c.shape...), upload(t, s, bs, c.shape...)
			for _, axes := range c.axes {
				o := axesOpts(axes, false)
				for _, op := range fuseOps(x, nx, dd, ii, bb) {
					if (strings.HasPrefix(op.name, "arg") || strings.HasPrefix(op.name, "find")) && len(axes) > 1 {
						continue // one axis or all
					}
					what := fmt.Sprintf("%s %v axes %v index64 %v", op.name, c.shape, axes, idx64)
					gpu.SetReduceFuse(d, false)
					want := op.run(t, s, o)
					gpu.SetReduceFuse(d, true)
					for rep := range 3 {
						got := op.run(t, s, o)
						if !bytes.Equal(got, want) {
							t.Fatalf("%s, launch %d: fused % x, two passes % x", what, rep, got, want)
						}
						checkCountersZero(t, s, what)
					}
					split, fused := gpu.ReducePlans()
					fusedPlans += fused
					splitPlans += split
					if split > 0 {
						notFused = append(notFused, what)
						t.Errorf("%s: not fused", what)
					}
				}
			}
			for _, a := range []interface{ Free() error }{x, nx, dd, ii, bb} {
				a.Free()
			}
		}
	}
	gpu.SetReduceIndex64(d, false)
	t.Logf("%d fused plans, %d left in two passes: %s", fusedPlans, splitPlans, strings.Join(notFused, "; "))
	if fusedPlans == 0 {
		t.Fatal("nothing fused")
	}
}

// TestReduceFusedStreams runs one fused reduction on several streams at once: each
// has its own counters.
func TestReduceFusedStreams(t *testing.T) {
	d, err := simGPU()
	if err != nil {
		t.Fatal(err)
	}
	smallFusedSplits(t, d)
	rng := rand.New(rand.NewPCG(41, 42))
	xs := randVals[float32](rng, 20000)
	var ss []*gpu.Stream
	for range 3 {
		s, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ss = append(ss, s)
	}
	x := upload(t, ss[0], xs, len(xs))
	want := toSlice(t, must[*gpu.Array[float32]](t)(gpu.Sum[float32](ss[0], x)))[0]
	errs := make(chan error, len(ss))
	for _, s := range ss {
		go func() {
			for range 20 {
				r, err := gpu.Sum[float32](s, x)
				if err != nil {
					errs <- err
					return
				}
				v, err := r.ToSlice(bg)
				r.Free()
				if err != nil {
					errs <- err
					return
				}
				if math.Float32bits(v[0]) != math.Float32bits(want) {
					errs <- fmt.Errorf("%v: %v, want %v", s, v[0], want)
					return
				}
			}
			errs <- nil
		}()
	}
	for range ss {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range ss {
		checkCountersZero(t, s, s.String())
		if c, _ := gpu.ReduceCounters(s); c == nil {
			t.Fatalf("%v: no counters: the sum wasn't fused", s)
		}
	}
}

// smallFusedSplits makes reductions split from 2048 elements (so that the simulator's
// cases stay small) and fuse their passes on d, until the test ends.
func smallFusedSplits(t *testing.T, d *gpu.Device) {
	old := gpu.SetReduceSplitMin(d, 2048)
	fuse := gpu.SetReduceFuse(d, true)
	t.Cleanup(func() {
		gpu.SetReduceFuse(d, fuse)
		gpu.SetReduceSplitMin(d, old)
	})
}

// A fused reduction's first use on a stream allocates the stream's ticket counters. Under
// memory pressure that the runtime's out-of-memory recovery (collecting dropped buffers)
// would cure, the reduction must still succeed, as the two-launch form does.
func TestReduceFusedCountersReclaim(t *testing.T) {
	d, err := simGPU()
	if err != nil {
		t.Fatal(err)
	}
	smallFusedSplits(t, d)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, fuse := range []bool{false, true} {
		gpu.SetReduceFuse(d, fuse)
		s, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		x := upload(t, s, randVals[float32](rng, 20000), 20000)
		out := must[*gpu.Array[float32]](t)(gpu.Empty[float32](s))
		// Compile the plan's kernels first, with memory to spare.
		if err := gpu.ReduceInto(s, out, gpu.OpSum, x); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(bg); err != nil {
			t.Fatal(err)
		}
		// Garbage: 1 MiB of arrays dropped without Free, then leave 1 KiB free.
		for range 4 {
			must[*gpu.Array[float32]](t)(gpu.Empty[float32](s, 1<<16))
		}
		s2, err := d.NewStream() // no counters yet, no cached blocks
		if err != nil {
			t.Fatal(err)
		}
		free, _, _ := d.MemInfo()
		saved := cpu.TotalMemory
		cpu.TotalMemory -= free - 1024
		err = gpu.ReduceInto(s2, out, gpu.OpSum, x)
		cpu.TotalMemory = saved
		if err != nil {
			t.Errorf("fused %v: a reduction with reclaimable garbage: %v", fuse, err)
		}
		s2.Close()
		x.Free()
		out.Free()
		s.Close()
		runtime.GC()
	}
}
