package filter

import "math"

// ReferenceBlur is Blur of one plane (h x w, row-major) in plain Go (float64): the
// check of the example and its tests.
func ReferenceBlur(x []float32, h, w int, sigma float64) ([]float64, error) {
	taps, err := GaussianTaps(sigma)
	if err != nil {
		return nil, err
	}
	r := len(taps) / 2
	rows := make([]float64, h*w)
	for i := range h {
		for j := range w {
			s := 0.0
			for k, t := range taps {
				s += t * float64(x[i*w+clamp(j+k-r, w)])
			}
			rows[i*w+j] = s
		}
	}
	out := make([]float64, h*w)
	for i := range h {
		for j := range w {
			s := 0.0
			for k, t := range taps {
				s += t * rows[clamp(i+k-r, h)*w+j]
			}
			out[i*w+j] = s
		}
	}
	return out, nil
}

// ReferenceSobel is Sobel of one plane (h x w, row-major) in plain Go (float64).
func ReferenceSobel(x []float32, h, w int) []float64 {
	at := func(i, j int) float64 { return float64(x[clamp(i, h)*w+clamp(j, w)]) }
	out := make([]float64, h*w)
	for i := range h {
		for j := range w {
			gx := at(i-1, j+1) + 2*at(i, j+1) + at(i+1, j+1) - at(i-1, j-1) - 2*at(i, j-1) - at(i+1, j-1)
			gy := at(i+1, j-1) + 2*at(i+1, j) + at(i+1, j+1) - at(i-1, j-1) - 2*at(i-1, j) - at(i-1, j+1)
			out[i*w+j] = math.Hypot(gx, gy) / (4 * math.Sqrt2)
		}
	}
	return out
}

func clamp(i, n int) int { return min(max(i, 0), n-1) }
