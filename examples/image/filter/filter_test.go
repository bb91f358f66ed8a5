package filter

import (
	"context"
	"errors"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/examples/internal/extest"
)

var bg = context.Background()

func randPlanes(c, h, w int) []float32 {
	x := make([]float32, c*h*w)
	for i := range x {
		x[i] = rand.Float32()
	}
	return x
}

func maxAbs(got []float32, want []float64) (float64, int) {
	worst, at := 0.0, 0
	for i := range got {
		if e := math.Abs(float64(got[i]) - want[i]); e > worst || math.IsNaN(e) {
			worst, at = e, i
		}
	}
	return worst, at
}

// TestBlurSobel compares Blur and Sobel of random planes with plain Go, at sizes
// smaller and larger than the filters' reach.
func TestBlurSobel(t *testing.T) {
	extest.ForDevices(t, func(t *testing.T, s *gpu.Stream) {
		for _, c := range []struct {
			c, h, w int
			sigma   float64
		}{{1, 1, 1, 1}, {2, 5, 3, 2}, {3, 37, 61, 1.5}, {1, 64, 17, 4}, {4, 20, 300, 0.6}} {
			xh := randPlanes(c.c, c.h, c.w)
			x, err := gpu.FromSlice(s, xh, c.c, c.h, c.w)
			if err != nil {
				t.Fatal(err)
			}
			blur, err := Blur(s, x, c.sigma)
			if err != nil {
				t.Fatal(err)
			}
			edges, err := Sobel(s, x)
			if err != nil {
				t.Fatal(err)
			}
			bh, _ := blur.ToSlice(bg)
			eh, _ := edges.ToSlice(bg)
			if !slices.Equal(blur.Shape(), x.Shape()) || !slices.Equal(edges.Shape(), x.Shape()) {
				t.Fatalf("shapes %v, %v for %v", blur.Shape(), edges.Shape(), x.Shape())
			}
			n := c.h * c.w
			for p := range c.c {
				plane := xh[p*n : (p+1)*n]
				want, err := ReferenceBlur(plane, c.h, c.w, c.sigma)
				if err != nil {
					t.Fatal(err)
				}
				if e, i := maxAbs(bh[p*n:(p+1)*n], want); e > 2e-6 {
					t.Errorf("%+v plane %d: blur off by %g at %d", c, p, e, i)
				}
				if e, i := maxAbs(eh[p*n:(p+1)*n], ReferenceSobel(plane, c.h, c.w)); e > 2e-6 {
					t.Errorf("%+v plane %d: Sobel off by %g at %d", c, p, e, i)
				}
			}
			if got, _ := x.ToSlice(bg); !slices.Equal(got, xh) {
				t.Errorf("the input changed")
			}
			x.Free()
			blur.Free()
			edges.Free()
		}
	})
}

// A constant image blurs to itself and has no edges; a vertical step has Sobel's
// textbook response on the two columns beside it.
func TestKnownImages(t *testing.T) {
	extest.ForDevices(t, func(t *testing.T, s *gpu.Stream) {
		const h, w = 9, 12
		c, err := gpu.Full[float32](s, 0.25, 1, h, w)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Free()
		b, err := Blur(s, c, 2)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free()
		for i, v := range must(b.ToSlice(bg)) {
			if math.Abs(float64(v)-0.25) > 1e-7 {
				t.Fatalf("blur of a constant: %v at %d", v, i)
			}
		}
		step := make([]float32, h*w)
		for i := range h {
			for j := w / 2; j < w; j++ {
				step[i*w+j] = 1
			}
		}
		x, err := gpu.FromSlice(s, step, h, w)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Free()
		e, err := Sobel(s, x)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Free()
		eh := must(e.ToSlice(bg))
		for i := range h {
			for j := range w {
				want := 0.0
				if j == w/2-1 || j == w/2 {
					want = 4 / (4 * math.Sqrt2)
				}
				if math.Abs(float64(eh[i*w+j])-want) > 1e-6 {
					t.Fatalf("Sobel of a step at (%d, %d): %v, want %v", i, j, eh[i*w+j], want)
				}
			}
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestImageRoundTrip converts images of several kinds to planes and back.
func TestImageRoundTrip(t *testing.T) {
	extest.ForDevices(t, func(t *testing.T, s *gpu.Stream) {
		const h, w = 7, 13
		src := image.NewNRGBA(image.Rect(3, 5, 3+w, 5+h)) // not at the origin; straight alpha
		for i := range src.Pix {
			src.Pix[i] = uint8(rand.IntN(256))
		}
		planes, err := FromImage(s, src)
		if err != nil {
			t.Fatal(err)
		}
		defer planes.Free()
		if !slices.Equal(planes.Shape(), []int{4, h, w}) {
			t.Fatalf("planes %v", planes.Shape())
		}
		back, err := ToImage(bg, s, planes)
		if err != nil {
			t.Fatal(err)
		}
		for y := range h {
			for x := range w {
				want := color.RGBAModel.Convert(src.At(3+x, 5+y)).(color.RGBA)
				if got := back.At(x, y).(color.RGBA); got != want {
					t.Fatalf("pixel (%d, %d): %v, want %v", x, y, got, want)
				}
			}
		}
		// One plane: gray; three: opaque RGBA.
		lum, err := Luminance(s, planes)
		if err != nil {
			t.Fatal(err)
		}
		defer lum.Free()
		gray, err := ToImage(bg, s, lum)
		if err != nil {
			t.Fatal(err)
		}
		ph := must(planes.ToSlice(bg))
		n := h * w
		for i := range n {
			l := 0.299*float64(ph[i]) + 0.587*float64(ph[n+i]) + 0.114*float64(ph[2*n+i])
			got := gray.(*image.Gray).Pix[i]
			if math.Abs(float64(got)-l*255) > 0.5001 {
				t.Fatalf("gray pixel %d: %d, want %v", i, got, l*255)
			}
		}
		rgb, err := planes.Slice(gpu.R(0, 3))
		if err != nil {
			t.Fatal(err)
		}
		im3, err := ToImage(bg, s, rgb)
		if err != nil {
			t.Fatal(err)
		}
		if c := im3.At(1, 2).(color.RGBA); c.A != 255 || c.R != back.At(1, 2).(color.RGBA).R {
			t.Errorf("three planes: %v", c)
		}
	})
}

func TestBadInput(t *testing.T) {
	extest.ForDevices(t, func(t *testing.T, s *gpu.Stream) {
		x, err := gpu.Zeros[float32](s, 2, 3, 4)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Free()
		v, _ := gpu.Zeros[float32](s, 5)
		defer v.Free()
		for name, err := range map[string]error{
			"sigma 0":      func() error { _, err := Blur(s, x, 0); return err }(),
			"sigma 11":     func() error { _, err := Blur(s, x, 11); return err }(),
			"1-d blur":     func() error { _, err := Blur(s, v, 1); return err }(),
			"1-d sobel":    func() error { _, err := Sobel(s, v); return err }(),
			"even taps":    func() error { _, err := Convolve1D(s, x, []float64{1, 1}, 0); return err }(),
			"axis 3":       func() error { _, err := Convolve1D(s, x, []float64{1}, 3); return err }(),
			"2 planes":     func() error { _, err := ToImage(bg, s, x); return err }(),
			"lum 2 planes": func() error { _, err := Luminance(s, x); return err }(),
			"nil image":    func() error { _, err := FromImage(s, nil); return err }(),
			"empty image":  func() error { _, err := FromImage(s, image.NewRGBA(image.Rect(0, 0, 0, 5))); return err }(),
		} {
			if !errors.Is(err, gpu.ErrInvalidValue) {
				t.Errorf("%s: %v", name, err)
			}
		}
	})
}
