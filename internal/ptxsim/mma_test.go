package ptxsim

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// The tensor-core instructions against the PTX ISA's fragment layouts: one warp copies
// A and B into shared memory with cp.async, loads fragments with ldmatrix (B both as
// B^T rows and, with .trans, as rows of B), multiplies with mma.sync and stores D by the
// accumulator layout; TF32 loads its fragments with ld.shared by the documented
// layout. Elements are small multiples of 1/4, so D is exact.

// mmaKernel is one warp's kernel over the buffer at param buf: A at 0 (16 rows of 32
// bytes), B^T at 512 (8 rows of 32 bytes), B at 768 (16 rows of 16 bytes), D at 1024
// (16x8 float32), and D from the .trans fragments at 1536.
func mmaKernel(ty, body string) string {
	return `.version 7.8
.target sm_90
.address_size 64
.visible .entry k(.param .u64 buf)
{
	.shared .align 16 .b8 sm[1024];
	.reg .pred %p<4>;
	.reg .b32 %r<64>;
	.reg .b64 %rd<8>;
	.reg .f32 %f<16>;
	ld.param.u64 %rd1, [buf];
	mov.u32 %r1, %laneid;
	mov.u32 %r2, sm;
` + body + `
	// D: d0 (g, 2t), d1 (g, 2t+1), d2 (g+8, 2t), d3 (g+8, 2t+1)
	shr.u32 %r40, %r1, 2;
	and.b32 %r41, %r1, 3;
	shl.b32 %r41, %r41, 1;
	mad.lo.u32 %r42, %r40, 8, %r41;
	mul.wide.u32 %rd2, %r42, 4;
	add.u64 %rd2, %rd2, %rd1;
	st.global.v2.f32 [%rd2+1024], {%f0, %f1};
	st.global.v2.f32 [%rd2+1280], {%f2, %f3};
	st.global.v2.f32 [%rd2+1536], {%f4, %f5};
	st.global.v2.f32 [%rd2+1792], {%f6, %f7};
	ret;
}
`
}

const mma16Body = `
	// cp.async: lane l copies bytes 16l..16l+15 of A, then of B^T and B
	mul.wide.u32 %rd3, %r1, 16;
	add.u64 %rd4, %rd1, %rd3;
	shl.b32 %r3, %r1, 4;
	add.u32 %r4, %r2, %r3;
	cp.async.cg.shared.global [%r4], [%rd4], 16;
	cp.async.cg.shared.global [%r4+512], [%rd4+512], 16;
	cp.async.commit_group;
	cp.async.wait_group 0;
	bar.sync 0;
	// A: matrix j = l/8 holds rows 8(j%2).., columns 8(j/2)..
	shr.u32 %r5, %r1, 3;
	and.b32 %r6, %r5, 1;
	and.b32 %r7, %r1, 7;
	mad.lo.u32 %r7, %r6, 8, %r7;
	shr.u32 %r6, %r5, 1;
	shl.b32 %r6, %r6, 4;
	mad.lo.u32 %r8, %r7, 32, %r6;
	add.u32 %r8, %r8, %r2;
	ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r10, %r11, %r12, %r13}, [%r8];
	// B^T: lanes 0-15, matrix j = l/8 holds k 8j..
	and.b32 %r5, %r1, 15;
	and.b32 %r7, %r5, 7;
	shr.u32 %r6, %r5, 3;
	shl.b32 %r6, %r6, 4;
	mad.lo.u32 %r9, %r7, 32, %r6;
	add.u32 %r9, %r9, %r2;
	ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r14, %r15}, [%r9+512];
	// B by rows k: lane l < 16 gives row l
	shl.b32 %r9, %r5, 4;
	add.u32 %r9, %r9, %r2;
	ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r16, %r17}, [%r9+768];
	mov.f32 %f0, 0f3F000000;
	mov.f32 %f1, 0f3F000000;
	mov.f32 %f2, 0f3F000000;
	mov.f32 %f3, 0f3F000000;
	mma.sync.aligned.m16n8k16.row.col.f32.TY.TY.f32 {%f0, %f1, %f2, %f3}, {%r10, %r11, %r12, %r13}, {%r14, %r15}, {%f0, %f1, %f2, %f3};
	mov.f32 %f4, 0f3F000000;
	mov.f32 %f5, 0f3F000000;
	mov.f32 %f6, 0f3F000000;
	mov.f32 %f7, 0f3F000000;
	mma.sync.aligned.m16n8k16.row.col.f32.TY.TY.f32 {%f4, %f5, %f6, %f7}, {%r10, %r11, %r12, %r13}, {%r16, %r17}, {%f4, %f5, %f6, %f7};
`

// quarter returns a random multiple of 1/4 in [-2, 2].
func quarter(rng *rand.Rand) float64 { return float64(rng.IntN(17)-8) / 4 }

func TestMma16(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, ty := range []string{"f16", "bf16"} {
		t.Run(ty, func(t *testing.T) {
			m, err := Parse(mmaKernel(ty, strings.ReplaceAll(mma16Body, "TY", ty)))
			if err != nil {
				t.Fatal(err)
			}
			enc := func(x float64) uint16 { // exact: small multiples of 1/4
				if ty == "bf16" {
					return uint16(math.Float32bits(float32(x)) >> 16)
				}
				return uint16(fmtF16.round(decode64(x), rn))
			}
			var a [16][16]float64
			var b [16][8]float64
			buf := make([]byte, 2048)
			for r := range 16 {
				for c := range 16 {
					a[r][c] = quarter(rng)
					binary.LittleEndian.PutUint16(buf[2*(16*r+c):], enc(a[r][c]))
				}
			}
			for k := range 16 {
				for n := range 8 {
					b[k][n] = quarter(rng)
					binary.LittleEndian.PutUint16(buf[512+2*(16*n+k):], enc(b[k][n]))
					binary.LittleEndian.PutUint16(buf[768+2*(8*k+n):], enc(b[k][n]))
				}
			}
			checkMma(t, m, buf, func(r, n int) float64 {
				s := 0.5
				for k := range 16 {
					s += a[r][k] * b[k][n]
				}
				return s
			})
		})
	}
}

func checkMma(t *testing.T, m *Module, buf []byte, want func(r, n int) float64) {
	t.Helper()
	for i := 1024; i < len(buf); i++ {
		buf[i] = 0xA5
	}
	mem := &Regions{}
	mem.Map(1<<32, buf)
	if err := m.Func("k").Launch(mem, Linear(1, 32), []uint64{1 << 32}); err != nil {
		t.Fatal(err)
	}
	for half, base := range []int{1024, 1536} {
		for r := range 16 {
			for n := range 8 {
				got := math.Float32frombits(binary.LittleEndian.Uint32(buf[base+4*(8*r+n):]))
				if w := want(r, n); float64(got) != w {
					t.Errorf("D%d(%d, %d) = %v, want %v", half, r, n, got, w)
				}
			}
		}
	}
}

func TestMmaTF32(t *testing.T) {
	// A (16x8 float32) at 0, B (8x8, row k) at 512, both by ld.global into the
	// fragments: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4); b0 (t, g),
	// b1 (t+4, g). The operands carry low bits that cvt.rna.tf32 rounds away (the
	// first product) and that mma ignores (the second, without the cvt).
	ld := func(dst, row, col string, base int) string {
		return fmt.Sprintf("\tmad.lo.u32 %%r30, %s, 8, %s;\n\tmul.wide.u32 %%rd3, %%r30, 4;\n\tadd.u64 %%rd3, %%rd3, %%rd1;\n\tld.global.b32 %s, [%%rd3+%d];\n", row, col, dst, base)
	}
	body := `
	shr.u32 %r3, %r1, 2;
	and.b32 %r4, %r1, 3;
	add.u32 %r5, %r3, 8;
	add.u32 %r6, %r4, 4;
` + ld("%r10", "%r3", "%r4", 0) + ld("%r11", "%r5", "%r4", 0) + ld("%r12", "%r3", "%r6", 0) + ld("%r13", "%r5", "%r6", 0) +
		ld("%r14", "%r4", "%r3", 512) + ld("%r15", "%r6", "%r3", 512) + `
	cvt.rna.tf32.f32 %r20, %r10;
	cvt.rna.tf32.f32 %r21, %r11;
	cvt.rna.tf32.f32 %r22, %r12;
	cvt.rna.tf32.f32 %r23, %r13;
	cvt.rna.tf32.f32 %r24, %r14;
	cvt.rna.tf32.f32 %r25, %r15;
	mov.f32 %f0, 0f3F000000;
	mov.f32 %f1, 0f3F000000;
	mov.f32 %f2, 0f3F000000;
	mov.f32 %f3, 0f3F000000;
	mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f0, %f1, %f2, %f3}, {%r20, %r21, %r22, %r23}, {%r24, %r25}, {%f0, %f1, %f2, %f3};
	mov.f32 %f4, 0f3F000000;
	mov.f32 %f5, 0f3F000000;
	mov.f32 %f6, 0f3F000000;
	mov.f32 %f7, 0f3F000000;
	mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f4, %f5, %f6, %f7}, {%r10, %r11, %r12, %r13}, {%r14, %r15}, {%f4, %f5, %f6, %f7};
`
	m, err := Parse(mmaKernel("tf32", body))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var a [16][8]float64
	var b [8][8]float64
	buf := make([]byte, 2048)
	for r := range 16 {
		for c := range 8 {
			a[r][c] = quarter(rng)
			// low bits under TF32's precision: 0x0fff is rounded and truncated away
			binary.LittleEndian.PutUint32(buf[4*(8*r+c):], math.Float32bits(float32(a[r][c]))|0x0fff*uint32(rng.IntN(2)))
		}
	}
	for k := range 8 {
		for n := range 8 {
			b[k][n] = quarter(rng)
			binary.LittleEndian.PutUint32(buf[512+4*(8*k+n):], math.Float32bits(float32(b[k][n])))
		}
	}
	checkMma(t, m, buf, func(r, n int) float64 {
		s := 0.5
		for k := range 8 {
			s += a[r][k] * b[k][n]
		}
		return s
	})
}

func TestCpAsyncHazard(t *testing.T) {
	// A copy lands when its thread waits: a read of its bytes by another thread after
	// the barrier but before that wait is a hazard (on a GPU, stale data). Odd lanes
	// copy 12 bytes of 16: the last word is zero.
	src := `.version 7.8
.target sm_90
.address_size 64
.visible .entry k(.param .u64 buf)
{
	.shared .align 16 .b8 sm[512];
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [buf];
	mov.u32 %r1, %laneid;
	mov.u32 %r2, sm;
	mul.wide.u32 %rd2, %r1, 16;
	add.u64 %rd2, %rd2, %rd1;
	shl.b32 %r3, %r1, 4;
	add.u32 %r3, %r3, %r2;
	and.b32 %r6, %r1, 1;
	mad.lo.u32 %r6, %r6, -4, 16;
	cp.async.cg.shared.global [%r3], [%rd2], 16, %r6;
	cp.async.commit_group;
	WAIT1
	bar.sync 0;
	xor.b32 %r4, %r3, 16;
	ld.shared.u32 %r5, [%r4+12];
	WAIT2
	st.global.u32 [%rd2], %r5;
	ret;
}
`
	for _, c := range []struct {
		w1, w2, fault string
	}{
		{"cp.async.wait_group 0;", "", ""},
		{"cp.async.wait_all;", "", ""},
		{"", "cp.async.wait_group 0;", "hazard"},
		{"cp.async.wait_group 1;", "cp.async.wait_all;", "hazard"},
	} {
		m, err := Parse(strings.NewReplacer("WAIT1", c.w1, "WAIT2", c.w2).Replace(src))
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 512)
		for i := range buf {
			buf[i] = byte(i)
		}
		mem := &Regions{}
		mem.Map(1<<32, buf)
		err = m.Func("k").Launch(mem, Linear(1, 32), []uint64{1 << 32})
		switch {
		case c.fault == "" && err != nil:
			t.Errorf("%q %q: %v", c.w1, c.w2, err)
		case c.fault != "" && (err == nil || !strings.Contains(err.Error(), c.fault)):
			t.Errorf("%q %q: error %v, want %q", c.w1, c.w2, err, c.fault)
		case c.fault == "":
			// lane l read the word at 16(l^1)+12
			for l := range 32 {
				want := uint32(byte(16*(l^1)+12))*0x01010101 + 0x03020100
				if (l^1)&1 == 1 {
					want = 0
				}
				if got := binary.LittleEndian.Uint32(buf[16*l:]); got != want {
					t.Errorf("%q: lane %d read %#x, want %#x", c.w1, l, got, want)
				}
			}
		}
	}
}
