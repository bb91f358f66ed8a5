package conformance

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
)

// RunHostCopies runs the tests of the host copies' promises (package gpu's "Host
// copies"): every plain host read and copy returns the context's error soon after a
// cancel while a long kernel on another stream uses its buffer, and is right when not
// cancelled; a copy of a ready buffer is not held up by copies that wait; a thousand
// goroutines reading a long kernel's output at once add at most GOMAXPROCS+16 OS
// threads; Stream.CopyDtoH and CopyHtoD return before a long kernel on their stream
// ends, with the data right after it; and the tracking that settles back to one
// stream still orders every conflicting use. Part of RunMemory.
func RunHostCopies(t *testing.T, k *K) {
	t.Run("CancelHostCopies", func(t *testing.T) { testCancelHostCopies(t, k) })
	t.Run("ReadyReadNotDelayed", func(t *testing.T) { testReadyReadNotDelayed(t, k) })
	t.Run("ManyReaders", func(t *testing.T) { testManyReaders(t, k) })
	t.Run("AsyncCopiesReturnEarly", func(t *testing.T) { CheckAsyncCopies(t, k) })
	t.Run("SettledTracking", func(t *testing.T) { testSettledTracking(t, k) })
}

// longKernel is how long the kernels that the host copies wait for run: long enough
// that a copy that waited for them is plain.
const longKernel = 1500 * time.Millisecond

// largeWords is the size of the large copies: 16 MiB on CUDA, 1 MiB on the CPU
// backend, whose runs share CI's two cores with the race detector (still copies of
// several staging chunks when staging is forced).
func largeWords(d *gpu.Device) int {
	if d.Backend() == "cuda" {
		return 4 << 20
	}
	return 256 << 10
}

// cancelLimit is how soon after its cancel a host copy must return. The CPU backend's
// runs share CI's two cores with the race detector: it gets more.
func cancelLimit(d *gpu.Device) time.Duration {
	// The PTX simulator's fake CUDA device runs on the CPU, as the CPU backend does (its
	// copies took up to 10.5 ms under the race detector on two busy cores).
	if d.Backend() == "cuda" && d.Info().Name != "PTX simulator" {
		return 10 * time.Millisecond
	}
	return 250 * time.Millisecond
}

// hostOp is one plain host read or copy of the buffer in, or into out.
type hostOp struct {
	name  string
	words int
	run   func(ctx context.Context) error
	check func(t *testing.T) // after the kernel, uncancelled
}

// testCancelHostCopies starts one long kernel that reads in and writes out (on a
// stream of its own), then every kind of host read of out and write of in, at several
// sizes, each with a context cancelled 20 ms later: each returns the context's error
// within cancelLimit of its cancel, writes no Go memory, and the same call made after
// the kernel gives the right data.
func testCancelHostCopies(t *testing.T, k *K) {
	d := k.D
	ctx := context.Background()
	for _, words := range []int{1, 2, 1024, largeWords(d)} {
		t.Run(fmt.Sprintf("words=%d", words), func(t *testing.T) {
			vals := Random(words)
			in := Upload(t, d, vals)
			defer in.Free()
			out := alloc(t, d, 4*words)
			must(t, k.FillU32(d.DefaultStream(), out, 0x0BAD0BAD))
			other := Upload(t, d, Random(words))
			defer other.Free()
			a := stream(t, d)
			must(t, d.Synchronize(ctx))
			outArr, err := gpu.ArrayOf[uint32](out, words)
			must(t, err)
			inArr, err := gpu.ArrayOf[uint32](in, words)
			must(t, err)
			fresh := Random(words)
			var ops []hostOp
			poisoned := func() []uint32 {
				p := make([]uint32, words)
				for i := range p {
					p[i] = 0xDEADBEEF
				}
				return p
			}
			dsts := map[string][]uint32{}
			read := func(name string, f func(ctx context.Context, dst []uint32) error) {
				dst := poisoned()
				dsts[name] = dst
				ops = append(ops, hostOp{name: name, words: words, run: func(ctx context.Context) error { return f(ctx, dst) }})
			}
			read("Buffer.CopyToHost", func(ctx context.Context, dst []uint32) error { return out.CopyToHost(ctx, gpu.Bytes(dst)) })
			read("Array.CopyToHost", func(ctx context.Context, dst []uint32) error { return outArr.CopyToHost(ctx, dst) })
			read("Array.ToSlice", func(ctx context.Context, dst []uint32) error {
				s, err := outArr.ToSlice(ctx)
				if err == nil {
					copy(dst, s)
				}
				return err
			})
			read("Array.At", func(ctx context.Context, dst []uint32) error {
				v, err := outArr.At(ctx, words-1)
				if err == nil {
					dst[words-1] = v
				}
				return err
			})
			if words > 1 {
				view, err := outArr.Slice(gpu.R(0, words, 2)) // a strided view: made contiguous first
				must(t, err)
				read("strided ToSlice", func(ctx context.Context, dst []uint32) error {
					s, err := view.ToSlice(ctx)
					if err == nil {
						for i, v := range s {
							dst[2*i] = v
						}
					}
					return err
				})
			}
			if words == 1 || words == 2 {
				read("Buffer.CopyToHost of 4 bytes", func(ctx context.Context, dst []uint32) error {
					return out.CopyToHost(ctx, gpu.Bytes(dst[:1]))
				})
			}
			// Writes into in, which the kernel reads: they must wait for it.
			ops = append(ops,
				hostOp{name: "Buffer.CopyFromHost", run: func(ctx context.Context) error { return in.CopyFromHost(ctx, gpu.Bytes(fresh)) }},
				hostOp{name: "Array.CopyFromHost", run: func(ctx context.Context) error { return inArr.CopyFromHost(ctx, fresh) }},
				hostOp{name: "Buffer.CopyFrom", run: func(ctx context.Context) error { return in.CopyFrom(ctx, other) }},
				hostOp{name: "Array.Set", run: func(ctx context.Context) error { return inArr.Set(ctx, 7, 0) }},
			)
			limit := cancelLimit(d)
			type result struct {
				name string
				err  error
				late time.Duration
			}
			res := make(chan result, len(ops))
			// The kernel last, once every destination is made: the calls start at once.
			must(t, k.SpinCopyU32(a, out, in, longKernel, nil))
			start := time.Now()
			for _, op := range ops {
				go func() {
					cctx, cancel := context.WithCancel(ctx)
					defer cancel()
					stop := time.AfterFunc(20*time.Millisecond, cancel)
					defer stop.Stop()
					err := op.run(cctx)
					var late time.Duration
					if cctx.Err() != nil {
						late = time.Since(start) - 20*time.Millisecond
					}
					res <- result{op.name, err, late}
				}()
			}
			for range ops {
				r := <-res
				if !errors.Is(r.err, context.Canceled) {
					t.Errorf("%s of %d words, cancelled 20 ms into a %v kernel: %v, want context.Canceled", r.name, words, longKernel, r.err)
					continue
				}
				t.Logf("%s: returned %v after its cancel", r.name, r.late)
				if r.late > limit {
					t.Errorf("%s of %d words returned %v after its cancel, want at most %v", r.name, words, r.late, limit)
				}
			}
			must(t, d.Synchronize(ctx))
			for name, dst := range dsts {
				for i, v := range dst {
					if v != 0xDEADBEEF {
						t.Fatalf("%s: word %d = %#x after a cancelled read: it wrote the Go memory", name, i, v)
					}
				}
			}
			// The kernel copied in (unchanged by the cancelled writes) into out.
			equalU32(t, "the kernel's input after cancelled writes", U32s(t, in), vals)
			for _, op := range ops[:len(dsts)] {
				must(t, op.run(ctx))
			}
			for name, dst := range dsts {
				for i, v := range dst {
					if v != vals[i] && v != 0xDEADBEEF {
						t.Fatalf("%s: word %d = %#x, want %#x", name, i, v, vals[i])
					}
				}
				if name == "Buffer.CopyToHost" || name == "Array.ToSlice" {
					equalU32(t, name, dst, vals)
				}
			}
			must(t, in.CopyFromHost(ctx, gpu.Bytes(fresh)))
			equalU32(t, "CopyFromHost after the kernel", U32s(t, in), fresh)
		})
	}
}

// testReadyReadNotDelayed: while goroutines wait to read a long kernel's output, reads
// of buffers that are ready (small and large) return long before the kernel ends.
func testReadyReadNotDelayed(t *testing.T, k *K) {
	d := k.D
	ctx := context.Background()
	const words = 1 << 20
	slow := alloc(t, d, 4*words)
	src := Upload(t, d, Random(words))
	defer src.Free()
	lw := largeWords(d)
	small, large := Random(1024), Random(lw)
	readyS, readyL := Upload(t, d, small), Upload(t, d, large)
	defer readyS.Free()
	defer readyL.Free()
	must(t, d.Synchronize(ctx))
	a := stream(t, d)
	must(t, k.SpinCopyU32(a, slow, src, longKernel, nil))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			dst := make([]uint32, words)
			if err := slow.CopyToHost(ctx, gpu.Bytes(dst)); err != nil {
				t.Error(err)
			}
		})
	}
	time.Sleep(20 * time.Millisecond) // the slow reads are waiting
	start := time.Now()
	got := make([]uint32, 1024)
	must(t, readyS.CopyToHost(ctx, gpu.Bytes(got)))
	arr, err := gpu.ArrayOf[uint32](readyL, lw)
	must(t, err)
	all, err := arr.ToSlice(ctx)
	must(t, err)
	v, err := arr.At(ctx, 12345)
	must(t, err)
	el := time.Since(start)
	equalU32(t, "ready small buffer", got, small)
	equalU32(t, "ready large array", all, large)
	if v != large[12345] {
		t.Errorf("At(12345) = %#x, want %#x", v, large[12345])
	}
	t.Logf("ready reads took %v while 4 reads waited for a %v kernel", el, longKernel)
	if el > longKernel/3 {
		t.Errorf("reads of ready buffers took %v while other reads waited for a %v kernel", el, longKernel)
	}
	wg.Wait()
}

// testManyReaders: 1,000 goroutines read the output of a long kernel at once (ToSlice
// and At): all get the right data, and the OS threads grow by at most GOMAXPROCS+16.
func testManyReaders(t *testing.T, k *K) {
	d := k.D
	ctx := context.Background()
	readers := 1000
	if testing.Short() {
		readers = 200
	}
	const words = 1024
	vals := Random(words)
	src := Upload(t, d, vals)
	defer src.Free()
	out := alloc(t, d, 4*words)
	must(t, d.Synchronize(ctx))
	arr, err := gpu.ArrayOf[uint32](out, words)
	must(t, err)
	a := stream(t, d)
	threads0 := Threads()
	must(t, k.SpinCopyU32(a, out, src, 500*time.Millisecond, nil))
	stop := make(chan struct{})
	sampled := make(chan int)
	go func() {
		m := 0
		for {
			select {
			case <-stop:
				sampled <- m
				return
			case <-time.After(time.Millisecond):
				m = max(m, Threads())
			}
		}
	}()
	errs := make(chan error, readers)
	for i := range readers {
		go func() {
			errs <- func() error {
				if i%2 == 1 {
					v, err := arr.At(ctx, i%words)
					if err == nil && v != vals[i%words] {
						err = fmt.Errorf("At(%d) = %#x, want %#x", i%words, v, vals[i%words])
					}
					return err
				}
				s, err := arr.ToSlice(ctx)
				if err == nil {
					for j := range s {
						if s[j] != vals[j] {
							return fmt.Errorf("ToSlice: word %d = %#x, want %#x", j, s[j], vals[j])
						}
					}
				}
				return err
			}()
		}()
	}
	for range readers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	close(stop)
	maxThreads := <-sampled
	if threads0 > 0 {
		limit := runtime.GOMAXPROCS(0) + 16
		t.Logf("%d readers: at most %d OS threads, %d before (added at most GOMAXPROCS+16 = %d)", readers, maxThreads, threads0, limit)
		if maxThreads-threads0 > limit {
			t.Errorf("%d OS threads while %d goroutines read, %d before: want at most GOMAXPROCS+16 = %d more", maxThreads, readers, threads0, limit)
		}
	}
}

// CheckAsyncCopies checks that Stream.CopyDtoH and CopyHtoD with pageable Go memory
// return before a long kernel enqueued before them on their stream ends (they only
// enqueue), small and large, and that the data is right once an event recorded after
// them completes: the copy to the host after the kernel's write, the copy to the device
// before a later kernel reads it. Exported for package gpu's tests of the staging ring
// on the CPU backend.
func CheckAsyncCopies(t *testing.T, k *K) {
	d := k.D
	ctx := context.Background()
	const kernel = 400 * time.Millisecond
	for _, words := range []int{1, 3, 1024, largeWords(d)*3/4 + 5} {
		vals, next := Random(words), Random(words)
		src := Upload(t, d, vals)
		x := alloc(t, d, 4*words)
		y := alloc(t, d, 4*words)
		s := stream(t, d)
		ev, err := d.NewEvent(gpu.DisableTiming)
		must(t, err)
		must(t, d.Synchronize(ctx))
		// x = src after a long kernel; the host copy of x after it; then next into y
		// and y + 1 into x, all on s.
		must(t, k.SpinCopyU32(s, x, src, kernel, nil))
		dst := make([]uint32, words)
		for i := range dst {
			dst[i] = 0xDEADBEEF
		}
		start := time.Now()
		must(t, s.CopyDtoH(gpu.Bytes(dst), x))
		must(t, s.CopyHtoD(y, gpu.Bytes(next)))
		el := time.Since(start)
		must(t, k.AddU32(s, x, y, 1))
		must(t, s.Record(ev))
		t.Logf("%d words: CopyDtoH and CopyHtoD behind a %v kernel returned in %v", words, kernel, el)
		if el > kernel/4 {
			t.Errorf("%d words: CopyDtoH and CopyHtoD behind a %v kernel took %v: they waited", words, kernel, el)
		}
		must(t, ev.Wait(ctx))
		equalU32(t, fmt.Sprintf("%d words copied to the host", words), dst, vals)
		for i := range next {
			next[i]++
		}
		equalU32(t, fmt.Sprintf("%d words copied to the device, then + 1", words), U32s(t, x), next)
		ev.Close()
		src.Free()
	}
}

// testSettledTracking checks that uses on other streams are still waited for once a
// buffer's tracking has settled on one stream: buffers made on the default stream (and
// by a plain copy) used many times on stream S, then read on a third stream after a
// slow write on S; a write on S after a slow read on T that S saw while reading; a
// write on a third stream after reads on two.
func testSettledTracking(t *testing.T, k *K) {
	d := k.D
	ctx := context.Background()
	const n = 1 << 12
	s, tt, u := stream(t, d), stream(t, d), stream(t, d)
	vals, vals2 := Random(n), Random(n)
	x := Upload(t, d, vals) // a plain copy
	defer x.Free()
	y, err := d.Alloc(4 * n) // on the default stream
	must(t, err)
	defer y.Free()
	src2 := Upload(t, d, vals2)
	defer src2.Free()
	for range 50 {
		must(t, k.AddU32(s, y, x, 1))
	}
	// A slow write of x on s, then a read on a third stream: it must wait.
	must(t, k.SpinCopyU32(s, x, src2, 50*time.Millisecond, nil))
	r := alloc(t, d, 4*n)
	must(t, k.AddU32(tt, r, x, 0))
	equalU32(t, "a third stream's read after a settled stream's slow write", U32s(t, r), vals2)

	// A slow read of x on tt; s reads x (sees tt's read), again (settled), then writes
	// x: the write must wait for tt's slow read.
	slowCopy := alloc(t, d, 4*n)
	must(t, d.Synchronize(ctx))
	must(t, k.SpinCopyU32(tt, slowCopy, x, 60*time.Millisecond, nil))
	for range 3 {
		must(t, k.AddU32(s, y, x, 2))
	}
	must(t, k.FillU32(s, x, 0x5EED))
	equalU32(t, "a slow read on another stream before a settled stream's write", U32s(t, slowCopy), vals2)

	// Reads of x on s (slow) and tt, both settled by repeats, then a write on u: it
	// waits for both.
	must(t, x.CopyFromHost(ctx, gpu.Bytes(vals)))
	r2 := alloc(t, d, 4*n)
	must(t, k.SpinCopyU32(s, slowCopy, x, 60*time.Millisecond, nil))
	for range 3 {
		must(t, k.AddU32(s, y, x, 1))
		must(t, k.AddU32(tt, r2, x, 1))
	}
	must(t, k.FillU32(u, x, 0xF00D))
	equalU32(t, "a slow read on a settled stream before a third stream's write", U32s(t, slowCopy), vals)
	for i := range vals {
		vals[i]++
	}
	equalU32(t, "a read on another settled stream before a third stream's write", U32s(t, r2), vals)
	for _, v := range U32s(t, x) {
		if v != 0xF00D {
			t.Fatalf("x = %#x after the fill, want 0xF00D", v)
		}
	}
}
