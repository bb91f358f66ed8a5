package main

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/go-gpu/gpu/internal/ptxsim"
)

// floorHash is the floor kernels' hash of element e, in Go.
func floorHash(e uint64) uint64 {
	z := e * 0x9E3779B97F4A7C15
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// TestRawFloorSim runs the floor kernels on the PTX simulator over a ragged launch and
// checks them against Go: every access lands at its hashed element, the loads' sums
// are stored, the stores and updates count right.
func TestRawFloorSim(t *testing.T) {
	m, err := ptxsim.Parse(rawFloorPTX)
	if err != nil {
		t.Fatal(err)
	}
	const n, dst, block = 8 * 37, 64, 16 // 37 threads: three blocks, the last ragged
	const aBase, outBase = 1 << 20, 2 << 20
	for _, k := range rawFloorKernels {
		t.Run(k.entry, func(t *testing.T) {
			size := 1 << k.shift
			a := make([]byte, dst*size)
			vals := make([]float32, dst)
			for j := range vals {
				vals[j] = float32(j%13) + 0.5
				if k.entry == "floor_load" {
					binary.LittleEndian.PutUint32(a[4*j:], math.Float32bits(vals[j]))
				}
			}
			out := make([]byte, 4*(n/floorPerThread))
			for i := range out {
				out[i] = 0xA5 // poison
			}
			mem := &ptxsim.Regions{}
			mem.Map(aBase, a)
			mem.Map(outBase, out)
			cfg := ptxsim.Linear((n/floorPerThread+block-1)/block, block)
			cfg.Resident = 1
			if err := m.Func(k.entry).Launch(mem, cfg, []uint64{aBase, outBase, n, dst - 1}); err != nil {
				t.Fatal(err)
			}
			hits := make([]int, dst)
			sums := make([]float32, n/floorPerThread)
			for e := range uint64(n) {
				j := floorHash(e) & (dst - 1)
				hits[j]++
				t := e / floorPerThread
				if e%floorPerThread == 0 {
					sums[t] = vals[j]
				} else {
					sums[t] += vals[j]
				}
			}
			for j, h := range hits {
				switch k.entry {
				case "floor_store", "floor_red_f32":
					got := math.Float32frombits(binary.LittleEndian.Uint32(a[4*j:]))
					want := float32(0)
					if h > 0 {
						want = 1
						if k.entry == "floor_red_f32" {
							want = float32(h)
						}
					}
					if got != want {
						t.Fatalf("element %d = %v, want %v (%d accesses)", j, got, want, h)
					}
				case "floor_red_u64":
					if got := binary.LittleEndian.Uint64(a[8*j:]); got != uint64(h) {
						t.Fatalf("count %d = %d, want %d", j, got, h)
					}
				}
			}
			if k.entry == "floor_load" {
				for i, w := range sums {
					if got := math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:])); got != w {
						t.Fatalf("sum %d = %v, want %v", i, got, w)
					}
				}
			}
		})
	}
}

// TestRawSMCopySim runs the copy kernels beside the concatenation on the PTX simulator:
// three blocks' worth of vectors land at the same offsets, the bytes past them (and a
// fourth block's, not launched) stay poisoned.
func TestRawSMCopySim(t *testing.T) {
	m, err := ptxsim.Parse(rawSMCopyPTX)
	if err != nil {
		t.Fatal(err)
	}
	const srcBase, dstBase = 1 << 24, 2 << 24
	for _, k := range rawSMCopyKernels {
		t.Run(k.entry, func(t *testing.T) {
			per := k.items * smCopyBlock * 16
			src, dst := make([]byte, 4*per), make([]byte, 4*per)
			for i := range src {
				src[i] = byte(i*7 + i>>8)
				dst[i] = 0xA5 // poison
			}
			mem := &ptxsim.Regions{}
			mem.Map(srcBase, src)
			mem.Map(dstBase, dst)
			if err := m.Func(k.entry).Launch(mem, ptxsim.Linear(3, smCopyBlock), []uint64{srcBase, dstBase}); err != nil {
				t.Fatal(err)
			}
			for i := range dst {
				want := src[i]
				if i >= 3*per {
					want = 0xA5
				}
				if dst[i] != want {
					t.Fatalf("byte %d = %#x, want %#x", i, dst[i], want)
				}
			}
		})
	}
}
