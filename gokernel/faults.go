package gokernel

import (
	"fmt"
	"go/token"
	"strconv"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/ptx"
)

// siteKind is what a check site checks.
type siteKind uint8

// The kinds mirror the Go runtime's messages (runtime/error.go).
const (
	kIndex siteKind = iota + 1
	kSliceAcap
	kSliceB
	kSlice3Acap
	kSlice3B
	kSlice3C
	kDivide
	kShift
	kPanic
)

// site is one place in the source where a thread can fail.
type site struct {
	kind   siteKind
	file   string
	line   int
	signed bool   // the reported index's type is signed
	msg    string // kPanic: the panic value's text
}

// The words of a launch's check slot (gpu.Stream.LaunchChecked: word 0 the flag,
// word 1 the claim).
const (
	recWords  = gpu.CheckSlotWords
	recX      = 8  // byte offset of x (u64)
	recY      = 16 // of y (u64)
	recBlock  = 24 // ctaid.x, .y, .z (u32 each)
	recThread = 36 // tid.x, .y, .z
	// recCPU in word 0 marks a failure the CPU recorded (its Fault is kept aside).
	recCPU = 0xFFFFFFFF
)

// message returns the failure's text as the Go runtime words it ("index out of range
// [5] with length 5"), from the site and the recorded values x and y.
func (s *site) message(x, y uint64) string {
	neg := s.signed && int64(x) < 0
	xs := strconv.FormatUint(x, 10)
	if s.signed {
		xs = strconv.FormatInt(int64(x), 10)
	}
	ys := strconv.FormatInt(int64(y), 10)
	switch s.kind {
	case kIndex:
		if neg {
			return "index out of range [" + xs + "]"
		}
		return "index out of range [" + xs + "] with length " + ys
	case kSliceAcap:
		if neg {
			return "slice bounds out of range [:" + xs + "]"
		}
		return "slice bounds out of range [:" + xs + "] with capacity " + ys
	case kSliceB:
		if neg {
			return "slice bounds out of range [" + xs + ":]"
		}
		return "slice bounds out of range [" + xs + ":" + ys + "]"
	case kSlice3Acap:
		if neg {
			return "slice bounds out of range [::" + xs + "]"
		}
		return "slice bounds out of range [::" + xs + "] with capacity " + ys
	case kSlice3B:
		if neg {
			return "slice bounds out of range [:" + xs + ":]"
		}
		return "slice bounds out of range [:" + xs + ":" + ys + "]"
	case kSlice3C:
		if neg {
			return "slice bounds out of range [" + xs + "::]"
		}
		return "slice bounds out of range [" + xs + ":" + ys + ":]"
	case kDivide:
		return "integer divide by zero"
	case kShift:
		return "negative shift amount"
	case kPanic:
		return s.msg
	}
	return fmt.Sprintf("failure of kind %d", s.kind)
}

// kindText names what the site checks ("an index"), for errors.
func (s *site) kindText() string {
	switch s.kind {
	case kIndex:
		return "an index"
	case kSliceAcap, kSliceB, kSlice3Acap, kSlice3B, kSlice3C:
		return "a slice expression"
	case kDivide:
		return "an integer division"
	case kShift:
		return "a shift by a signed count"
	case kPanic:
		return "a panic"
	}
	return "a check"
}

// site adds a check site at pos and returns its number (from 1).
func (g *gen) site(pos token.Pos, k siteKind) int {
	p := g.p.position(pos)
	g.sites = append(g.sites, site{kind: k, file: baseName(p.Filename), line: p.Line})
	return len(g.sites)
}

// failStub is a branch to the failure path that still has to be written.
type failStub struct {
	l    ptx.Label
	site int
	x, y ptx.Operand
}

// failIf fails (kind k at pos, values x and y, nil for none) when p is true.
func (g *gen) failIf(p ptx.Reg, pos token.Pos, k siteKind, x, y ptx.Operand) {
	g.failTo(p, g.site(pos, k), x, y)
}

// failTo branches to a stub recording site s when p is true.
func (g *gen) failTo(p ptx.Reg, s int, x, y ptx.Operand) {
	l := g.f.NewLabel()
	g.f.At(p).Bra(l)
	g.stubs = append(g.stubs, failStub{l: l, site: s, x: x, y: y})
}

// failHere fails unconditionally.
func (g *gen) failHere(pos token.Pos, k siteKind, x, y ptx.Operand) int {
	s := g.site(pos, k)
	l := g.f.NewLabel()
	g.f.Bra(l)
	g.stubs = append(g.stubs, failStub{l: l, site: s, x: x, y: y})
	return s
}

// writeFailPath writes the stubs and the common failure path at the end of the
// kernel: the first failing thread claims the record (word 1), writes the values,
// its block and thread, fences and sets word 0 to the site; every failing thread
// then exits, which releases the barriers it holds up.
func (g *gen) writeFailPath() {
	if len(g.stubs) == 0 {
		return
	}
	f := g.f
	fx, fy, fs := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U32)
	common := f.NewLabel()
	for _, st := range g.stubs {
		f.Place(st.l)
		for _, v := range []struct {
			d ptx.Reg
			o ptx.Operand
		}{{fx, st.x}, {fy, st.y}} {
			switch o := v.o.(type) {
			case nil:
				f.Mov(v.d, ptx.Int(0))
			case ptx.Reg:
				if o.Type().Bits() == 64 {
					f.Mov(v.d, o.As(ptx.U64))
				} else {
					f.Cvt(v.d, o)
				}
			default:
				f.Mov(v.d, o)
			}
		}
		f.Mov(fs, ptx.Int(st.site))
		f.Bra(common)
	}
	f.Place(common)
	rec := f.LdParam(g.recIndex)
	old := f.Reg(ptx.U32)
	f.Atom("", "", ptx.Generic, "cas", ptx.B32, old, ptx.Mem(rec, 4), ptx.Int(0), ptx.Int(1))
	taken := f.Setp(ptx.Ne, old, ptx.Int(0))
	exit := f.NewLabel()
	f.At(taken).Bra(exit)
	f.St(ptx.Generic, ptx.CacheDefault, ptx.U64, ptx.Mem(rec, recX), fx)
	f.St(ptx.Generic, ptx.CacheDefault, ptx.U64, ptx.Mem(rec, recY), fy)
	for i, sr := range []ptx.SReg{ptx.CtaidX, ptx.CtaidY, ptx.CtaidZ, ptx.TidX, ptx.TidY, ptx.TidZ} {
		f.St(ptx.Generic, ptx.CacheDefault, ptx.U32, ptx.Mem(rec, int64(recBlock+4*i)), f.Special(sr))
	}
	f.Membar("sys")
	f.Op("st.volatile.u32", ptx.Mem(rec, 0), fs)
	f.Place(exit)
	f.Op("exit")
}
