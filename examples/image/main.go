// Command image blurs a PNG with a Gaussian and finds its edges with Sobel's operator
// on the default device (a CUDA GPU if there is one, else the CPU backend;
// GPU_BACKEND=cpu|cuda forces one), and writes both as PNG files:
//
//	go run ./examples/image                          # a synthetic 8192x8192 test card
//	go run ./examples/image -in photo.png -sigma 2   # your picture
//	go run ./examples/image -size 256 -check         # small, checked against plain Go
//
// Go's image packages decode and encode; the pixels go to the device as bytes and the
// work is package filter's: planes converted on the device, a separable Gaussian blur
// and the Sobel gradient of the blurred image's luminance, each pass one fused
// expression over shifted views of an edge-padded copy. It prints the time of the
// filters alone (after an untimed warm-up that compiles the kernels) and of the
// conversions around them; -check compares the blur and the edges with plain Go.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/examples/image/filter"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	in, out string
	size    int
	sigma   float64
	gain    float64
	check   bool
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.in, "in", "", "PNG file to filter (default: a synthetic test card of -size)")
	fs.IntVar(&c.size, "size", 8192, "side of the synthetic test card, in pixels")
	fs.Float64Var(&c.sigma, "sigma", 3, "standard deviation of the Gaussian blur, in pixels (up to 10)")
	fs.Float64Var(&c.gain, "gain", 4, "brightness gain of the edge image written")
	fs.StringVar(&c.out, "out", filepath.Join(os.TempDir(), "gpu-example-image"), "directory for blur.png and edges.png")
	fs.BoolVar(&c.check, "check", false, "compare with plain Go (slow for large images)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := filterImage(ctx, stdout, c); err != nil {
		fmt.Fprintln(stderr, "image:", err)
		return 1
	}
	return 0
}

func filterImage(ctx context.Context, w io.Writer, c config) error {
	dev, err := gpu.Open()
	if err != nil {
		return err
	}
	s, err := dev.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()

	t0 := time.Now()
	var planes *gpu.Array[float32]
	if c.in != "" {
		f, err := os.Open(c.in)
		if err != nil {
			return err
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", c.in, err)
		}
		if planes, err = filter.FromImage(s, img); err != nil {
			return err
		}
	} else if planes, err = filter.TestCard(s, c.size, c.size); err != nil {
		return err
	}
	defer planes.Free()
	if err := s.Synchronize(ctx); err != nil {
		return err
	}
	sh := planes.Shape()
	src := c.in
	if src == "" {
		src = "synthetic test card"
	}
	fmt.Fprintf(w, "image: %dx%d, %d planes (%s) on %v; in %v\n", sh[2], sh[1], sh[0], src, dev, time.Since(t0).Round(time.Microsecond))

	// Warm-up: the same work compiles and loads every kernel.
	b, e, err := filter.Pipeline(s, planes, c.sigma)
	if err != nil {
		return err
	}
	b.Free()
	e.Free()
	t0 = time.Now()
	blurred, edges, err := filter.Pipeline(s, planes, c.sigma)
	if err != nil {
		return err
	}
	defer blurred.Free()
	defer edges.Free()
	if err := s.Synchronize(ctx); err != nil {
		return err
	}
	el := time.Since(t0)
	px := float64(sh[1]) * float64(sh[2])
	fmt.Fprintf(w, "filters: %v (Gaussian blur of sigma %g, luminance, Sobel; %.3g megapixels/s)\n",
		el.Round(time.Microsecond), c.sigma, px/el.Seconds()/1e6)

	t0 = time.Now()
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	gained, err := gpu.Eval[float32](s, "gain*x", gpu.Vars{"gain": c.gain, "x": edges})
	if err != nil {
		return err
	}
	defer gained.Free()
	for _, o := range []struct {
		name   string
		planes *gpu.Array[float32]
	}{{"blur.png", blurred}, {"edges.png", gained}} {
		img, err := filter.ToImage(ctx, s, o.planes)
		if err != nil {
			return err
		}
		if err := writePNG(filepath.Join(c.out, o.name), img); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "wrote %s and %s in %v\n", filepath.Join(c.out, "blur.png"), filepath.Join(c.out, "edges.png"), time.Since(t0).Round(time.Microsecond))
	if !c.check {
		return nil
	}

	// The same work in plain Go, plane by plane.
	ph, err := planes.ToSlice(ctx)
	if err != nil {
		return err
	}
	bh, err := blurred.ToSlice(ctx)
	if err != nil {
		return err
	}
	eh, err := edges.ToSlice(ctx)
	if err != nil {
		return err
	}
	t0 = time.Now()
	nc, h, wd := sh[0], sh[1], sh[2]
	n := h * wd
	worst := 0.0
	ref := make([][]float64, nc)
	for p := range nc {
		if ref[p], err = filter.ReferenceBlur(ph[p*n:(p+1)*n], h, wd, c.sigma); err != nil {
			return err
		}
		for i, v := range ref[p] {
			worst = math.Max(worst, math.Abs(v-float64(bh[p*n+i])))
		}
	}
	lum := make([]float32, n)
	for i := range lum {
		lum[i] = float32(0.299*ref[0][i] + 0.587*ref[1][i] + 0.114*ref[2][i])
	}
	worstE := 0.0
	for i, v := range filter.ReferenceSobel(lum, h, wd) {
		worstE = math.Max(worstE, math.Abs(v-float64(eh[i])))
	}
	fmt.Fprintf(w, "plain Go (float64, one goroutine): %v; largest difference: blur %.2g, edges %.2g\n",
		time.Since(t0).Round(time.Microsecond), worst, worstE)
	if !(worst <= 1e-5 && worstE <= 1e-5) {
		return errors.New("check failed: the filters differ from plain Go")
	}
	fmt.Fprintln(w, "check: ok")
	return nil
}

func writePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
