package gpu

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/kernel"
)

// fusedBenchN is the keys of the fused sort's benchmarks: gpubench's
// array/sort/float32/512000+sync.
const fusedBenchN = 512000

// fusedBenchSetup returns the default stream of the first CUDA device, fusedBenchN
// uniform float32 keys on it (the caller frees them), and the fused sort's spec and
// grid for them; it skips b without a CUDA device or where the sort isn't fused.
func fusedBenchSetup(b *testing.B) (*Stream, *Array[float32], *kernel.RadixFused, int) {
	d, err := OpenBackend("cuda", 0)
	if errors.Is(err, ErrNoDevice) {
		b.Skip("no CUDA device")
	}
	if err != nil {
		b.Fatal(err)
	}
	sp := fusedSortSpec(*sortCfg.Load(), &d.info, kernel.SortKey{Type: dtype.Float32}, fusedBenchN)
	if sp == nil {
		b.Skip("the fused sort doesn't take 512000 keys here")
	}
	s := d.DefaultStream()
	x, err := Rand[float32](s, NewGenerator(7), fusedBenchN)
	if err != nil {
		b.Fatal(err)
	}
	return s, x, sp, (fusedBenchN + sp.Tile() - 1) / sp.Tile()
}

// BenchmarkSortFusedTimeline sorts 512000 uniform float32 keys through the traced fused
// kernel (kernel.RadixFused.Trace) on CUDA and logs, for each step of a block, its
// time since the launch's first block started (µs): the median over the calls of the
// last block's and of the median block's. ns/op is the host's time a call (the
// trace's copy back included: not a figure of the sort's speed).
func BenchmarkSortFusedTimeline(b *testing.B) {
	s, x, sp, grid := fusedBenchSetup(b)
	defer x.Free()
	words := grid * kernel.FusedTraceSlots
	tr, err := s.Alloc(int64(8 * words))
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Free()
	sortFusedTrace.Store(tr)
	defer sortFusedTrace.Store(nil)
	ctx := context.Background()
	poison := slices.Repeat([]byte{0xff}, 8*words)
	host := make([]byte, 8*words)
	last := make([][]float64, kernel.FusedTraceSlots) // per slot, a value a call
	mid := make([][]float64, kernel.FusedTraceSlots)
	for b.Loop() {
		if err := tr.CopyFromHost(ctx, poison); err != nil {
			b.Fatal(err)
		}
		y, err := Sort(s, x, 0)
		if err != nil {
			b.Fatal(err)
		}
		y.Free()
		if err := tr.CopyToHost(ctx, host); err != nil {
			b.Fatal(err)
		}
		t0 := uint64(math.MaxUint64)
		for blk := 0; blk < grid; blk++ {
			t0 = min(t0, binary.LittleEndian.Uint64(host[8*blk*kernel.FusedTraceSlots:]))
		}
		for i := range kernel.FusedTraceSlots {
			var ts []float64
			for blk := 0; blk < grid; blk++ {
				if v := binary.LittleEndian.Uint64(host[8*(blk*kernel.FusedTraceSlots+i):]); v != math.MaxUint64 {
					ts = append(ts, float64(v-t0)/1e3)
				}
			}
			if len(ts) > 0 {
				slices.Sort(ts)
				last[i] = append(last[i], ts[len(ts)-1])
				mid[i] = append(mid[i], ts[len(ts)/2])
			}
		}
	}
	median := func(v []float64) float64 {
		slices.Sort(v)
		return v[len(v)/2]
	}
	var sb strings.Builder
	sb.WriteString("\n" + sp.Key() + fmt.Sprintf(", %d blocks; µs since the first block's start (medians of %d calls)\n", grid, b.N))
	sb.WriteString(fmt.Sprintf("%-44s %10s %10s\n", "step passed", "last block", "median"))
	for i := range kernel.FusedTraceSlots {
		if len(last[i]) > 0 {
			sb.WriteString(fmt.Sprintf("%-44s %10.2f %10.2f\n", kernel.FusedTraceSlot(i), median(last[i]), median(mid[i])))
		}
	}
	b.Log(sb.String())
	if e := last[kernel.FusedTraceSlots-1]; len(e) > 0 {
		b.ReportMetric(median(e), "kernel-µs")
	}
}

// BenchmarkSortFusedOverhead sets a 512000-key fused sort plus a synchronize (gpubench's
// array/sort/float32/512000+sync) beside its kernel alone, launched through the
// runtime's tracked launch with buffers of its own, plus a synchronize, on CUDA: the
// difference is the host's work of Sort ahead of the launch (allocations, the spec,
// the kernel's lookup). host-µs is the time a call takes to return. (A launch the
// runtime doesn't track would not be waited for by Stream.Synchronize.)
func BenchmarkSortFusedOverhead(b *testing.B) {
	s, x, sp, grid := fusedBenchSetup(b)
	defer x.Free()
	ctx := context.Background()
	fn, err := s.dev.kernel(sp)
	if err != nil {
		b.Fatal(err)
	}
	P := sp.Order.Passes()
	kbufs := []*Buffer{x.buf}
	for _, size := range []int{4 * fusedBenchN, 4 * fusedBenchN, kernel.FusedWorkBytes(P, grid), kernel.FusedSumsBytes(P, grid)} {
		buf, err := s.Alloc(int64(size))
		if err != nil {
			b.Fatal(err)
		}
		defer buf.Free()
		if err := buf.CopyFromHost(ctx, make([]byte, size)); err != nil { // (the sums zero)
			b.Fatal(err)
		}
		kbufs = append(kbufs, buf)
	}
	klc := launchGeometry(grid, 1, kernel.SortBlock)
	klc.Cooperative = true
	want, err := x.ToSlice(ctx)
	if err != nil {
		b.Fatal(err)
	}
	slices.Sort(want)
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"kernel", func() error {
			l := newLaunchArgs()
			for _, kb := range kbufs {
				l.buf(kb, ReadWrite)
			}
			l.u64(fusedBenchN)
			return l.launch(s, fn, klc)
		}},
		{"sort", func() error {
			y, err := Sort(s, x, 0)
			if err == nil {
				err = y.Free()
			}
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			if err := s.Synchronize(ctx); err != nil {
				b.Fatal(err)
			}
			var host time.Duration
			for b.Loop() {
				t := time.Now()
				if err := c.call(); err != nil {
					b.Fatal(err)
				}
				host += time.Since(t)
				if err := s.Synchronize(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(host.Seconds()*1e6/float64(b.N), "host-µs")
		})
	}
	got := make([]byte, 4*fusedBenchN)
	if err := kbufs[2].CopyToHost(ctx, got); err != nil {
		b.Fatal(err)
	}
	for i, v := range want {
		if g := math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:])); g != v {
			b.Fatalf("the sort's kernel launched alone: element %d = %v, want %v", i, g, v)
		}
	}
}
