package kernel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/dtype"

	"github.com/go-gpu/gpu/internal/ptxsim/spectest"
	"github.com/go-gpu/gpu/internal/testenv"
)

// The search kernels' PTX on the simulator against the CPU implementation.

func TestSearchPtxas(t *testing.T) {
	var specs []spectest.Spec
	for _, in := range []dtype.DType{dtype.Bool, dtype.Int8, dtype.Uint16, dtype.Float32, dtype.Int64, dtype.Float64} {
		k := 16
		if in.Size() > 2 {
			k = 8
		}
		specs = append(specs,
			&CompactCount{In: in, Items: k, Vector: true},
			&CompactScatter{In: in, Items: k, Vector: true},
			&FindFirst{In: in, Items: k},
			&CountNonzero{In: in, Items: k})
	}
	specs = append(specs, &CompactScatter{In: dtype.Bool, Values: dtype.Float32, Items: 16, Vector: true},
		&CompactScatter{In: dtype.Bool, Values: dtype.Int16, Items: 16})
	for _, sp := range specs {
		t.Run(sp.Key(), func(t *testing.T) {
			t.Parallel()
			src, _, err := sp.PTX(9, 0)
			if err != nil {
				t.Fatal(err)
			}
			log, cubin := ptxasFor(t, sp, sp.Key(), src)
			regs, smem := scanRegs(log)
			sass := 0
			if testing.Verbose() {
				sass = scanSassCount(t, cubin)
			}
			t.Logf("%s: %d registers, %d bytes smem, %d SASS", sp.Key(), regs, smem, sass)
		})
	}
}

// sparseBytes returns n elements of type t, nonzero with probability p.
func sparseBytes(rng *rand.Rand, t dtype.DType, n int, p float64) []byte {
	b := spectest.RandBytes(rng, t, n, true)
	sz := t.Size()
	for i := 0; i < n; i++ {
		e := b[i*sz : (i+1)*sz]
		if rng.Float64() >= p {
			for k := range e {
				e[k] = 0
			}
			if t.IsFloat() && rng.IntN(2) == 0 {
				e[sz-1] = 0x80 // -0
			}
		} else if t == dtype.Bool {
			e[0] = 1
		} else {
			e[0] |= 1 // nonzero
		}
	}
	return b
}

func TestCompactSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	type tc struct {
		in     dtype.DType
		values dtype.DType
		k      int
		vec    bool
		n      int
		p      float64
		res    int
		off    int
	}
	cases := []tc{
		{dtype.Bool, dtype.Invalid, 1, true, 256*40 + 7, 0.5, 6, 0}, // 41 tiles, two windows
		{dtype.Bool, dtype.Invalid, 16, true, 4096*2 + 100, 0.3, 3, 0},
		{dtype.Bool, dtype.Invalid, 16, false, 4096 + 1, 1, 2, 1},
		{dtype.Float32, dtype.Invalid, 2, true, 512*7 + 3, 0.5, 4, 0},
		{dtype.Int64, dtype.Invalid, 1, true, 256*33 + 1, 0.02, 8, 0},
		{dtype.Float64, dtype.Invalid, 2, true, 512 * 5, 0, 3, 0},
		{dtype.Bool, dtype.Float32, 4, true, 1024*5 + 9, 0.5, 3, 0},
		{dtype.Bool, dtype.Int16, 2, false, 512*3 + 1, 0.7, 3, 0},
		{dtype.Uint8, dtype.Uint8, 8, true, 2048*2 + 5, 0.4, 3, 0},
		{dtype.Int32, dtype.Invalid, 1, true, 3, 1, 1, 0},
	}
	for i, c := range cases {
		if testenv.Race && i != 1 && i != 8 {
			continue // see testenv.Race
		}
		cnt := &CompactCount{In: c.in, Items: c.k, Vector: c.vec}
		sc := &CompactScatter{In: c.in, Values: c.values, Items: c.k, Vector: c.vec}
		name := fmt.Sprintf("%s/%s/n%d/p%v", cnt.Key(), sc.Key(), c.n, c.p)
		t.Run(name, func(t *testing.T) {
			tiles := (c.n + cnt.Tile() - 1) / cnt.Tile()
			in := sparseBytes(rng, c.in, c.n, c.p)
			status := make([]byte, 16+(8*tiles+15)&^15)
			args := []spectest.Arg{spectest.BufAt(in, c.off), spectest.Buf(status), spectest.U64(uint64(c.n))}
			gs := spectest.Sim(t, cnt, tiles, SearchBlock, c.res, args)
			ws := spectest.CPU(t, cnt, tiles, SearchBlock, args)
			// The words must agree (the header holds the tile counter on the GPU).
			if i := spectest.FirstDiff(dtype.Uint64, gs[1][16:], ws[1][16:]); i >= 0 {
				t.Fatalf("status word %d = %#x, CPU %#x", i, binary.LittleEndian.Uint64(gs[1][16+8*i:]), binary.LittleEndian.Uint64(ws[1][16+8*i:]))
			}
			total := int(binary.LittleEndian.Uint64(ws[1][16+8*(tiles-1):]) & statusMask)
			ot := sc.OutType()
			out := make([]byte, max(1, total)*ot.Size())
			for i := range out {
				out[i] = 0xCD
			}
			var vals []byte
			if c.values != dtype.Invalid {
				vals = spectest.RandBytes(rng, c.values, c.n, false)
			} else {
				vals = make([]byte, 8)
			}
			tot := bytes.Repeat([]byte{0xEE}, 8)
			sargs := []spectest.Arg{spectest.BufAt(in, c.off), spectest.Buf(gs[1]), spectest.Buf(out), spectest.Buf(vals), spectest.U64(uint64(c.n)), spectest.Buf(tot)}
			gout := spectest.Sim(t, sc, tiles, SearchBlock, c.res, sargs)
			wout := spectest.CPU(t, sc, tiles, SearchBlock, sargs)
			if i := spectest.FirstDiff(ot, gout[2], wout[2]); i >= 0 {
				t.Fatalf("output %d differs: %x vs CPU %x", i, gout[2][i*ot.Size():(i+1)*ot.Size()], wout[2][i*ot.Size():(i+1)*ot.Size()])
			}
			for k, got := range [][]byte{gout[5], wout[5]} {
				if v := binary.LittleEndian.Uint64(got); v != uint64(total) {
					t.Fatalf("total (%s) = %d, want %d", []string{"PTX", "CPU"}[k], v, total)
				}
			}
			statusClean(t, name+" (PTX)", gout[1])
			statusClean(t, name+" (CPU)", wout[1])
		})
	}
}

func TestFindFirstCountSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(53, 54))
	for i, c := range []struct {
		in   dtype.DType
		k    int
		n    int
		pos  []int
		grid int
	}{
		{dtype.Bool, 1, 256 * 20, []int{-1}, 4},
		{dtype.Bool, 1, 256 * 20, []int{0}, 4},
		{dtype.Bool, 2, 512*9 + 3, []int{512*7 + 1, 512*8 + 2}, 3},
		{dtype.Float32, 1, 256*12 + 5, []int{256*11 + 4}, 5},
		{dtype.Int64, 4, 1024 * 3, []int{1500, 1024*2 + 3, 2999}, 2},
		{dtype.Float64, 1, 256 * 6, []int{600}, 6},
	} {
		if testenv.Race && i != 2 && i != 4 {
			continue // see testenv.Race
		}
		ff := &FindFirst{In: c.in, Items: c.k}
		cn := &CountNonzero{In: c.in, Items: c.k}
		t.Run(fmt.Sprintf("%s/%v", ff.Key(), c.pos), func(t *testing.T) {
			in := sparseBytes(rng, c.in, c.n, 0) // all zeros (floats: some -0)
			sz := c.in.Size()
			for _, p := range c.pos {
				if p >= 0 {
					in[p*sz] = 1
				}
			}
			res := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
			args := []spectest.Arg{spectest.Buf(in), spectest.Buf(res), spectest.U64(uint64(c.n))}
			got := spectest.Sim(t, ff, c.grid, SearchBlock, c.grid, args)
			want := spectest.CPU(t, ff, c.grid, SearchBlock, args)
			if g, w := binary.LittleEndian.Uint64(got[1]), binary.LittleEndian.Uint64(want[1]); g != w {
				t.Fatalf("find first = %d, CPU %d", int64(g), int64(w))
			}
			zero := make([]byte, 8)
			cargs := []spectest.Arg{spectest.Buf(in), spectest.Buf(zero), spectest.U64(uint64(c.n))}
			got = spectest.Sim(t, cn, c.grid, SearchBlock, c.grid, cargs)
			want = spectest.CPU(t, cn, c.grid, SearchBlock, cargs)
			if g, w := binary.LittleEndian.Uint64(got[1]), binary.LittleEndian.Uint64(want[1]); g != w {
				t.Fatalf("count = %d, CPU %d", g, w)
			}
		})
	}
}

// maxnregLine returns src's .maxnreg line, or "" for none.
func maxnregLine(src string) string {
	got := ""
	for _, l := range strings.Split(src, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), ".maxnreg") {
			got = strings.TrimSpace(l)
		}
	}
	return got
}

// TestScanRegCap: the scan kernels without MinBlocks follow ScanRegCap (blockAttrs'
// .maxnreg, none, or a count); with MinBlocks they keep .minnctapersm and no cap.
func TestScanRegCap(t *testing.T) {
	defer func(c int) { ScanRegCap = c }(ScanRegCap)
	sum := Combine{Op: OpSum, Type: dtype.Int64}
	for _, tc := range []struct {
		regCap int
		tiles  string // ScanTiles' .maxnreg line (256 threads)
		cols   string // ScanColumns'
	}{{-1, ".maxnreg 128", fmt.Sprintf(".maxnreg %d", min(128, 65536/ScanColumnsBlock))}, {0, "", ""}, {48, ".maxnreg 48", ".maxnreg 48"}} {
		ScanRegCap = tc.regCap
		if !LiftRegCap && tc.regCap < 0 {
			tc.tiles, tc.cols = "", ""
		}
		for _, c := range []struct {
			sp   spectest.Spec
			want string
		}{
			{&ScanTiles{In: dtype.Int64, Comb: sum, Group: 1, Items: 16, Vector: true}, tc.tiles},
			{&ScanColumns{In: dtype.Int64, Comb: sum, Groups: 8, Rows: 16}, tc.cols},
			{&ScanTiles{In: dtype.Int64, Comb: sum, Group: 1, Items: 16, Vector: true, MinBlocks: 5}, ""},
		} {
			src, _, err := c.sp.PTX(9, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := maxnregLine(src); got != c.want {
				t.Errorf("ScanRegCap %d, %s: .maxnreg line %q, want %q", tc.regCap, c.sp.Key(), got, c.want)
			}
			if st, ok := c.sp.(*ScanTiles); ok && st.MinBlocks > 0 && !strings.Contains(src, ".minnctapersm 5") {
				t.Errorf("ScanRegCap %d, %s: lost its .minnctapersm", tc.regCap, c.sp.Key())
			}
		}
	}
}

// TestCompactRegCap: the compaction kernels' register cap follows CompactRegCap (the
// others' .maxnreg, none, or a count); the other search kernels keep blockAttrs'.
func TestCompactRegCap(t *testing.T) {
	defer func(c int) { CompactRegCap = c }(CompactRegCap)
	for _, tc := range []struct {
		regCap int
		want   string // the .maxnreg line, or "" for none
	}{{-1, ".maxnreg 128"}, {0, ""}, {40, ".maxnreg 40"}} {
		CompactRegCap = tc.regCap
		for _, sp := range []spectest.Spec{&CompactCount{In: dtype.Bool, Items: 16, Vector: true},
			&CompactScatter{In: dtype.Bool, Items: 16, Vector: true}} {
			src, _, err := sp.PTX(9, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := maxnregLine(src)
			if !LiftRegCap && tc.regCap < 0 {
				tc.want = ""
			}
			if got != tc.want || !strings.Contains(src, ".maxntid 256, 1, 1") {
				t.Errorf("CompactRegCap %d, %s: .maxnreg line %q, want %q", tc.regCap, sp.Key(), got, tc.want)
			}
		}
		src, _, err := (&FindFirst{In: dtype.Bool, Items: 16}).PTX(9, 0)
		if err != nil {
			t.Fatal(err)
		}
		if LiftRegCap && !strings.Contains(src, ".maxnreg 128") {
			t.Errorf("CompactRegCap %d: FindFirst lost its .maxnreg", tc.regCap)
		}
	}
}
