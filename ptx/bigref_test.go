package ptx

import (
	"math"
	"math/big"
	"sync"
)

// High-precision references for the float64 accuracy tests, in math/big at 300 bits.

const refPrec = 300

func bf(x float64) *big.Float { return new(big.Float).SetPrec(refPrec).SetFloat64(x) }

func newF() *big.Float { return new(big.Float).SetPrec(refPrec) }

var bigLn2 = sync.OnceValue(func() *big.Float {
	// ln2 = 2 atanh(1/3) = sum 2/((2i+1) 3^(2i+1))
	sum := newF()
	third := newF().Quo(bf(1), bf(3))
	p := newF().Set(third)
	nine := bf(9)
	for i := 0; i < 200; i++ {
		term := newF().Quo(p, bf(float64(2*i+1)))
		sum.Add(sum, term)
		p.Quo(p, nine)
	}
	return sum.Mul(sum, bf(2))
})

// bigExp returns e^x for a finite x with |x| < 2000.
func bigExp(x *big.Float) *big.Float {
	ln2 := bigLn2()
	kf, _ := newF().Quo(x, ln2).Float64()
	k := math.Round(kf)
	r := newF().Sub(x, newF().Mul(bf(k), ln2))
	r.SetMantExp(r, -16)
	// Taylor series of e^r - 1 (kept as the sum without the 1 for the squarings)
	sum := newF()
	term := bf(1)
	for i := 1; i < 60; i++ {
		term.Mul(term, r)
		term.Quo(term, bf(float64(i)))
		sum.Add(sum, term)
		if term.Sign() == 0 || term.MantExp(nil) < -refPrec-40 {
			break
		}
	}
	// (1+s)^2 - 1 = 2s + s^2, sixteen times
	for i := 0; i < 16; i++ {
		sq := newF().Mul(sum, sum)
		sum.Add(sum, sum)
		sum.Add(sum, sq)
	}
	sum.Add(sum, bf(1))
	return sum.SetMantExp(sum, int(k))
}

// bigExpm1 returns e^x - 1 accurately also for tiny x.
func bigExpm1(x *big.Float) *big.Float {
	if xf, _ := x.Float64(); math.Abs(xf) < 0.5 {
		sum := newF()
		term := bf(1)
		for i := 1; i < 120; i++ {
			term.Mul(term, x)
			term.Quo(term, bf(float64(i)))
			sum.Add(sum, term)
			if term.Sign() == 0 || term.MantExp(nil) < sum.MantExp(nil)-refPrec-10 {
				break
			}
		}
		return sum
	}
	return newF().Sub(bigExp(x), bf(1))
}

// bigLog returns log(x) for x > 0: x = m·2^e, Newton's iteration on exp for log(m)
// from float64's value (53 -> 106 -> 212 -> 424 bits), plus e·ln2.
func bigLog(x *big.Float) *big.Float {
	m := newF()
	e := x.MantExp(m)
	mf, _ := m.Float64()
	l := bf(math.Log(mf))
	for range 4 {
		el := bigExp(l)
		d := newF().Sub(m, el)
		d.Quo(d, el)
		l.Add(l, d)
	}
	return l.Add(l, newF().Mul(bf(float64(e)), bigLn2()))
}

// ulp64 returns the error of got in float64 ulps of ref (exact).
func ulp64(got float64, ref *big.Float) float64 {
	if math.IsNaN(got) {
		return math.Inf(1)
	}
	rf, _ := ref.Float64()
	if math.IsInf(got, 0) || math.IsInf(rf, 0) {
		if got == rf {
			return 0
		}
		return math.Inf(1)
	}
	if ref.Sign() == 0 {
		if got == 0 {
			return 0
		}
		return math.Inf(1)
	}
	e := ref.MantExp(nil) - 1 // |ref| in [2^e, 2^(e+1))
	if e < -1022 {
		e = -1022
	}
	d := newF().Sub(bf(got), ref)
	d.SetMantExp(d, -(e - 52))
	v, _ := d.Float64()
	return math.Abs(v)
}

// The π the references use, to more bits than any float64 reduction needs.
const piRefPrec = 2400

var bigPiRef = sync.OnceValue(func() *big.Float { return bigPi(piRefPrec) })

// bigSinCos returns sin x and cos x for a finite float64 x: x - k·π/2 with 2400-bit π,
// then the Taylor series.
func bigSinCos(x float64) (s, c *big.Float) {
	ax := math.Abs(x)
	xb := new(big.Float).SetPrec(piRefPrec).SetFloat64(ax)
	halfPi := new(big.Float).SetPrec(piRefPrec).Quo(bigPiRef(), big.NewFloat(2))
	q := new(big.Float).SetPrec(piRefPrec).Quo(xb, halfPi)
	q.Add(q, big.NewFloat(0.5))
	k, _ := q.Int(nil) // floor, q > 0
	r := new(big.Float).SetPrec(piRefPrec).Mul(new(big.Float).SetPrec(piRefPrec).SetInt(k), halfPi)
	r.Sub(xb, r)
	r = newF().Set(r)
	r2 := newF().Mul(r, r)
	s, c = newF(), bf(1)
	term := newF().Set(r) // r^(2n+1)/(2n+1)!
	cterm := bf(1)        // r^(2n)/(2n)!
	for n := 1; n < 200; n++ {
		if n%2 == 1 {
			s.Add(s, term)
		} else {
			s.Sub(s, term)
		}
		cterm.Mul(cterm, r2)
		cterm.Quo(cterm, bf(float64((2*n-1)*(2*n))))
		if n%2 == 1 {
			c.Sub(c, cterm)
		} else {
			c.Add(c, cterm)
		}
		term.Mul(term, r2)
		term.Quo(term, bf(float64((2*n)*(2*n+1))))
		if term.Sign() == 0 || term.MantExp(nil) < -refPrec-80 {
			break
		}
	}
	switch new(big.Int).And(k, big.NewInt(3)).Int64() {
	case 1:
		s, c = c, s.Neg(s)
	case 2:
		s, c = s.Neg(s), c.Neg(c)
	case 3:
		s, c = c.Neg(c), s
	}
	if x < 0 {
		s.Neg(s)
	}
	return s, c
}

// bigLog1p returns log(1 + x) for x > -1, by its series for small |x|.
func bigLog1p(x *big.Float) *big.Float {
	if xf, _ := x.Float64(); math.Abs(xf) < 0x1p-10 {
		sum := newF()
		term := newF().Set(x) // x^k
		for k := 1; k < 200; k++ {
			t := newF().Quo(term, bf(float64(k)))
			if k%2 == 1 {
				sum.Add(sum, t)
			} else {
				sum.Sub(sum, t)
			}
			term.Mul(term, x)
			if term.Sign() == 0 || term.MantExp(nil) < sum.MantExp(nil)-refPrec-10 {
				break
			}
		}
		return sum
	}
	return bigLog(newF().Add(x, bf(1)))
}

// bigPow returns |x|^y·(sign) for finite x != 0 and finite y when |y·log|x|| < 2000,
// or nil when the result certainly overflows or vanishes.
func bigPow(x, y float64) *big.Float {
	l := bigLog(bf(math.Abs(x)))
	w := l.Mul(l, bf(y))
	if wf, _ := w.Float64(); math.Abs(wf) > 1900 {
		return nil
	}
	r := bigExp(w)
	if x < 0 && math.Mod(y, 2) != 0 {
		r.Neg(r)
	}
	return r
}

var bigHalfPi = sync.OnceValue(func() *big.Float { return newF().Quo(bigPiRef(), bf(2)) })

// bigAtanAny returns atan x for any finite x.
func bigAtanAny(x *big.Float) *big.Float {
	ax := newF().Abs(x)
	var r *big.Float
	if ax.Cmp(bf(1)) <= 0 {
		r = bigAtan(ax)
	} else {
		r = bigAtan(newF().Quo(bf(1), ax))
		r.Sub(bigHalfPi(), r)
	}
	r = newF().Set(r)
	if x.Sign() < 0 {
		r.Neg(r)
	}
	return r
}

// bigAtan2 returns atan2(y, x) for finite x, y not both zero.
func bigAtan2(y, x float64) *big.Float {
	ay, ax := math.Abs(y), math.Abs(x)
	var r *big.Float
	if ay <= ax {
		r = bigAtan(newF().Quo(bf(ay), bf(ax)))
	} else {
		r = bigAtan(newF().Quo(bf(ax), bf(ay)))
		r.Sub(bigHalfPi(), r)
	}
	r = newF().Set(r)
	if math.Signbit(x) {
		r.Sub(bigPiRef(), r)
		r = newF().Set(r)
	}
	if math.Signbit(y) {
		r.Neg(r)
	}
	return r
}

// bigCbrt returns the real cube root of x (Newton's iteration from Go's value).
func bigCbrt(x *big.Float) *big.Float {
	xf, _ := x.Float64()
	c := bf(math.Cbrt(xf))
	if c.Sign() == 0 {
		return c
	}
	for range 4 {
		c2 := newF().Mul(c, c)
		d := newF().Sub(newF().Mul(c2, c), x)
		d.Quo(d, newF().Mul(c2, bf(3)))
		c.Sub(c, d)
	}
	return c
}

// bigHypot returns sqrt(x² + y²).
func bigHypot(x, y float64) *big.Float {
	s := newF().Mul(bf(x), bf(x))
	s.Add(s, newF().Mul(bf(y), bf(y)))
	return s.Sqrt(s)
}

// bigAsin returns asin x for |x| <= 1: atan(x/sqrt(1 - x²)).
func bigAsin(x *big.Float) *big.Float {
	d := newF().Mul(x, x)
	d.Sub(bf(1), d)
	if d.Sign() == 0 {
		r := newF().Set(bigHalfPi())
		if x.Sign() < 0 {
			r.Neg(r)
		}
		return r
	}
	d.Sqrt(d)
	return bigAtanAny(d.Quo(x, d))
}

// bigAcos returns acos x = π/2 - asin x for |x| <= 1.
func bigAcos(x *big.Float) *big.Float {
	return newF().Sub(bigHalfPi(), bigAsin(x))
}

// bigOddSeries returns sum over k of c(k)·x^(2k+1), to refPrec bits, for small x.
func bigOddSeries(x *big.Float, c func(k int) *big.Float) *big.Float {
	sum := newF()
	p := newF().Set(x)
	x2 := newF().Mul(x, x)
	for k := 0; k < 400; k++ {
		t := newF().Mul(p, c(k))
		sum.Add(sum, t)
		p.Mul(p, x2)
		if p.Sign() == 0 || p.MantExp(nil) < sum.MantExp(nil)-refPrec-10 {
			break
		}
	}
	return sum
}

// bigAsinh returns asinh x.
func bigAsinh(x *big.Float) *big.Float {
	if xf, _ := x.Float64(); math.Abs(xf) < 0x1p-20 {
		return bigOddSeries(x, func(k int) *big.Float {
			// (-1)^k (2k)! / (4^k (k!)^2 (2k+1))
			c := bf(1)
			for i := 1; i <= k; i++ {
				c.Mul(c, bf(float64((2*i-1)*(2*i))))
				c.Quo(c, bf(float64(4*i*i)))
			}
			c.Quo(c, bf(float64(2*k+1)))
			if k%2 == 1 {
				c.Neg(c)
			}
			return c
		})
	}
	ax := newF().Abs(x)
	w := newF().Mul(ax, ax)
	w.Add(w, bf(1)).Sqrt(w).Add(w, ax)
	r := bigLog(w)
	if x.Sign() < 0 {
		r.Neg(r)
	}
	return r
}

// bigAcosh returns acosh x for x >= 1.
func bigAcosh(x *big.Float) *big.Float {
	w := newF().Mul(x, x)
	w.Sub(w, bf(1)).Sqrt(w).Add(w, x)
	return bigLog(w)
}

// bigAtanh returns atanh x for |x| < 1.
func bigAtanh(x *big.Float) *big.Float {
	if xf, _ := x.Float64(); math.Abs(xf) < 0x1p-20 {
		return bigOddSeries(x, func(k int) *big.Float { return newF().Quo(bf(1), bf(float64(2*k+1))) })
	}
	w := newF().Add(bf(1), x)
	w.Quo(w, newF().Sub(bf(1), x))
	r := bigLog(w)
	return r.Quo(r, bf(2))
}

var bigTwoOverSqrtPi = sync.OnceValue(func() *big.Float {
	s := newF().Sqrt(newF().Set(bigPiRef()))
	return s.Quo(bf(2), s)
})

// bigErf returns erf x by its Taylor series (|x| <= 7: at most 52 bits cancel, of 300).
func bigErf(x *big.Float) *big.Float {
	x2 := newF().Mul(x, x)
	sum := newF()
	term := newF().Set(x) // (-1)^n x^(2n+1)/n!
	for n := 0; n < 2000; n++ {
		t := newF().Quo(term, bf(float64(2*n+1)))
		sum.Add(sum, t)
		term.Mul(term, x2)
		term.Quo(term, bf(float64(-(n + 1))))
		if n > 10 && term.Sign() != 0 && term.MantExp(nil) < -refPrec-20 {
			break
		}
	}
	return sum.Mul(sum, bigTwoOverSqrtPi())
}
