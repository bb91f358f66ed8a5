package random

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/ptxsim"
)

// interpSpecs is Specs with interesting Range bounds: a high rejection rate (r just above
// 2^31 or 2^63 rejects almost half the draws, so redraw rounds run) and small ranges.
func interpSpecs() []Spec {
	var out []Spec
	for _, s := range Specs() {
		if s.Dist != Range {
			out = append(out, s)
		}
	}
	return append(out,
		Spec{Dist: Range, Type: dtype.Int32, Lo: -1 << 30, Hi: 1<<30 + 1},
		Spec{Dist: Range, Type: dtype.Int32, Lo: -3, Hi: 4},
		Spec{Dist: Range, Type: dtype.Int64, Lo: -1 << 62, Hi: 1<<62 + 1},
		Spec{Dist: Range, Type: dtype.Int64, Lo: 1 << 40, Hi: 1<<40 + 1000003},
	)
}

// runKernel interprets k over n elements at address base with the given grid and returns
// the bytes written into a poisoned buffer.
func runKernel(t *testing.T, k Kernel, n int64, seed, offset, base uint64, ntid, nctaid uint32) []byte {
	t.Helper()
	pk, err := parsePTX(k.PTX)
	if err != nil {
		t.Fatalf("%s: %v", k.Name, err)
	}
	size := int64(k.Spec.Type.Size())
	out := bytes.Repeat([]byte{0xA5}, int(n*size))
	mem := &ptxsim.Regions{}
	mem.Map(base, out)
	pk.launch(k.Spec.Args(base, n, seed, offset), ntid, nctaid, mem)
	return out
}

// TestKernelMatchesGo runs every generated kernel in the PTX simulator and compares its
// output with Expected, bit for bit: both index variants, aligned (vector stores) and
// misaligned (scalar stores) outputs, sizes that end mid-block, grids smaller and larger
// than the work.
func TestKernelMatchesGo(t *testing.T) {
	sizes := []int64{0, 1, 3, 17, 100, 515}
	if testing.Short() {
		sizes = []int64{1, 17, 515}
	}
	for _, s := range interpSpecs() {
		for _, o := range kernelOptions(s) {
			for _, ix := range []bool{false, true} {
				k, err := genKernelOptions(s, "sm_90", ix, MaxRounds, o)
				if err != nil {
					t.Fatal(err)
				}
				testKernelMatchesGo(t, s, k, sizes)
			}
		}
	}
}

func testKernelMatchesGo(t *testing.T, s Spec, k Kernel, sizes []int64) {
	t.Run(fmt.Sprintf("%v/%s", s, k.Name), func(t *testing.T) {
		size := uint64(s.Type.Size())
		ns := sizes
		pairs := strings.Contains(k.PTX, "$L_pairs") // the main loop of two blocks a thread
		if s.Dist == Normal || pairs {
			ns = append(ns[:len(ns):len(ns)], 2309) // several chunks of 64 blocks per group
		}
		for _, n := range ns {
			for _, base := range []uint64{0x10000, 0x10000 + size} {
				seed, offset := uint64(0x9E3779B97F4A7C15)^uint64(n), uint64(0xFFFFFFFFFFFFFFF0)+uint64(n)
				want, err := Expected(s, n, seed, offset)
				if err != nil {
					t.Fatal(err)
				}
				grids := [][2]uint32{{4, 3}, {32, 8}}
				if (s.Dist == Normal || pairs) && n > 100 {
					// Grids with a partial group of 32 threads and with several chunks
					// of 64 blocks per group (the normal kernels' main loop).
					grids = append(grids, [2]uint32{20, 3}, [2]uint32{32, 1})
				}
				for _, grid := range grids {
					got := runKernel(t, k, n, seed, offset, base, grid[0], grid[1])
					if !bytes.Equal(got, want) {
						i := 0
						for i < len(got) && got[i] == want[i] {
							i++
						}
						t.Fatalf("n=%d base=%#x grid=%v: first difference at byte %d (element %d): got % x, want % x",
							n, base, grid, i, uint64(i)/size, got[i:min(i+16, len(got))], want[i:min(i+16, len(want))])
					}
				}
			}
		}
	})
}

// TestKernelLastRound lowers the redraw bound to 2 rounds in both the Go code and the
// kernel and checks they still agree: with half the draws rejected, many elements take
// the unconditional last round.
func TestKernelLastRound(t *testing.T) {
	for _, s := range []Spec{
		{Dist: Range, Type: dtype.Int32, Lo: -1 << 30, Hi: 1<<30 + 1},
		{Dist: Range, Type: dtype.Int64, Lo: -1 << 63, Hi: 1},
	} {
		k, err := genKernel(s, "sm_90", false, 2)
		if err != nil {
			t.Fatal(err)
		}
		const n = 400
		got := runKernel(t, k, n, 7, 11, 0x1000, 32, 2)
		want := make([]byte, 0, n*8)
		if s.Type == dtype.Int32 {
			v := make([]int32, n)
			intRange32(v, 7, 11, 0, int32(s.Lo), s.Hi, 2)
			for _, x := range v {
				want = append(want, byte(x), byte(x>>8), byte(x>>16), byte(x>>24))
			}
		} else {
			v := make([]int64, n)
			intRange64(v, 7, 11, 0, s.Lo, s.Hi, 2)
			for _, x := range v {
				for i := 0; i < 8; i++ {
					want = append(want, byte(x>>(8*i)))
				}
			}
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%v: kernel and Go differ with 2 rounds", s)
		}
	}
}

// blocksOf returns the blocks that thread g of a grid of nthreads threads computes, in a
// request of nb blocks of which nfull are whole, into a 16-byte aligned output (the
// mapping Kernel documents).
func blocksOf(s Spec, g, nthreads, nb, nfull uint64) []uint64 {
	var out []uint64
	start := uint64(0)
	if w := nthreads >> 5; s.Dist == Normal && s.Type == dtype.Float32 && w > 0 {
		lim := nfull &^ 63
		for q := g >> 5; g>>5 < w && 64*q < lim; q += w {
			out = append(out, 64*q+g&31, 64*q+32+g&31)
		}
		start = lim
	}
	for b := start + g; b < nb; b += nthreads {
		out = append(out, b)
	}
	return out
}

// ownerOf returns the thread that computes block b (blocksOf).
func ownerOf(s Spec, b, nthreads, nfull uint64) uint64 {
	if w := nthreads >> 5; s.Dist == Normal && s.Type == dtype.Float32 && w > 0 {
		lim := nfull &^ 63
		if b < lim {
			return 32*((b>>6)%w) + b&31
		}
		return (b - lim) % nthreads
	}
	return b % nthreads
}

// TestKernelIndex64 runs the 64-bit index kernels on n > 2^32 elements, executing only
// the threads that own the blocks around 2^31 and 2^32 elements and the last blocks, with
// a grid of at least one thread per block, and compares what they write with Fill at the
// same global indices.
func TestKernelIndex64(t *testing.T) {
	for _, s := range []Spec{
		{Dist: Uniform, Type: dtype.Float32},
		{Dist: FullRange, Type: dtype.Uint8},
		{Dist: Normal, Type: dtype.Float32},
		{Dist: Normal, Type: dtype.Float64},
		{Dist: Range, Type: dtype.Int32, Lo: -5, Hi: 1 << 30},
	} {
		k, err := genKernel(s, "sm_90", true, MaxRounds)
		if err != nil {
			t.Fatal(err)
		}
		pk, err := parsePTX(k.PTX)
		if err != nil {
			t.Fatal(err)
		}
		const n = int64(1)<<32 + 37
		const base = uint64(1) << 40
		seed, offset := uint64(123), uint64(1)<<63
		epb := int64(s.ElemsPerBlock())
		size := int64(s.Type.Size())
		nb := s.Blocks(n)
		nfull := uint64(n / epb)
		const ntid = 256
		nctaid := uint32((nb + ntid - 1) / ntid)
		nthreads := uint64(nctaid) * ntid
		params := map[string]uint64{}
		for i, name := range pk.params {
			params[name] = s.Args(base, n, seed, offset)[i]
		}
		mem := sparseMem{}
		threads := map[uint64]bool{}
		var blocks []uint64
		for _, b := range []uint64{1<<31/uint64(epb) - 1, 1 << 31 / uint64(epb), 1<<32/uint64(epb) - 1, 1 << 32 / uint64(epb), nb - 2, nb - 1} {
			g := ownerOf(s, b, nthreads, nfull)
			if threads[g] {
				continue
			}
			threads[g] = true
			pk.run(params, uint32(g%ntid), ntid, uint32(g/ntid), nctaid, mem)
			blocks = append(blocks, blocksOf(s, g, nthreads, nb, nfull)...)
		}
		written := 0
		for _, b := range blocks {
			i0 := int64(b) * epb
			i1 := min(i0+epb, n)
			want := make([]byte, (i1-i0)*size)
			written += len(want)
			if err := FillBytes(s, want, seed, offset, i0); err != nil {
				t.Fatal(err)
			}
			for j := range want {
				got, ok := mem[base+uint64(i0*size)+uint64(j)]
				if !ok || got != want[j] {
					t.Fatalf("%v: block %d byte %d: got %#x (written %v), want %#x", s, b, j, got, ok, want[j])
				}
			}
		}
		if len(mem) != written {
			t.Errorf("%v: %d bytes written, want %d", s, len(mem), written)
		}
	}
}

// TestHalfUniformAllValues runs the uniform float16 and bfloat16 transforms (every
// Options.HalfUniform variant, on targets with and without the packed half
// instructions) on the PTX simulator over words that hold every 16-bit value in both
// halves, and compares each value with uniformF16 and uniformBF16.
func TestHalfUniformAllValues(t *testing.T) {
	words := make([]uint32, 1<<16)
	for i := range words {
		words[i] = uint32(i) | uint32(0xFFFF-i)<<16
	}
	in := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(in[4*i:], w)
	}
	for _, ty := range []dtype.DType{dtype.Float16, dtype.BFloat16} {
		s := Spec{Dist: Uniform, Type: ty}
		want := uniformBF16
		if ty == dtype.Float16 {
			want = uniformF16
		}
		for _, target := range []string{"sm_90", "sm_80", "sm_75", "sm_52"} {
			for _, o := range []Options{{}, {HalfUniform: 2}, {HalfUniform: 1}} {
				cc, _ := strconv.Atoi(strings.TrimPrefix(target, "sm_"))
				v := o.halfUniform(s, cc)
				t.Run(fmt.Sprintf("%v/%s/v%d", ty, target, v), func(t *testing.T) {
					src := transformKernel(s, target, v)
					if v >= 2 && !strings.Contains(src, "fma.rn.") {
						t.Fatalf("variant %d without the packed multiply:\n%s", v, src)
					}
					k, err := parsePTX(src)
					if err != nil {
						t.Fatalf("%v\n%s", err, src)
					}
					out := bytes.Repeat([]byte{0xA5}, len(in))
					mem := &ptxsim.Regions{}
					mem.Map(0x10000, in)
					mem.Map(0x100000, out)
					k.launch([]uint64{0x10000, 0x100000}, 256, uint32(len(words)/4/256), mem)
					for i, w := range words {
						got := binary.LittleEndian.Uint32(out[4*i:])
						lo, hi := want(w&0xFFFF), want(w>>16)
						if uint16(got) != lo || uint16(got>>16) != hi {
							t.Fatalf("word %#08x: got %#04x %#04x, want %#04x %#04x", w, uint16(got), uint16(got>>16), lo, hi)
						}
					}
				})
			}
		}
	}
}

// transformKernel returns a kernel whose thread g reads the four words at in+16g and
// writes the uniform half transform (variant v) of them at out+16g.
func transformKernel(s Spec, target string, v int) string {
	a := &asm{counts: map[string]int{}}
	g := &kernelGen{a: a, s: s, halfUniform: v}
	in := a.op("rd", "ld.param.u64", "[in]")
	out := a.op("rd", "ld.param.u64", "[out]")
	g.halfUniformConsts()
	i := a.op("r", "mov.u32", "%tid.x")
	b := a.op("r", "mov.u32", "%ctaid.x")
	n := a.op("r", "mov.u32", "%ntid.x")
	i = a.op("r", "mad.lo.u32", b, n, i)
	off := a.op("rd", "mul.wide.u32", i, "16")
	var w [4]string
	for k := range w {
		w[k] = a.reg("r")
	}
	a.ins("ld.global.v4.u32 {%s}, [%s]", strings.Join(w[:], ", "), a.op("rd", "add.u64", in, off))
	o := g.transform(w)
	a.ins("st.global.v4.%s [%s], {%s}", o.typ, a.op("rd", "add.u64", out, off), strings.Join(o.regs, ", "))
	a.ins("ret")
	var m strings.Builder
	fmt.Fprintf(&m, ".version %s\n.target %s\n.address_size 64\n\n.visible .entry t(.param .u64 in, .param .u64 out)\n{\n", PTXVersion, target)
	for _, d := range regDecl {
		if c := a.counts[d.class]; c > 0 {
			fmt.Fprintf(&m, "\t.reg %s %%%s<%d>;\n", d.typ, d.class, c)
		}
	}
	m.WriteString(a.b.String())
	m.WriteString("}\n")
	return m.String()
}
