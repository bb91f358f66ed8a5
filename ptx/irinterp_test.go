package ptx

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/ptx/gomath"
)

// An interpreter of the math IR, independent of the Go generator: it checks that the
// generated mirrors compute what the IR says, and counts the operations a given
// argument executes (the dynamic path length the SASS counts can't give).

type irEval struct {
	b     *mb
	v     []uint64
	count map[string]int
}

func f32v(u uint64) float32 { return math.Float32frombits(uint32(u)) }
func f64v(u uint64) float64 { return math.Float64frombits(u) }
func u32f(x float32) uint64 { return uint64(math.Float32bits(x)) }
func u64f(x float64) uint64 { return math.Float64bits(x) }

func (e *irEval) get(v val) uint64 {
	if bits, ok := e.b.isConst(v); ok {
		return bits
	}
	return e.v[v]
}

func (e *irEval) fop(n *node, f32 func(a, b, c float32) float32, f64 func(a, b, c float64) float64) uint64 {
	a, b, c := e.get(n.a[0]), uint64(0), uint64(0)
	if n.a[1] != 0 {
		b = e.get(n.a[1])
	}
	if n.a[2] != 0 {
		c = e.get(n.a[2])
	}
	if n.t == tF32 {
		return u32f(f32(f32v(a), f32v(b), f32v(c)))
	}
	return u64f(f64(f64v(a), f64v(b), f64v(c)))
}

func (e *irEval) run(ns []*node) {
	for _, n := range ns {
		a := func(i int) uint64 { return e.get(n.a[i]) }
		name := fmt.Sprintf("%d", n.op)
		isFloat := n.t == tF32 || n.t == tF64
		var r uint64
		switch n.op {
		case oConst, oArg:
			continue
		case oVar:
			r = a(0)
		case oSet:
			e.v[n.a[0]] = a(1)
			continue
		case oIf:
			if a(0) != 0 {
				e.run(n.then)
			} else {
				e.run(n.els)
			}
			continue
		case oLoop:
			for {
				e.run(n.then)
				if a(0) == 0 {
					break
				}
				e.run(n.els)
			}
			continue
		case oAdd, oSub, oMul:
			if isFloat {
				switch n.op {
				case oAdd:
					r = e.fop(n, func(x, y, _ float32) float32 { return x + y }, func(x, y, _ float64) float64 { return x + y })
				case oSub:
					r = e.fop(n, func(x, y, _ float32) float32 { return x - y }, func(x, y, _ float64) float64 { return x - y })
				default:
					r = e.fop(n, func(x, y, _ float32) float32 { return x * y }, func(x, y, _ float64) float64 { return x * y })
				}
			} else {
				switch n.op {
				case oAdd:
					r = a(0) + a(1)
				case oSub:
					r = a(0) - a(1)
				default:
					r = a(0) * a(1)
				}
			}
		case oFma:
			r = e.fop(n, gomath.FMA32, math.FMA)
		case oDiv:
			r = e.fop(n, func(x, y, _ float32) float32 { return x / y }, func(x, y, _ float64) float64 { return x / y })
		case oSqrt:
			r = e.fop(n, func(x, _, _ float32) float32 { return float32(math.Sqrt(float64(x))) }, func(x, _, _ float64) float64 { return math.Sqrt(x) })
		case oNeg:
			r = a(0) ^ signOf(n.t)
		case oAbs:
			r = a(0) &^ signOf(n.t)
		case oRint:
			r = e.fop(n, func(x, _, _ float32) float32 { return float32(math.RoundToEven(float64(x))) }, func(x, _, _ float64) float64 { return math.RoundToEven(x) })
		case oFloor:
			r = e.fop(n, func(x, _, _ float32) float32 { return float32(math.Floor(float64(x))) }, math2(math.Floor))
		case oTrunc:
			r = e.fop(n, func(x, _, _ float32) float32 { return float32(math.Trunc(float64(x))) }, math2(math.Trunc))
		case oMulHi:
			if n.t == tU32 {
				r = a(0) * a(1) >> 32
			} else {
				r, _ = bits.Mul64(a(0), a(1))
			}
		case oMulWide:
			r = a(0) * a(1)
		case oAnd:
			r = a(0) & a(1)
		case oOr:
			r = a(0) | a(1)
		case oXor:
			r = a(0) ^ a(1)
		case oNot:
			r = ^a(0)
			if n.t == tPred {
				r &= 1
			}
		case oShl:
			r = a(0) << a(1)
		case oShr:
			r = a(0) >> a(1)
		case oSar:
			if n.t == tU32 {
				r = uint64(uint32(int32(uint32(a(0))) >> a(1)))
			} else {
				r = uint64(int64(a(0)) >> a(1))
			}
		case oCmp:
			r = b2u(e.cmp(cmpKind(n.imm), n.t, a(0), a(1)))
		case oSel:
			if a(0) != 0 {
				r = a(1)
			} else {
				r = a(2)
			}
		case oBits, oFromBits:
			r = a(0)
		case oLo:
			r = a(0) & 0xffffffff
		case oHi:
			r = a(0) >> 32
		case oPack:
			r = a(0) | a(1)<<32
		case oZext:
			r = a(0)
		case oSext:
			r = uint64(int64(int32(uint32(a(0)))))
		case oCvtF:
			if n.t == tF32 {
				r = u32f(float32(f64v(a(0))))
			} else {
				r = u64f(float64(f32v(a(0))))
			}
		case oCvtSI:
			var s float64
			if e.b.typ(n.a[0]) == tU32 {
				s = float64(int32(uint32(a(0))))
				if n.t == tF32 {
					r = u32f(float32(int32(uint32(a(0)))))
					break
				}
			} else {
				s = float64(int64(a(0)))
				if n.t == tF32 {
					r = u32f(float32(int64(a(0))))
					break
				}
			}
			r = u64f(s)
		case oCvtFI:
			x := f64v(a(0))
			if e.b.typ(n.a[0]) == tF32 {
				x = float64(f32v(a(0)))
			}
			switch {
			case x != x:
				r = 0
			case x >= math.MaxInt32:
				r = math.MaxInt32
			case x <= math.MinInt32:
				r = 1 << 31
			default:
				r = uint64(uint32(int32(math.RoundToEven(x))))
			}
		case oLoad:
			r = e.b.tables[n.imm].data[a(0)&0xffffffff]
		default:
			panic("irEval: op")
		}
		if n.t == tU32 || n.t == tF32 {
			r &= 0xffffffff
		}
		e.v[n.dst] = r
		if isFloat || n.op == oCvtF || n.op == oCvtSI || n.op == oCvtFI {
			switch n.op {
			case oAdd, oSub, oMul, oFma, oDiv, oSqrt, oRint, oFloor, oTrunc, oCvtF, oCvtSI, oCvtFI:
				name = map[opc]string{oAdd: "add", oSub: "sub", oMul: "mul", oFma: "fma", oDiv: "div", oSqrt: "sqrt",
					oRint: "rnd", oFloor: "rnd", oTrunc: "rnd", oCvtF: "cvt", oCvtSI: "cvt", oCvtFI: "cvt"}[n.op]
				if n.t == tF64 || (n.op == oCvtFI && e.b.typ(n.a[0]) == tF64) {
					name += "64"
				} else {
					name += "32"
				}
				e.count[name]++
			}
		}
	}
}

func math2(f func(float64) float64) func(a, b, c float64) float64 {
	return func(a, _, _ float64) float64 { return f(a) }
}

func signOf(t vtype) uint64 {
	if t == tF32 {
		return 1 << 31
	}
	return 1 << 63
}

func b2u(p bool) uint64 {
	if p {
		return 1
	}
	return 0
}

func (e *irEval) cmp(k cmpKind, t vtype, x, y uint64) bool {
	if t == tF32 || t == tF64 {
		var a, b float64
		if t == tF32 {
			a, b = float64(f32v(x)), float64(f32v(y))
		} else {
			a, b = f64v(x), f64v(y)
		}
		nan := a != a || b != b
		switch k {
		case cEq:
			return a == b
		case cNe:
			return !nan && a != b
		case cLt:
			return a < b
		case cLe:
			return a <= b
		case cGt:
			return a > b
		case cGe:
			return a >= b
		case cLtU:
			return nan || a < b
		case cLeU:
			return nan || a <= b
		case cGtU:
			return nan || a > b
		case cGeU:
			return nan || a >= b
		case cNeU:
			return nan || a != b
		case cNaN:
			return nan
		}
		panic("cmp")
	}
	var sx, sy int64
	if t == tU32 {
		sx, sy = int64(int32(uint32(x))), int64(int32(uint32(y)))
	} else {
		sx, sy = int64(x), int64(y)
	}
	switch k {
	case cEq:
		return x == y
	case cNe:
		return x != y
	case cLt:
		return x < y
	case cLe:
		return x <= y
	case cGt:
		return x > y
	case cGe:
		return x >= y
	case cSLt:
		return sx < sy
	case cSLe:
		return sx <= sy
	case cSGt:
		return sx > sy
	case cSGe:
		return sx >= sy
	}
	panic("cmp")
}

// evalIR runs the IR of fn for type t on args (bit patterns) and returns the result
// bits and the float operations executed.
func evalIR(b *mb, args ...uint64) (uint64, map[string]int) {
	e := &irEval{b: b, v: make([]uint64, len(b.vals)), count: map[string]int{}}
	for i, a := range b.args {
		e.v[a] = args[i]
	}
	e.run(b.top)
	return e.get(b.ret), e.count
}

// TestInterpreterAgrees checks the generated Go mirrors against the interpreter on
// random and special arguments: the same bits (NaN: both NaN).
func TestInterpreterAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	n := 2000
	if *long {
		n = 200000
	}
	for fn := MathFn(1); fn < numMathFns; fn++ {
		for _, typ := range []Type{F32, F64} {
			b := buildMath(fn, typ)
			for i := 0; i < n; i++ {
				var x, y uint64
				if typ == F32 {
					x, y = uint64(r.Uint32()), uint64(r.Uint32())
					if i%2 == 0 {
						x, y = u32f(float32(r.NormFloat64()*4)), u32f(float32(r.NormFloat64()*4))
					}
					got, _ := evalIR(b, x, y)
					want := mirrors32[fn](f32v(x), f32v(y))
					if uint32(got) != math.Float32bits(want) && !(want != want && f32v(got) != f32v(got)) {
						t.Fatalf("%v f32 (%v, %v): interpreter %v, mirror %v", fn, f32v(x), f32v(y), f32v(got), want)
					}
				} else {
					x, y = r.Uint64(), r.Uint64()
					if i%2 == 0 {
						x, y = u64f(r.NormFloat64()*4), u64f(r.NormFloat64()*4)
					}
					got, _ := evalIR(b, x, y)
					want := mirrors64[fn](f64v(x), f64v(y))
					if got != math.Float64bits(want) && !(want != want && f64v(got) != f64v(got)) {
						t.Fatalf("%v f64 (%v, %v): interpreter %v, mirror %v", fn, f64v(x), f64v(y), f64v(got), want)
					}
				}
			}
		}
	}
}

// TestMathPathCost prints, for typical arguments, the floating-point operations each
// function executes (go test -v -run MathPathCost): the common path's length. div and
// sqrt are one operation here but about 10 instructions in SASS (float64), and the
// count excludes integer and select instructions.
func TestMathPathCost(t *testing.T) {
	if !testing.Verbose() {
		t.Skip("needs -v")
	}
	args := map[Type][][2]float64{
		F32: {{0.3, 1.7}, {-2.5, 0.6}, {7.9, -3.1}, {0.9, 2.2}},
		F64: {{0.3, 1.7}, {-2.5, 0.6}, {7.9, -3.1}, {0.9, 2.2}},
	}
	var rows []string
	for _, typ := range []Type{F32, F64} {
		for _, fn := range MathFns(typ) {
			b := buildMath(fn, typ)
			max := map[string]int{}
			for _, a := range args[typ] {
				x, y := a[0], a[1]
				if fn == Acosh {
					x = 1 + math.Abs(x)
				}
				if fn == Asin || fn == Acos || fn == Atanh {
					x = x / 8
				}
				var c map[string]int
				if typ == F32 {
					_, c = evalIR(b, u32f(float32(x)), u32f(float32(y)))
				} else {
					_, c = evalIR(b, u64f(x), u64f(y))
				}
				for k, v := range c {
					if v > max[k] {
						max[k] = v
					}
				}
			}
			var parts []string
			total := 0
			for k, v := range max {
				parts = append(parts, fmt.Sprintf("%s:%d", k, v))
				total += v
			}
			sort.Strings(parts)
			rows = append(rows, fmt.Sprintf("%-6v %v %3d  %s", fn, typ, total, strings.Join(parts, " ")))
		}
	}
	t.Log("\n" + strings.Join(rows, "\n"))
}
