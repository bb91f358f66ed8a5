// Package filter is the work of the image example: a Gaussian blur and a Sobel edge
// filter of images held as float32 planes on a device, with conversions from and to
// Go's image types.
//
// An image is a (C, H, W) array of channel planes in [0, 1] (FromImage, ToImage).
// Both filters read past the border as the nearest edge pixel (numpy.pad's "edge"
// mode, scipy.ndimage's "nearest"): the input is first padded by a gather of clamped
// indices (gpu.Take with gpu.ModeClip), and the filter's output pixels are then one
// fused expression (gpu.EvalInto) over shifted views of the padded array: the blur is
// separable (Gaussian taps along the rows, then along the columns), and Sobel's
// gradient reads the eight neighbours of each pixel.
//
// The stencils (Convolve1D's and Sobel's expression over shifted views) are the parts
// a kernel written in Go (issue #23) replaces: one pass that reads each input pixel
// once into registers or shared memory instead of through 2r+1 views, keeping the
// padding and the conversions as they are.
package filter

import (
	"context"
	"fmt"
	"image"
	"image/draw"
	"math"
	"strings"

	"github.com/go-gpu/gpu"
)

// FromImage copies img to the device as a (4, H, W) float32 array of its premultiplied
// red, green, blue and alpha planes in [0, 1] (image.RGBA's channels over 255). The
// pixels go to the device as bytes, and are converted there.
func FromImage(s *gpu.Stream, img image.Image) (*gpu.Array[float32], error) {
	if img == nil {
		return nil, fmt.Errorf("filter: nil image: %w", gpu.ErrInvalidValue)
	}
	b := img.Bounds()
	if b.Empty() {
		return nil, fmt.Errorf("filter: empty image %v: %w", b, gpu.ErrInvalidValue)
	}
	rgba, ok := img.(*image.RGBA)
	if !ok || rgba.Stride != 4*b.Dx() || rgba.Rect.Min != (image.Point{}) {
		rgba = image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
		draw.Draw(rgba, rgba.Rect, img, b.Min, draw.Src)
	}
	h, w := b.Dy(), b.Dx()
	pix, err := gpu.FromSlice(s, rgba.Pix[:4*h*w], h, w, 4)
	if err != nil {
		return nil, err
	}
	defer pix.Free()
	planes, err := pix.Transpose(2, 0, 1) // (4, H, W), a view
	if err != nil {
		return nil, err
	}
	return gpu.Eval[float32](s, "float32(p) / 255", gpu.Vars{"p": planes})
}

// ToImage reads planes (C, H, W) back as an image: one plane as *image.Gray, three
// (red, green, blue) or four (premultiplied, with alpha) as *image.RGBA, each value
// clipped to [0, 1] and rounded to 8 bits on the device.
func ToImage(ctx context.Context, s *gpu.Stream, planes *gpu.Array[float32]) (image.Image, error) {
	if planes == nil || planes.Ndim() != 3 {
		return nil, fmt.Errorf("filter: planes of shape %v, want (C, H, W): %w", planes.Shape(), gpu.ErrInvalidValue)
	}
	c, h, w := planes.Shape()[0], planes.Shape()[1], planes.Shape()[2]
	if c != 1 && c != 3 && c != 4 {
		return nil, fmt.Errorf("filter: %d planes, want 1, 3 or 4: %w", c, gpu.ErrInvalidValue)
	}
	hwc, err := planes.Transpose(1, 2, 0) // (H, W, C), a view
	if err != nil {
		return nil, err
	}
	vars := gpu.Vars{"x": hwc}
	if c == 3 { // append an opaque alpha plane
		one, err := gpu.Full[float32](s, 1, h, w, 1)
		if err != nil {
			return nil, err
		}
		defer one.Free()
		all, err := gpu.Concatenate(s, []*gpu.Array[float32]{hwc, one}, 2)
		if err != nil {
			return nil, err
		}
		defer all.Free()
		vars["x"] = all
	}
	q, err := gpu.Eval[uint8](s, "clip(x*255 + 0.5, 0, 255)", vars)
	if err != nil {
		return nil, err
	}
	defer q.Free()
	pix, err := q.ToSlice(ctx)
	if err != nil {
		return nil, err
	}
	r := image.Rect(0, 0, w, h)
	if c == 1 {
		return &image.Gray{Pix: pix, Stride: w, Rect: r}, nil
	}
	return &image.RGBA{Pix: pix, Stride: 4 * w, Rect: r}, nil
}

// GaussianTaps returns the taps of a Gaussian of standard deviation sigma (pixels),
// truncated at radius ceil(3 sigma) (scipy.ndimage.gaussian_filter1d's truncate=3)
// and normalized to sum 1: 2r+1 taps, symmetric.
func GaussianTaps(sigma float64) ([]float64, error) {
	if !(sigma > 0) || sigma > 1000 {
		return nil, fmt.Errorf("filter: Gaussian of sigma %v, want (0, 1000]: %w", sigma, gpu.ErrInvalidValue)
	}
	r := int(math.Ceil(3 * sigma))
	taps := make([]float64, 2*r+1)
	sum := 0.0
	for i := range taps {
		x := float64(i - r)
		taps[i] = math.Exp(-x * x / (2 * sigma * sigma))
		sum += taps[i]
	}
	for i := range taps {
		taps[i] /= sum
	}
	return taps, nil
}

// Blur returns x (..., H, W) blurred by a Gaussian of standard deviation sigma pixels
// in both directions (sigma up to 10: at most 63 taps): Convolve1D along the rows,
// then along the columns.
func Blur(s *gpu.Stream, x *gpu.Array[float32], sigma float64) (*gpu.Array[float32], error) {
	taps, err := GaussianTaps(sigma)
	if err != nil {
		return nil, err
	}
	if x == nil || x.Ndim() < 2 {
		return nil, fmt.Errorf("filter: Blur of shape %v, want (..., H, W): %w", x.Shape(), gpu.ErrInvalidValue)
	}
	rows, err := Convolve1D(s, x, taps, -1)
	if err != nil {
		return nil, err
	}
	defer rows.Free()
	return Convolve1D(s, rows, taps, -2)
}

// Convolve1D returns x convolved with taps (an odd number, centred; applied as
// correlation, which is the same for symmetric taps) along axis, the nearest edge
// value standing for values past the ends. A new array of x's shape.
func Convolve1D(s *gpu.Stream, x *gpu.Array[float32], taps []float64, axis int) (*gpu.Array[float32], error) {
	if x == nil {
		return nil, fmt.Errorf("filter: Convolve1D of a nil array: %w", gpu.ErrInvalidValue)
	}
	nd := x.Ndim()
	if axis < 0 {
		axis += nd
	}
	if axis < 0 || axis >= nd {
		return nil, fmt.Errorf("filter: Convolve1D along axis %d of a %d-d array: %w", axis, nd, gpu.ErrInvalidValue)
	}
	if len(taps)%2 != 1 || len(taps) > 64 {
		return nil, fmt.Errorf("filter: %d taps, want an odd number up to 63: %w", len(taps), gpu.ErrInvalidValue)
	}
	r := len(taps) / 2
	padded, err := padEdge(s, x, axis, r)
	if err != nil {
		return nil, err
	}
	defer padded.Free()
	// The stencil: sum_k taps[k] * x[i + k - r], with the symmetric taps' pairs
	// added first.
	n := x.Shape()[axis]
	vars := gpu.Vars{}
	var terms []string
	for k := 0; k <= r; k++ {
		v, err := shifted(padded, axis, k, n)
		if err != nil {
			return nil, err
		}
		vars[fmt.Sprintf("v%d", k)] = v
		vars[fmt.Sprintf("w%d", k)] = taps[k]
		if m := len(taps) - 1 - k; m != k {
			v, err := shifted(padded, axis, m, n)
			if err != nil {
				return nil, err
			}
			vars[fmt.Sprintf("v%d", m)] = v
			if taps[m] == taps[k] {
				terms = append(terms, fmt.Sprintf("w%d*(v%d + v%d)", k, k, m))
				continue
			}
			vars[fmt.Sprintf("w%d", m)] = taps[m]
			terms = append(terms, fmt.Sprintf("w%d*v%d", m, m))
		}
		terms = append(terms, fmt.Sprintf("w%d*v%d", k, k))
	}
	return gpu.Eval[float32](s, strings.Join(terms, " + "), vars)
}

// Sobel returns the gradient magnitude of the image x (..., H, W) by Sobel's 3x3
// operator, sqrt(gx² + gy²) / (4√2) (so that it is in [0, 1] for x in [0, 1]), the
// nearest edge pixel standing for pixels past the border.
func Sobel(s *gpu.Stream, x *gpu.Array[float32]) (*gpu.Array[float32], error) {
	if x == nil || x.Ndim() < 2 {
		return nil, fmt.Errorf("filter: Sobel of shape %v, want (..., H, W): %w", x.Shape(), gpu.ErrInvalidValue)
	}
	nd := x.Ndim()
	h, w := x.Shape()[nd-2], x.Shape()[nd-1]
	p1, err := padEdge(s, x, nd-1, 1)
	if err != nil {
		return nil, err
	}
	defer p1.Free()
	padded, err := padEdge(s, p1, nd-2, 1)
	if err != nil {
		return nil, err
	}
	defer padded.Free()
	vars := gpu.Vars{"norm": 1 / (4 * math.Sqrt2)}
	for dy := range 3 {
		for dx := range 3 {
			if dy == 1 && dx == 1 {
				continue
			}
			v, err := shifted(padded, nd-2, dy, h)
			if err == nil {
				v, err = shifted(v, nd-1, dx, w)
			}
			if err != nil {
				return nil, err
			}
			vars[fmt.Sprintf("p%d%d", dy, dx)] = v
		}
	}
	const (
		gx = "(p02 + 2*p12 + p22 - p00 - 2*p10 - p20)"
		gy = "(p20 + 2*p21 + p22 - p00 - 2*p01 - p02)"
	)
	return gpu.Eval[float32](s, "norm*sqrt("+gx+"*"+gx+" + "+gy+"*"+gy+")", vars)
}

// Luminance returns the luma (ITU-R BT.601: 0.299 R + 0.587 G + 0.114 B) of the planes
// (C, H, W), C >= 3, as a (1, H, W) array.
func Luminance(s *gpu.Stream, planes *gpu.Array[float32]) (*gpu.Array[float32], error) {
	if planes == nil || planes.Ndim() != 3 || planes.Shape()[0] < 3 {
		return nil, fmt.Errorf("filter: luminance of shape %v, want (C >= 3, H, W): %w", planes.Shape(), gpu.ErrInvalidValue)
	}
	vars := gpu.Vars{}
	for i, name := range []string{"r", "g", "b"} {
		v, err := planes.Slice(gpu.R(i))
		if err != nil {
			return nil, err
		}
		vars[name] = v
	}
	return gpu.Eval[float32](s, "0.299*r + 0.587*g + 0.114*b", vars)
}

// padEdge returns x padded by r along axis with copies of the edge values (numpy.pad's
// "edge" mode): a gather of the clamped indices -r ... n+r-1.
func padEdge(s *gpu.Stream, x *gpu.Array[float32], axis, r int) (*gpu.Array[float32], error) {
	n := x.Shape()[axis]
	idx, err := gpu.Arange[int64](s, int64(-r), int64(n+r), 1)
	if err != nil {
		return nil, err
	}
	defer idx.Free()
	return gpu.Take(s, x, idx, gpu.OnAxis(axis), gpu.WithMode(gpu.ModeClip))
}

// shifted returns the view of padded whose index i along axis is padded's i+k, n long.
func shifted(padded *gpu.Array[float32], axis, k, n int) (*gpu.Array[float32], error) {
	rs := make([]gpu.Range, padded.Ndim())
	for i := range rs {
		rs[i] = gpu.R()
	}
	rs[axis] = gpu.R(k, k+n)
	return padded.Slice(rs...)
}

// Pipeline is the example's and its benchmark's work on the planes of an image (C >= 3,
// H, W): the planes blurred by a Gaussian of standard deviation sigma, and the Sobel
// gradient magnitude of the blurred image's luminance (1, H, W).
func Pipeline(s *gpu.Stream, planes *gpu.Array[float32], sigma float64) (blurred, edges *gpu.Array[float32], err error) {
	blurred, err = Blur(s, planes, sigma)
	if err != nil {
		return nil, nil, err
	}
	lum, err := Luminance(s, blurred)
	if err != nil {
		blurred.Free()
		return nil, nil, err
	}
	defer lum.Free()
	if edges, err = Sobel(s, lum); err != nil {
		blurred.Free()
		return nil, nil, err
	}
	return blurred, edges, nil
}

// TestCard returns planes (3, h, w) of a synthetic picture with detail at every scale:
// concentric rings whose frequency grows outwards, over a checkerboard of 64-pixel
// squares and colour gradients, computed on the device in one expression.
func TestCard(s *gpu.Stream, h, w int) (*gpu.Array[float32], error) {
	if h < 1 || w < 1 {
		return nil, fmt.Errorf("filter: test card of %dx%d: %w", w, h, gpu.ErrInvalidValue)
	}
	vars := gpu.Vars{"w": float64(w), "h": float64(h), "m": float64(max(h, w)), "f": 400.0}
	for _, a := range []struct {
		name  string
		shape []int
	}{{"c", []int{3, 1, 1}}, {"y", []int{1, h, 1}}, {"x", []int{1, 1, w}}} {
		n := a.shape[0] * a.shape[1] * a.shape[2]
		r, err := gpu.Arange[float32](s, 0, float32(n), 1)
		if err != nil {
			return nil, err
		}
		defer r.Free()
		if vars[a.name], err = r.Reshape(a.shape...); err != nil {
			return nil, err
		}
	}
	// rr: the distance from the centre, over the longer side.
	rr := "sqrt(square(x - w/2) + square(y - h/2))/m"
	src := "0.35 + 0.25*sin(" + rr + "*" + rr + "*f) + 0.2*float32((int64(x/64) + int64(y/64)) % 2) + 0.2*(c*x/w + (2 - c)*y/h)/2"
	return gpu.Eval[float32](s, "clip("+src+", 0, 1)", vars)
}
