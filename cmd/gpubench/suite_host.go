package main

// Host-side placeholders, so that gpubench runs end to end before the runtime
// exists. They measure the host, not a device: replace them with the real
// suite (one suite_<group>.go file per group) as operations land.

import (
	"errors"

	"github.com/go-gpu/gpu/bench"
)

func init() {
	bench.Register(bench.Benchmark{
		Name:  "host/noop",
		Group: "host",
		Mode:  bench.Host,
		Body:  func() error { return nil },
	})
	registerMemmove("host/memmove/2MB", 2<<20, false)
	// The reference bandwidth of a host run: a copy far larger than the caches.
	registerMemmove("host/memmove/256MB", 256<<20, true)

	// Summing 2 MB float32 inputs, rotating among enough of them that no input
	// is still in a 32 MiB last-level cache when its turn comes again.
	const sumBytes = 2 << 20
	var rot *bench.Rotation[[]float32]
	var sink float32
	bench.Register(bench.Benchmark{
		Name:  "host/sum/Float32/512K",
		Group: "host",
		Bytes: sumBytes,
		Mode:  bench.GPU,
		Setup: func(*bench.Env) error {
			sets := make([][]float32, bench.SetsFor(sumBytes, 32<<20))
			for i := range sets {
				sets[i] = make([]float32, sumBytes/4)
				for j := range sets[i] {
					sets[i][j] = float32(j%7) + 0.5
				}
			}
			rot = bench.NewRotation(sets...)
			return nil
		},
		Teardown: func(*bench.Env) error { rot = nil; return nil },
		Body: func() error {
			var s float32
			for _, v := range rot.Next() {
				s += v
			}
			sink = s
			if sink == 0 {
				return errors.New("sum is zero")
			}
			return nil
		},
	})
}

// registerMemmove registers a host copy of n bytes: n read, n written.
func registerMemmove(name string, n int, reference bool) {
	var src, dst []byte
	bench.Register(bench.Benchmark{
		Name:      name,
		Group:     "host",
		Bytes:     2 * int64(n),
		Mode:      bench.GPU,
		Reference: reference,
		Setup: func(*bench.Env) error {
			src, dst = make([]byte, n), make([]byte, n)
			for i := range min(n, 4096) {
				src[i] = byte(i*7 + 1)
			}
			for k := 4096; k < n; k *= 2 {
				copy(src[k:], src[:k])
			}
			return nil
		},
		Teardown: func(*bench.Env) error { src, dst = nil, nil; return nil },
		Body: func() error {
			copy(dst, src)
			return nil
		},
	})
}
