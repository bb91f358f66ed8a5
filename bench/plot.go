package bench

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PlotRowHeight is the height of one benchmark's row in WritePlot's chart.
const PlotRowHeight = 0.17 * vg.Inch

// WritePlot draws an SVG chart of rep: one row per benchmark that has a
// median, our median time as a dot beside CuPy's and PyTorch's figures (when
// peers is not nil and has them), on a logarithmic time axis.
func WritePlot(w io.Writer, rep *Report, peers *Peers) error {
	return writePlot(w, rep, peers, "svg")
}

// writePlot draws WritePlot's chart in one of gonum/plot's formats (svg, png, pdf, ...).
func writePlot(w io.Writer, rep *Report, peers *Peers, format string) (err error) {
	var names []string
	var ours, cupy, torch plotter.XYs
	lo, hi := math.Inf(1), math.Inf(-1)
	add := func(xys *plotter.XYs, row int, ns float64) {
		if ns > 0 {
			*xys = append(*xys, plotter.XY{X: ns, Y: float64(row)})
			lo, hi = math.Min(lo, ns), math.Max(hi, ns)
		}
	}
	for _, r := range rep.Results {
		if r.MedianNs <= 0 || r.Err != "" {
			continue
		}
		names = append(names, r.Name)
	}
	if len(names) == 0 {
		return errors.New("bench: nothing to plot: no benchmark has a median")
	}
	row := len(names)
	for _, r := range rep.Results {
		if r.MedianNs <= 0 || r.Err != "" {
			continue
		}
		row-- // the first benchmark on top
		add(&ours, row, r.MedianNs)
		f, ok := PeerFigures{}, false
		if r.Peer != nil {
			f, ok = *r.Peer, true
		} else {
			f, ok = peers.LookupIn(rep, r.Name)
		}
		if ok {
			add(&cupy, row, f.CuPyNs)
			add(&torch, row, f.TorchNs)
		}
	}
	rev := make([]string, len(names))
	for i, n := range names {
		rev[len(names)-1-i] = n
	}

	// gonum/plot panics on some degenerate inputs; report them as errors.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("bench: plot: %v", p)
		}
	}()
	p := plot.New()
	p.Title.Text = "gpubench: median time per call"
	if d := rep.Meta.Device; d != "" {
		p.Title.Text += " on " + d
	}
	p.X.Label.Text = "median time per call (log scale)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.TickerFunc(timeTicks)
	p.X.Min, p.X.Max = lo/2, hi*2
	p.NominalY(rev...)
	p.Y.Min, p.Y.Max = -0.5, float64(len(names))-0.5
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.YOffs = -vg.Points(4)

	series := []struct {
		label string
		xys   plotter.XYs
		shape draw.GlyphDrawer
		color color.Color
	}{
		{"gpu (ours)", ours, draw.CircleGlyph{}, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}},
		{"CuPy", cupy, draw.TriangleGlyph{}, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}},
		{"PyTorch", torch, draw.BoxGlyph{}, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}},
	}
	for _, s := range series {
		if len(s.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(s.xys)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Shape: s.shape, Color: s.color, Radius: vg.Points(3)}
		p.Add(sc)
		p.Legend.Add(s.label, sc)
	}
	height := vg.Length(len(names))*PlotRowHeight + 1.5*vg.Inch
	wt, err := p.WriterTo(11*vg.Inch, height, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// SavePlot writes WritePlot's chart to a file, in the format its extension
// names: .svg, or any other that gonum/plot writes (.png, .pdf, .eps, ...).
func SavePlot(path string, rep *Report, peers *Peers) error {
	if err := checkPlotFormat(path); err != nil {
		return err
	}
	format := plotFormat(path)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writePlot(f, rep, peers, format); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// plotFormat returns the chart format a file name asks for (svg without an extension).
func plotFormat(path string) string {
	return cmp.Or(strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), "."), "svg")
}

// checkPlotFormat reports an error for a chart file name whose format gonum/plot does
// not write.
func checkPlotFormat(path string) error {
	switch f := plotFormat(path); f {
	case "svg", "png", "jpg", "jpeg", "tif", "tiff", "pdf", "eps", "tex":
		return nil
	default:
		return fmt.Errorf("%q: unknown chart format %q (svg, png, jpg, tif, pdf, eps or tex)", path, f)
	}
}

// timeTicks marks the powers of ten of a time axis in nanoseconds, labelled
// with units ("1 ns", "10 µs", "1 s"), and 2..9 times each as minor ticks.
func timeTicks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		v := math.Pow(10, e)
		ticks = append(ticks, plot.Tick{Value: v, Label: powerOfTenNs(int(e))})
		for m := 2.0; m < 10; m++ {
			ticks = append(ticks, plot.Tick{Value: m * v})
		}
	}
	return ticks
}

// powerOfTenNs names 10^e nanoseconds.
func powerOfTenNs(e int) string {
	units := []string{"ns", "µs", "ms", "s"}
	u := e / 3
	if e < 0 || u >= len(units) {
		return fmt.Sprintf("1e%d ns", e)
	}
	return []string{"1", "10", "100"}[e%3] + " " + units[u]
}
