package ptxsim

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

// The scheduler's semantics: barriers, warp-synchronous instructions, atomics, shared
// memory and its hazard check, inter-block protocols, and the faults for what a GPU
// leaves undefined.

// blockKernel parses a kernel with parameters out (u64) and n (u32), the registers of
// kernel(), %r1 = the linear thread id, %r2 = the block id, %r3 = the lane, %rd1 = out,
// and shared arrays sm (256 words) and flag (1 word), followed by body.
func blockKernel(t *testing.T, body string) *Func {
	t.Helper()
	m, err := Parse(blockKernelSrc(body))
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	return m.Func("k")
}

// blockKernelSrc is blockKernel's PTX.
func blockKernelSrc(body string) string {
	return `.version 7.8
.target sm_90
.address_size 64
.extern .shared .align 16 .b8 dyn[];
.visible .entry k(
	.param .u64 out,
	.param .u32 n
)
{
	.shared .align 4 .b32 sm[256];
	.shared .align 4 .b32 flag[1];
	.reg .pred %p<8>;
	.reg .b32 %r<32>;
	.reg .b64 %rd<16>;
	.reg .f32 %f<8>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %laneid;
` + body + `
	ret;
}
`
}

// launchOut runs f over a grid with out mapped at 1<<32 (words, poisoned) and returns out.
func launchOut(t *testing.T, f *Func, cfg Config, words int) ([]uint32, error) {
	t.Helper()
	b := make([]byte, 4*words)
	for i := range b {
		b[i] = 0xA5
	}
	mem := &Regions{}
	mem.Map(1<<32, b)
	err := f.Launch(mem, cfg, []uint64{1 << 32, uint64(words)})
	out := make([]uint32, words)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out, err
}

// storeWord is body text storing %r<v> at out[%r<i>].
func storeWord(i, v string) string {
	return "\tmul.wide.u32 %rd2, " + i + ", 4;\n\tadd.u64 %rd2, %rd1, %rd2;\n\tst.global.u32 [%rd2], " + v + ";\n"
}

func TestBarrierReduction(t *testing.T) {
	// Each block sums 0..255 through shared memory (a tree with barriers) and adds its
	// sum plus its id to out[0] atomically; thread 0 also stores the sum at out[1+block].
	f := blockKernel(t, `
	mov.u32 %r4, sm;
	shl.b32 %r5, %r1, 2;
	add.u32 %r5, %r4, %r5;
	st.shared.u32 [%r5], %r1;
	bar.sync 0;
	mov.u32 %r6, 128;
$L__loop:
	setp.ge.u32 %p1, %r1, %r6;
	@%p1 bra $L__skip;
	shl.b32 %r7, %r6, 2;
	add.u32 %r7, %r5, %r7;
	ld.shared.u32 %r8, [%r7];
	ld.shared.u32 %r9, [%r5];
	add.u32 %r9, %r9, %r8;
	st.shared.u32 [%r5], %r9;
$L__skip:
	bar.sync 0;
	shr.u32 %r6, %r6, 1;
	setp.ne.u32 %p2, %r6, 0;
	@%p2 bra $L__loop;
	setp.ne.u32 %p3, %r1, 0;
	@%p3 bra $L__end;
	ld.shared.u32 %r10, [sm];
	add.u32 %r11, %r10, %r2;
	atom.global.add.u32 %r12, [%rd1], %r11;
	add.u32 %r13, %r2, 1;
`+storeWord("%r13", "%r10")+`
$L__end:`)
	const grid = 5
	cfg := Linear(grid, 256)
	cfg.Resident = 2
	out, err := launchOut(t, f, cfg, 1+grid)
	if err != nil {
		t.Fatal(err)
	}
	want := uint32(0xA5A5A5A5 + grid*255*128 + grid*(grid-1)/2)
	if out[0] != want {
		t.Errorf("atomic total %#x, want %#x", out[0], want)
	}
	for b := 1; b <= grid; b++ {
		if out[b] != 255*128 {
			t.Errorf("block %d: sum %d", b-1, out[b])
		}
	}
}

// TestBarrierAfterExit checks PTX's rule for exit: threads that exited count as
// arrived at a barrier of the whole block, so the others pass it.
func TestBarrierAfterExit(t *testing.T) {
	f := blockKernel(t, `
	setp.ge.u32 %p1, %r1, 40;
	@%p1 ret;
	setp.eq.u32 %p2, %r1, 0;
	@%p2 st.shared.u32 [flag], 7;
	bar.sync 0;
	ld.shared.u32 %r4, [flag];
`+storeWord("%r1", "%r4"))
	out, err := launchOut(t, f, Linear(1, 64), 64)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if out[i] != 7 {
			t.Fatalf("thread %d read %#x", i, out[i])
		}
	}
}

func TestShuffles(t *testing.T) {
	// out[4*tid+k] for shfl k of the table below: the value read (a = 100+lane) and,
	// in the high half, the predicate.
	shfls := []struct {
		mode string
		b, c uint32
		want func(lane int) (int, bool)
	}{
		{"down", 1, 31, func(l int) (int, bool) {
			if l == 31 {
				return l, false
			}
			return l + 1, true
		}},
		{"up", 3, 0, func(l int) (int, bool) {
			if l < 3 {
				return l, false
			}
			return l - 3, true
		}},
		{"bfly", 16, 31, func(l int) (int, bool) { return l ^ 16, true }},
		{"idx", 5, 0x1807, func(l int) (int, bool) { return l&^7 | 5, true }}, // segments of 8
		{"down", 2, 0x1807, func(l int) (int, bool) {
			if l%8 >= 6 {
				return l, false
			}
			return l + 2, true
		}},
		{"up", 1, 0x1800, func(l int) (int, bool) {
			if l%8 == 0 {
				return l, false
			}
			return l - 1, true
		}},
	}
	var body strings.Builder
	body.WriteString("\tadd.u32 %r4, %r3, 100;\n")
	for k, s := range shfls {
		body.WriteString("\tshfl.sync." + s.mode + ".b32 %r5|%p1, %r4, " + itoa(s.b) + ", " + itoa(s.c) + ", 0xffffffff;\n")
		body.WriteString("\tselp.u32 %r6, 0x10000, 0, %p1;\n\tor.b32 %r5, %r5, %r6;\n")
		body.WriteString("\tmad.lo.u32 %r7, %r1, " + itoa(uint32(len(shfls))) + ", " + itoa(uint32(k)) + ";\n")
		body.WriteString(storeWord("%r7", "%r5"))
	}
	out, err := launchOut(t, blockKernel(t, body.String()), Linear(1, 64), 64*len(shfls))
	if err != nil {
		t.Fatal(err)
	}
	for tid := range 64 {
		for k, s := range shfls {
			j, p := s.want(tid % 32)
			want := uint32(100+j) | uint32(b2u(p))<<16
			if got := out[tid*len(shfls)+k]; got != want {
				t.Errorf("thread %d: shfl.%s b=%d c=%#x: %#x, want %#x", tid, s.mode, s.b, s.c, got, want)
			}
		}
	}
}

func itoa(v uint32) string { return strconv.FormatUint(uint64(v), 10) }

func TestVotesAndReductions(t *testing.T) {
	// Lane l votes l%3 == 0; out[8*tid+k] for: ballot, all, any, uni (a uniform
	// predicate), match.any of l/4, match.all of 7, redux.add, redux.max.s32 of -l.
	f := blockKernel(t, `
	rem.u32 %r4, %r3, 3;
	setp.eq.u32 %p1, %r4, 0;
	vote.sync.ballot.b32 %r10, %p1, 0xffffffff;
	vote.sync.all.pred %p2, %p1, 0xffffffff;
	selp.u32 %r11, 1, 0, %p2;
	vote.sync.any.pred %p2, %p1, 0xffffffff;
	selp.u32 %r12, 1, 0, %p2;
	setp.lt.u32 %p3, %r2, 100;
	vote.sync.uni.pred %p2, %p3, 0xffffffff;
	selp.u32 %r13, 1, 0, %p2;
	shr.u32 %r5, %r3, 2;
	match.any.sync.b32 %r14, %r5, 0xffffffff;
	mov.u32 %r6, 7;
	match.all.sync.b32 %r15|%p4, %r6, 0xffffffff;
	redux.sync.add.u32 %r16, %r3, 0xffffffff;
	neg.s32 %r7, %r3;
	redux.sync.min.s32 %r17, %r7, 0xffffffff;
	shl.b32 %r20, %r1, 3;
`+func() string {
		var s string
		for k := range 8 {
			s += "\tadd.u32 %r21, %r20, " + itoa(uint32(k)) + ";\n" + storeWord("%r21", "%r1"+string(rune('0'+k)))
		}
		return s
	}())
	out, err := launchOut(t, f, Linear(1, 32), 8*32)
	if err != nil {
		t.Fatal(err)
	}
	var ballot uint32
	for l := 0; l < 32; l += 3 {
		ballot |= 1 << l
	}
	for l := range 32 {
		want := []uint32{ballot, 0, 1, 1, 0xf << (l / 4 * 4), 0xffffffff, 31 * 32 / 2, uint32(-31 & 0xffffffff)}
		for k, w := range want {
			if got := out[8*l+k]; got != w {
				t.Errorf("lane %d, result %d: %#x, want %#x", l, k, got, w)
			}
		}
	}
}

func TestAtomics(t *testing.T) {
	// Every thread of 3 blocks: atom.add on out[0], atom.inc (wrapping at 99) on
	// out[1], atom.max.s32 of -tid on out[2], atom.cas claiming out[3] (0 -> tid+1),
	// red.add.f32 of 0.5 on out[4], and shared atom.add counting the block in flag,
	// stored by thread 0 at out[5+block].
	f := blockKernel(t, `
	atom.global.add.u32 %r4, [%rd1], 1;
	atom.global.inc.u32 %r4, [%rd1+4], 99;
	neg.s32 %r5, %r1;
	atom.global.max.s32 %r4, [%rd1+8], %r5;
	add.u32 %r6, %r1, 1;
	atom.global.cas.b32 %r4, [%rd1+12], 0, %r6;
	red.global.add.f32 [%rd1+16], 0f3F000000;
	setp.eq.u32 %p1, %r1, 0;
	@%p1 st.shared.u32 [flag], 0;
	bar.sync 0;
	atom.shared.add.u32 %r7, [flag], 2;
	bar.sync 0;
	@!%p1 bra $L__end;
	ld.shared.u32 %r8, [flag];
	add.u32 %r9, %r2, 5;
`+storeWord("%r9", "%r8")+`
$L__end:`)
	b := make([]byte, 4*8)
	binary.LittleEndian.PutUint32(b[8:], uint32(0x80000000))
	mem := &Regions{}
	mem.Map(1<<32, b)
	cfg := Linear(3, 96)
	cfg.Resident = 3
	if err := f.Launch(mem, cfg, []uint64{1 << 32, 8}); err != nil {
		t.Fatal(err)
	}
	w := func(i int) uint32 { return binary.LittleEndian.Uint32(b[4*i:]) }
	if w(0) != 288 || w(1) != 288%100 || w(2) != 0 || w(3) == 0 || w(3) > 96 ||
		math.Float32frombits(w(4)) != 144 || w(5) != 192 || w(6) != 192 || w(7) != 192 {
		t.Errorf("atomics: %v", []uint32{w(0), w(1), w(2), w(3), w(4), w(5), w(6), w(7)})
	}
}

func TestSharedHazards(t *testing.T) {
	// Thread 0 writes a word the others read: with a barrier between, fine; without,
	// a read after write hazard (in another warp), and also within one warp unless a
	// bar.warp.sync separates them.
	for _, c := range []struct {
		name, sync string
		threads    int
		fault      string
	}{
		{"barrier", "bar.sync 0;", 64, ""},
		{"none", "", 64, "hazard"},
		{"warp", "bar.warp.sync 0xffffffff;", 32, ""},
		{"warp/none", "", 32, "hazard"},
	} {
		f := blockKernel(t, `
	setp.eq.u32 %p1, %r1, 0;
	@%p1 st.shared.u32 [flag], 7;
	`+c.sync+`
	ld.shared.u32 %r4, [flag];
`+storeWord("%r1", "%r4"))
		out, err := launchOut(t, f, Linear(1, c.threads), c.threads)
		switch {
		case c.fault == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.fault == "" && out[c.threads-1] != 7:
			t.Errorf("%s: read %#x", c.name, out[c.threads-1])
		case c.fault != "" && (!errors.Is(err, ErrFault) || !strings.Contains(err.Error(), c.fault)):
			t.Errorf("%s: %v, want a %s fault", c.name, err, c.fault)
		}
	}
	// A strong read (ld.volatile) of a word other threads update atomically is no
	// hazard; a plain write after it by another thread is, as after a plain read.
	for _, c := range []struct {
		name, write, fault string
	}{
		{"atomic after strong read", "atom.shared.add.u32 %r5, [flag], 1;", ""},
		{"plain write after strong read", "st.shared.u32 [flag], 9;", "hazard"},
	} {
		f := blockKernel(t, `
	setp.eq.u32 %p1, %r1, 0;
	@%p1 st.shared.u32 [flag], 7;
	bar.sync 0;
	ld.volatile.shared.u32 %r4, [flag];
	setp.eq.u32 %p2, %r1, 33;
	@%p2 `+c.write+`
`+storeWord("%r1", "%r4"))
		_, err := launchOut(t, f, Linear(1, 64), 64)
		switch {
		case c.fault == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.fault != "" && (!errors.Is(err, ErrFault) || !strings.Contains(err.Error(), c.fault)):
			t.Errorf("%s: %v, want a %s fault", c.name, err, c.fault)
		}
	}
	// Shared memory the block never wrote is not zero.
	out, err := launchOut(t, blockKernel(t, "\tld.shared.u32 %r4, [sm+8];\n"+storeWord("%r1", "%r4")), Linear(1, 1), 1)
	if err != nil || out[0] == 0 {
		t.Errorf("unwritten shared memory: %#x, %v", out[0], err)
	}
}

func TestUndefinedFaults(t *testing.T) {
	for _, c := range []struct {
		name, body string
		threads    int
		fault      string
	}{
		{"divergent barrier", "setp.lt.u32 %p1, %r1, 32;\n\t@%p1 bra $L__a;\n\tbar.sync 0;\n\tbra $L__end;\n$L__a:\n\tbar.sync 1;\n$L__end:", 64, "deadlock"},
		{"exited lane", "setp.eq.u32 %p1, %r3, 5;\n\t@%p1 ret;\n\tshfl.sync.idx.b32 %r4, %r1, 0, 31, 0xffffffff;", 32, "exited"},
		{"partial warp", "shfl.sync.idx.b32 %r4, %r1, 0, 31, 0xffffffff;", 40, "past the block"},
		{"different shuffles", "setp.lt.u32 %p1, %r3, 16;\n\t@%p1 bra $L__a;\n\tshfl.sync.idx.b32 %r4, %r1, 0, 31, 0xffffffff;\n\tbra $L__end;\n$L__a:\n\tshfl.sync.idx.b32 %r4, %r1, 1, 31, 0xffffffff;\n$L__end:", 32, "deadlock"},
		{"out of bounds", "ld.shared.u32 %r4, [sm+4096];", 1, "shared access"},
		{"misaligned", "ld.global.u32 %r4, [%rd1+2];", 1, "misaligned"},
		{"prefetch past the buffer", "prefetch.global.L2 [%rd1+256];", 1, "prefetch at"},
	} {
		_, err := launchOut(t, blockKernel(t, c.body), Linear(1, c.threads), 64)
		if !errors.Is(err, ErrFault) || !strings.Contains(err.Error(), c.fault) {
			t.Errorf("%s: %v, want a fault about %q", c.name, err, c.fault)
		}
	}
}

// TestPrefetch runs prefetches (hints: no result) of every form inside the buffer,
// unaligned too, and of shared memory through a generic address, beside a store that
// must still land. (Only an address outside every allocation faults: a prefetch of
// the wrong place in a buffer passes, as it would on a GPU.)
func TestPrefetch(t *testing.T) {
	body := "prefetch.global.L2 [%rd1];\n\tprefetch.global.L2 [%rd1+255];\n\tprefetch.global.L1 [%rd1+4];\n" +
		"\tprefetch.L2 [%rd1+8];\n\tprefetch.global.L2::evict_last [%rd1+128];\n" +
		"\tcvta.shared.u64 %rd3, sm;\n\tprefetch.L2 [%rd3+64];\n" + storeWord("%r1", "%r1")
	out, err := launchOut(t, blockKernel(t, body), Linear(1, 64), 64)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if v != uint32(i) {
			t.Fatalf("out[%d] = %#x, want %d", i, v, i)
		}
	}
	if _, err := Parse(blockKernelSrc("prefetch.global.L3 [%rd1];")); err == nil {
		t.Error("prefetch.global.L3 parsed")
	}
}

// TestLookback runs a chain of blocks, each waiting for its predecessor's flag
// (ld.acquire in a loop with nanosleep) and publishing out[b] = out[b-1] + b with a
// st.release, at most three blocks resident; then the same chain in reverse order
// with one resident block, which can never finish.
func TestLookback(t *testing.T) {
	// chain: block first publishes out[first] = first; the others wait for block
	// %r2+step (step "-1" or "1").
	chain := func(first, step string) *Func {
		return blockKernel(t, `
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra $L__end;
	mov.u32 %r5, 0;
	setp.eq.u32 %p2, %r2, `+first+`;
	@%p2 bra $L__publish;
	add.s32 %r6, %r2, `+step+`;
	mul.wide.u32 %rd3, %r6, 8;
	add.u64 %rd3, %rd1, %rd3;
$L__wait:
	ld.acquire.gpu.global.u32 %r7, [%rd3+4];
	setp.eq.u32 %p3, %r7, 0;
	@%p3 nanosleep.u32 32;
	@%p3 bra $L__wait;
	ld.global.u32 %r5, [%rd3];
$L__publish:
	add.u32 %r5, %r5, %r2;
	mul.wide.u32 %rd4, %r2, 8;
	add.u64 %rd4, %rd1, %rd4;
	st.global.u32 [%rd4], %r5;
	st.release.gpu.global.u32 [%rd4+4], 1;
$L__end:`)
	}
	b := make([]byte, 8*20)
	mem := &Regions{}
	mem.Map(1<<32, b)
	cfg := Linear(20, 64)
	cfg.Resident = 3
	if err := chain("0", "-1").Launch(mem, cfg, []uint64{1 << 32, 0}); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if got := binary.LittleEndian.Uint32(b[8*i:]); got != uint32(i*(i+1)/2) {
			t.Errorf("out[%d] = %d, want %d", i, got, i*(i+1)/2)
		}
	}
	clear(b)
	cfg.Resident, cfg.MaxSteps = 1, 200_000
	if err := chain("19", "1").Launch(mem, cfg, []uint64{1 << 32, 0}); !errors.Is(err, ErrFault) {
		t.Errorf("a chain against the block order on one resident block: %v", err)
	}
}

func TestDynamicSharedAndParams(t *testing.T) {
	// Generic addresses of the dynamic shared memory (cvta), %dynamic_smem_size, and a
	// by-value parameter of 16 bytes.
	src := `.version 7.8
.target sm_90
.address_size 64
.extern .shared .align 16 .b8 dyn[];
.visible .entry k(.param .u64 out, .param .align 8 .b8 args[16])
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [args+8];
	mov.u64 %rd2, dyn;
	cvta.shared.u64 %rd3, %rd2;
	mov.u32 %r2, %tid.x;
	mul.wide.u32 %rd4, %r2, 4;
	add.u64 %rd4, %rd3, %rd4;
	add.u32 %r3, %r1, %r2;
	st.u32 [%rd4], %r3;
	ld.u32 %r4, [%rd4];
	mov.u32 %r5, %dynamic_smem_size;
	add.u32 %r4, %r4, %r5;
	mul.wide.u32 %rd5, %r2, 4;
	add.u64 %rd5, %rd1, %rd5;
	st.global.u32 [%rd5], %r4;
	ret;
}
`
	m, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4*8)
	mem := &Regions{}
	mem.Map(1<<32, b)
	args := make([]byte, 16)
	binary.LittleEndian.PutUint32(args[8:], 1000)
	cfg := Linear(1, 8)
	cfg.SharedMem = 64
	if err := m.Func("k").LaunchParams(mem, cfg, [][]byte{binary.LittleEndian.AppendUint64(nil, 1<<32), args}); err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		if got := binary.LittleEndian.Uint32(b[4*i:]); got != uint32(1000+i+64) {
			t.Errorf("thread %d: %d", i, got)
		}
	}
}
