package decoder

import (
	"context"
	"math"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/half"
)

// HostWeights are a block's parameters in Go memory, as float64 values of the
// bfloat16 ones (row-major).
type HostWeights struct {
	Config
	Emb, Pos, LN1W, LN1B, Wqkv, Wo, LN2W, LN2B, W1, B1, W2 []float64
}

// Host copies the weights to Go memory under ctx.
func (w *Weights) Host(ctx context.Context) (*HostWeights, error) {
	hw := &HostWeights{Config: w.Config}
	for _, p := range []struct {
		dst *[]float64
		src *gpu.Array[BF16]
	}{{&hw.Emb, w.Emb}, {&hw.Pos, w.Pos}, {&hw.LN1W, w.LN1W}, {&hw.LN1B, w.LN1B}, {&hw.Wqkv, w.Wqkv}, {&hw.Wo, w.Wo},
		{&hw.LN2W, w.LN2W}, {&hw.LN2B, w.LN2B}, {&hw.W1, w.W1}, {&hw.B1, w.B1}, {&hw.W2, w.W2}} {
		v, err := p.src.ToSlice(ctx)
		if err != nil {
			return nil, err
		}
		*p.dst = make([]float64, len(v))
		for i, x := range v {
			(*p.dst)[i] = x.Float64()
		}
	}
	return hw, nil
}

// bf rounds to bfloat16, as the device does when it stores a result.
func bf(x float64) float64 { return half.NewBFloat16(x).Float64() }

// Reference is Forward in plain Go: float64 arithmetic, each result rounded to
// bfloat16 where Forward stores one (the check of the example and its tests). tokens
// are b rows of t.
func (w *HostWeights) Reference(tokens []int32, b, t int) []float64 {
	d, f, nh := w.D, w.Hidden, w.Heads
	dh := d / nh
	bt := b * t
	x := make([]float64, bt*d)
	for i, tok := range tokens {
		for j := range d {
			x[i*d+j] = bf(w.Emb[int(tok)*d+j] + w.Pos[(i%t)*d+j])
		}
	}
	layerNorm := func(x, wt, bias []float64) []float64 {
		out := make([]float64, len(x))
		for r := range len(x) / d {
			row := x[r*d : (r+1)*d]
			mean, sq := 0.0, 0.0
			for _, v := range row {
				mean += v
			}
			mean /= float64(d)
			for _, v := range row {
				sq += (v - mean) * (v - mean)
			}
			inv := 1 / math.Sqrt(sq/float64(d)+w.Eps)
			for j, v := range row {
				out[r*d+j] = bf((v-mean)*inv*wt[j] + bias[j])
			}
		}
		return out
	}
	// matmul returns a (m x k) @ bm (k x n), rounded, plus c (rounded with it) if not nil.
	matmul := func(a, bm []float64, m, k, n int, c []float64) []float64 {
		out := make([]float64, m*n)
		for i := range m {
			for j := range n {
				s := 0.0
				for q := range k {
					s += a[i*k+q] * bm[q*n+j]
				}
				if c != nil {
					s += c[i*n+j]
				}
				out[i*n+j] = bf(s)
			}
		}
		return out
	}
	n1 := layerNorm(x, w.LN1W, w.LN1B)
	qkv := matmul(n1, w.Wqkv, bt, d, 3*d, nil)
	att := make([]float64, bt*d) // merged heads: (B, T, H, dh)
	scale := 1 / math.Sqrt(float64(dh))
	p := make([]float64, t)
	for bi := range b {
		for hi := range nh {
			at := func(row, which, c int) float64 { return qkv[(bi*t+row)*3*d+which*d+hi*dh+c] }
			for i := range t {
				mx := math.Inf(-1)
				for j := range t {
					p[j] = math.Inf(-1)
					if j <= i {
						s := 0.0
						for c := range dh {
							s += at(i, 0, c) * at(j, 1, c)
						}
						p[j] = bf(bf(s) * scale)
					}
					mx = max(mx, p[j])
				}
				sum := 0.0
				for j := range t {
					p[j] = math.Exp(p[j] - mx)
					sum += p[j]
				}
				for j := range t {
					p[j] = bf(p[j] / sum)
				}
				for c := range dh {
					s := 0.0
					for j := range t {
						s += p[j] * at(j, 2, c)
					}
					att[(bi*t+i)*d+hi*dh+c] = bf(s)
				}
			}
		}
	}
	x = matmul(att, w.Wo, bt, d, d, x)
	n2 := layerNorm(x, w.LN2W, w.LN2B)
	u := matmul(n2, w.W1, bt, d, f, nil)
	for i, v := range u {
		v += w.B1[i%f]
		u[i] = bf(0.5 * v * (1 + math.Erf(v/math.Sqrt2)))
	}
	return matmul(u, w.W2, bt, f, d, x)
}
