package main

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-gpu/gpu/internal/ptxsim"
)

// TestRawIndexSim runs the raw index baselines' kernels on the PTX simulator over a
// ragged launch (n not a multiple of the block) and checks every element against Go:
// take, put and addat over float32, bincount over int64 counts.
func TestRawIndexSim(t *testing.T) {
	m, err := ptxsim.Parse(rawIndexPTX)
	if err != nil {
		t.Fatal(err)
	}
	const n, dst, block = 300, 40, 64
	const aBase, bBase, idxBase = 1 << 20, 2 << 20, 3 << 20
	r := rand.New(rand.NewPCG(1, 2))
	idx := make([]int64, n)
	idxB := make([]byte, 8*n)
	for i := range idx {
		idx[i] = r.Int64N(dst)
		binary.LittleEndian.PutUint64(idxB[8*i:], uint64(idx[i]))
	}
	f32s := func(k int) ([]float32, []byte) {
		v := make([]float32, k)
		b := make([]byte, 4*k)
		for i := range v {
			v[i] = float32(r.IntN(1000)) / 8
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v[i]))
		}
		return v, b
	}
	for _, k := range rawIndexKernels {
		t.Run(k.entry, func(t *testing.T) {
			x, xB := f32s(dst) // the destination (take: the source)
			v, vB := f32s(n)   // the values (take: the poisoned output)
			want := append([]float32(nil), x...)
			var a, b []byte
			var wantB []float32
			put := map[int64][]float32{} // put: the values written to each target
			switch k.entry {
			case "take":
				a, b, wantB = vB, xB, make([]float32, n)
				for i, j := range idx {
					wantB[i] = x[j]
				}
			case "put", "addat":
				a, b, wantB = xB, vB, want
				for i, j := range idx {
					if k.entry == "put" {
						want[j] = v[i]
						put[j] = append(put[j], v[i])
					} else {
						want[j] += v[i] // exact: eighths below 2^11
					}
				}
			case "bincount":
				a = make([]byte, 8*dst) // zeroed, as Bincount does
			default:
				t.Fatalf("no reference for %s", k.entry)
			}
			mem := &ptxsim.Regions{}
			mem.Map(aBase, a)
			if b != nil {
				mem.Map(bBase, b)
			}
			mem.Map(idxBase, slices.Clone(idxB))
			cfg := ptxsim.Linear((n+block-1)/block, block)
			cfg.Resident = 1
			if err := m.Func(k.entry).Launch(mem, cfg, []uint64{aBase, bBase, idxBase, n}); err != nil {
				t.Fatal(err)
			}
			if k.entry == "bincount" {
				counts := make([]int64, dst)
				for _, j := range idx {
					counts[j]++
				}
				for j, c := range counts {
					if got := int64(binary.LittleEndian.Uint64(a[8*j:])); got != c {
						t.Fatalf("count %d = %d, want %d", j, got, c)
					}
				}
				return
			}
			for i, w := range wantB {
				got := math.Float32frombits(binary.LittleEndian.Uint32(a[4*i:]))
				if vs := put[int64(i)]; vs != nil && slices.Contains(vs, got) {
					continue // put: any one of duplicate targets' values wins
				}
				if got != w {
					t.Fatalf("%s element %d = %v, want %v", k.entry, i, got, w)
				}
			}
		})
	}
}
