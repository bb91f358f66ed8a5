package montecarlo

import (
	"context"
	"math"

	"github.com/go-gpu/gpu"
)

// ReferenceEuropean is European in plain Go (float64) from the normals it would draw,
// in order (one per path): the check of the example and its tests.
func ReferenceEuropean(m Market, z []float32) Estimate {
	mu, vol := (m.R-m.Sigma*m.Sigma/2)*m.T, m.Sigma*math.Sqrt(m.T)
	var s, ss float64
	for _, v := range z {
		p := max(m.S0*math.Exp(mu+vol*float64(v))-m.K, 0)
		s += p
		ss += p * p
	}
	return estimate(m, float64(len(z)), s, ss)
}

// ReferenceAsian is Asian in plain Go (float64) from the normals it would draw, in
// order (steps per path, path after path).
func ReferenceAsian(m Market, z []float32, steps int) AsianResult {
	dt := m.T / float64(steps)
	mu, vol := (m.R-m.Sigma*m.Sigma/2)*dt, m.Sigma*math.Sqrt(dt)
	M := float64(steps)
	t := make([]float64, 5)
	n := len(z) / steps
	for i := range n {
		w, a, g := 0.0, 0.0, 0.0
		for j, v := range z[i*steps : (i+1)*steps] {
			w += float64(v)
			a += math.Exp(math.Log(m.S0) + mu*float64(j+1) + vol*w)
			g += w
		}
		pa := max(a/M-m.K, 0)
		pg := max(math.Exp(math.Log(m.S0)+mu*(M+1)/2+vol*g/M)-m.K, 0)
		t[0] += pa
		t[1] += pa * pa
		t[2] += pg
		t[3] += pg * pg
		t[4] += pa * pg
	}
	return AsianResult{
		Arithmetic:     estimate(m, float64(n), t[0], t[1]),
		Geometric:      estimate(m, float64(n), t[2], t[3]),
		ControlVariate: controlVariate(m, float64(n), t, GeometricAsianCall(m, steps)),
	}
}

// Normals returns the normals that European (steps 0) or Asian (steps dates) draw
// from a generator in state (seed, offset) for paths paths in batches of batch: one
// gpu.RandN per batch, of the batch's shape ((p,) or (p, steps)), in order.
func Normals(ctx context.Context, s *gpu.Stream, seed, offset uint64, paths, steps, batch int) ([]float32, error) {
	g := gpu.NewGenerator(0)
	if err := g.SetState(seed, offset); err != nil {
		return nil, err
	}
	var out []float32
	for _, p := range batches(paths, batch) {
		shape := []int{p}
		if steps > 0 {
			shape = append(shape, steps)
		}
		z, err := gpu.RandN[float32](s, g, shape...)
		if err != nil {
			return nil, err
		}
		h, err := z.ToSlice(ctx)
		z.Free()
		if err != nil {
			return nil, err
		}
		out = append(out, h...)
	}
	return out, nil
}
