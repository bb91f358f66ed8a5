package ptx

import (
	"strings"
	"sync"
	"testing"
)

// axpyKernel writes y[i] = a*x[i] + b over float32 with a grid-stride loop, 64-bit
// indices, 16-byte vector loads and stores when both arrays are 16-byte aligned, and a
// scalar loop for the rest.
func axpyKernel(m *Module) *Func {
	k := m.Kernel("axpy_f32", P("x", U64), P("y", U64), P("n", U64), P("a", F32), P("b", F32))
	xg, yg := k.Reg(U64), k.Reg(U64)
	k.CvtaTo(Global, xg, k.LdParam(0))
	k.CvtaTo(Global, yg, k.LdParam(1))
	n, a, b := k.LdParam(2), k.LdParam(3), k.LdParam(4)

	// i = ctaid.x*ntid.x + tid.x and stride = nctaid.x*ntid.x, in 64 bits.
	ctaid, ntid, tid, nctaid := k.Special(CtaidX), k.Special(NtidX), k.Special(TidX), k.Special(NctaidX)
	tid64 := k.Reg(U64)
	k.Cvt(tid64, tid)
	start := k.Reg(U64)
	k.MulWide(start, ctaid, ntid)
	k.Add(start, start, tid64)
	stride := k.Reg(U64)
	k.MulWide(stride, nctaid, ntid)

	// Vector part: nv = n/4 when both pointers are 16-byte aligned, else 0.
	or := k.Reg(U64)
	k.Or(or, xg, yg)
	k.And(or, or, Int(15))
	aligned := k.Setp(Eq, or, Int(0))
	nv := k.Reg(U64)
	k.Shr(nv, n, Int(2))
	k.Selp(nv, nv, Int(0), aligned)

	i := k.Reg(U64)
	k.Mov(i, start)
	vloop, tail := k.NewLabel(), k.NewLabel()
	k.Place(vloop)
	k.At(k.Setp(Ge, i, nv)).Bra(tail)
	off := k.Reg(U64)
	k.Shl(off, i, Int(4))
	px, py := k.Reg(U64), k.Reg(U64)
	k.Add(px, xg, off)
	k.Add(py, yg, off)
	v := k.Regs(F32, 4)
	k.Ld(Global, NC, F32, Mem(px, 0), v...)
	for j := range v {
		k.Fma(v[j], a, v[j], b)
	}
	k.St(Global, CacheCS, F32, Mem(py, 0), v[0], v[1], v[2], v[3])
	k.Add(i, i, stride)
	k.Bra(vloop)

	// Scalar part: elements 4*nv .. n-1.
	k.Place(tail)
	k.Shl(i, nv, Int(2))
	k.Add(i, i, start)
	sloop, done := k.NewLabel(), k.NewLabel()
	k.Place(sloop)
	k.At(k.Setp(Ge, i, n)).Bra(done)
	k.Shl(off, i, Int(2))
	k.Add(px, xg, off)
	k.Add(py, yg, off)
	s := k.Reg(F32)
	k.Ld(Global, NC, F32, Mem(px, 0), s)
	k.Fma(s, a, s, b)
	k.St(Global, CacheDefault, F32, Mem(py, 0), s)
	k.Add(i, i, stride)
	k.Bra(sloop)
	k.Place(done)
	k.Ret()
	return k
}

func TestExampleKernelPtxas(t *testing.T) {
	m := NewModule(9, 0)
	axpyKernel(m)
	src := m.String()
	for _, want := range []string{".version 7.8", ".target sm_90", ".address_size 64",
		"ld.global.nc.v4.f32", "st.global.cs.v4.f32", "mul.wide.u32", "fma.rn.f32"} {
		if !strings.Contains(src, want) {
			t.Errorf("missing %q in\n%s", want, src)
		}
	}
	r := ptxas(t, src)
	checkNoSpill(t, r.Log)
	if testing.Verbose() {
		t.Logf("%s\n%s", src, r.Log)
	}
}

// TestDeterministicConcurrent builds the same module from many goroutines and checks
// every copy is byte-identical.
func TestDeterministicConcurrent(t *testing.T) {
	build := func() string {
		m := NewModule(9, 0)
		m.Var(Global, "tbl", B32, 4, 3, []uint64{1, 2, 3})
		m.ExternShared("dyn", 16)
		m.Shared("tile", F32, 16, 1024)
		axpyKernel(m)
		return m.String()
	}
	want := build()
	var wg sync.WaitGroup
	got := make([]string, 16)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[g] = build()
		}()
	}
	wg.Wait()
	for g, s := range got {
		if s != want {
			t.Fatalf("goroutine %d built different text", g)
		}
	}
}
