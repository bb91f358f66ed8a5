package bench

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TableOptions selects the optional columns of WriteTable.
type TableOptions struct {
	// Peers, if not nil, adds the CuPy, PyTorch and "vs peer" columns.
	Peers *Peers
	// Comparison, if not nil, adds the "old" and "vs old" columns and flags
	// regressions.
	Comparison *Comparison
}

// WriteTable writes an aligned table of rep's results: name, median, min,
// GB/s, % of the reference copy bandwidth, and with opt the peers' times and
// our ratio to the faster peer, and the earlier run's median, the ratio to it
// and a regression flag. Failed benchmarks are listed after the table.
func WriteTable(w io.Writer, rep *Report, opt TableOptions) error {
	head := []string{"benchmark", "median", "min", "GB/s", "% copy"}
	// Without a reference bandwidth, no "% copy" column (the footer says why).
	fracs := rep.Meta.RefGBps > 0 || slices.ContainsFunc(rep.Results, func(r Result) bool { return r.FracOfRef > 0 })
	if !fracs {
		head = head[:4]
	}
	baselines := slices.ContainsFunc(rep.Results, func(r Result) bool { return r.VsBaseline > 0 })
	if baselines {
		head = append(head, "vs raw")
	}
	flops := slices.ContainsFunc(rep.Results, func(r Result) bool { return r.TFlops > 0 })
	if flops {
		head = append(head, "TFLOP/s", "% peak")
	}
	if opt.Peers != nil {
		head = append(head, "CuPy", "PyTorch", "vs peer")
	}
	if opt.Comparison != nil {
		head = append(head, "old", "vs old", "")
	}
	rows := [][]string{head}
	for _, r := range rep.Results {
		row := []string{r.Name, fmtNs(r.MedianNs), fmtNs(r.MinNs), fmtGBps(r.GBps)}
		if fracs {
			row = append(row, fmtPct(r.FracOfRef))
		}
		if r.Err != "" {
			row[1] = "FAILED"
		}
		if baselines {
			vs := ""
			if r.VsBaseline > 0 {
				vs = fmtRatio(r.VsBaseline)
			} else if r.Baseline != "" {
				vs = "-"
			}
			row = append(row, vs)
		}
		if flops {
			tf := ""
			if r.TFlops > 0 && r.Err == "" {
				tf = fmtFloat(r.TFlops)
			}
			row = append(row, tf, fmtPct(r.FracOfPeak))
		}
		if opt.Peers != nil {
			f, ok := PeerFigures{}, false
			if r.Peer != nil {
				f, ok = *r.Peer, true
			} else {
				f, ok = opt.Peers.LookupIn(rep, r.Name)
			}
			vs := "-"
			if best, _ := f.Best(); ok && best > 0 && r.MedianNs > 0 && r.Err == "" {
				vs = fmtRatio(r.MedianNs / best)
			}
			row = append(row, fmtNs(f.CuPyNs), fmtNs(f.TorchNs), vs)
		}
		if c := opt.Comparison; c != nil {
			if d, ok := c.Lookup(r.Name); ok {
				flag := ""
				switch {
				case d.Regression:
					flag = "REGRESSION"
				case d.Improvement:
					flag = "faster"
				}
				row = append(row, fmtNs(d.OldNs), fmtRatio(d.Ratio), flag)
			} else {
				row = append(row, "-", "-", "")
			}
		}
		rows = append(rows, row)
	}
	bw := bufio.NewWriter(w)
	writeAligned(bw, rows, 1)

	m := rep.Meta
	fmt.Fprintf(bw, "\ndevice: %s", orDash(m.Device))
	if m.Driver != "" {
		fmt.Fprintf(bw, ", driver %s", m.Driver)
	}
	fmt.Fprintf(bw, ", backend %s, %s\n", orDash(m.Backend), m.GoVersion)
	if m.Libraries != "" {
		fmt.Fprintf(bw, "libraries: %s\n", m.Libraries)
	}
	switch {
	case m.RefGBps > 0 && m.Reference == "given":
		fmt.Fprintf(bw, "%% copy: GB/s over the given reference bandwidth, %s GB/s\n", fmtGBps(m.RefGBps))
	case m.RefGBps > 0:
		fmt.Fprintf(bw, "%% copy: GB/s over %s, measured at the start of this run: %s GB/s\n", m.Reference, fmtGBps(m.RefGBps))
	case m.NoReference != "":
		fmt.Fprintf(bw, "%% copy: left out on this device: %s\n", m.NoReference)
	default:
		fmt.Fprintf(bw, "%% copy: no reference bandwidth in this run\n")
	}
	if p := opt.Peers; p != nil {
		date := ""
		if d := p.Date(); d != "" {
			date = ", measured " + d
		}
		fmt.Fprintf(bw, "peers: %s%s: median wall time of one call plus a synchronize\n", p.Path, date)
		fmt.Fprintf(bw, "vs peer = our median / the faster peer's (below 1: we are faster)\n")
	}
	if flops {
		fmt.Fprintf(bw, "TFLOP/s = floating-point operations per call (2mnk for a matrix product) over the median; %% peak = over the device's peak for that arithmetic, where known\n")
	}
	if baselines {
		fmt.Fprintf(bw, "vs raw = our median / the median of the same work done by raw driver calls (the raw/ row), sampled in turn with ours in this run\n")
	}
	if m.LargeSide > 0 && m.LargeSide != LargeSide && slices.ContainsFunc(rep.Results, func(r Result) bool { return strings.HasSuffix(r.Name, LargeSuffix) }) {
		fmt.Fprintf(bw, "%s rows ran at %dx%d, not %dx%d (-large)\n", LargeSuffix, m.LargeSide, m.LargeSide, LargeSide, LargeSide)
	}
	if len(rep.Skipped) > 0 {
		var reasons []string
		count := map[string]int{}
		for _, sk := range rep.Skipped {
			if count[sk.Reason] == 0 {
				reasons = append(reasons, sk.Reason)
			}
			count[sk.Reason]++
		}
		for _, why := range reasons {
			fmt.Fprintf(bw, "skipped %d: %s\n", count[why], why)
		}
	}
	var hostTimed []string
	for _, r := range rep.Results {
		if r.Mode == GPU && r.Timing == TimingHost && r.Err == "" {
			hostTimed = append(hostTimed, r.Name)
		}
	}
	if len(hostTimed) > 0 {
		fmt.Fprintf(bw, "no device timer: %d GPU-mode benchmarks were timed by the host clock and a synchronize\n", len(hostTimed))
	}
	if c := opt.Comparison; c != nil {
		regs := c.Regressions()
		fmt.Fprintf(bw, "vs old = our median / the median of %s run %s (%d compared); %d regressions past %.0f%%\n",
			orDash(c.Old.Meta.Device), c.Old.Meta.Date.Format("2006-01-02 15:04"), len(c.Deltas), len(regs), 100*c.Threshold)
	}
	for _, r := range rep.Failed() {
		fmt.Fprintf(bw, "FAILED %s: %s\n", r.Name, r.Err)
	}
	return bw.Flush()
}

// writeAligned writes rows as columns separated by two spaces: the first
// left columns left-aligned, the others right-aligned, widths in runes.
func writeAligned(w io.Writer, rows [][]string, left int) {
	var width []int
	for _, row := range rows {
		for i, c := range row {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var sb strings.Builder
	for _, row := range rows {
		sb.Reset()
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				sb.WriteString("  ")
			}
			if i < left {
				sb.WriteString(c + pad)
			} else {
				sb.WriteString(pad + c)
			}
		}
		io.WriteString(w, strings.TrimRight(sb.String(), " ")+"\n")
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// sig3 formats v with three significant digits (at least its integer part).
func sig3(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// fmtNs formats a time in nanoseconds with a unit; "-" for none.
func fmtNs(ns float64) string {
	switch {
	case ns <= 0:
		return "-"
	case ns < 1e3:
		return sig3(ns) + " ns"
	case ns < 1e6:
		return sig3(ns/1e3) + " µs"
	case ns < 1e9:
		return sig3(ns/1e6) + " ms"
	default:
		return sig3(ns/1e9) + " s"
	}
}

func fmtGBps(v float64) string {
	if v <= 0 {
		return "-"
	}
	return sig3(v)
}

func fmtPct(f float64) string {
	if f <= 0 {
		return "-"
	}
	return strconv.FormatFloat(100*f, 'f', 1, 64) + "%"
}

func fmtRatio(r float64) string { return strconv.FormatFloat(r, 'f', 2, 64) + "x" }

// GoBenchName returns the Go benchmark name of a benchmark:
// "array/reductions/reduce/Float32/1d" becomes
// "BenchmarkArray/reductions/reduce/Float32/1d".
func GoBenchName(name string) string {
	r, n := utf8.DecodeRuneInString(name)
	return "Benchmark" + string(unicode.ToUpper(r)) + name[n:]
}

// DefaultGoBenchRuns is how many lines per benchmark WriteGoBench writes by default.
const DefaultGoBenchRuns = 10

// WriteGoBench writes rep in the Go benchmark format that benchstat
// (golang.org/x/perf) reads. Each benchmark's samples are split into at most
// runs consecutive groups (like `go test -count=runs`), one line each: the
// calls in the group, their mean ns/op, GB/s for that mean, and frac-of-copy
// (GB/s over the run's reference bandwidth) when there is one. The file
// starts with goos, goarch, pkg, device and backend configuration lines and
// unit lines saying that GB/s and frac-of-copy are better higher. Failed
// benchmarks are written as "--- FAIL:" lines, which benchstat skips.
func WriteGoBench(w io.Writer, rep *Report, runs int) error {
	if runs <= 0 {
		runs = DefaultGoBenchRuns
	}
	bw := bufio.NewWriter(w)
	m := rep.Meta
	for _, kv := range [][2]string{
		{"goos", m.GOOS}, {"goarch", m.GOARCH}, {"pkg", "github.com/go-gpu/gpu/cmd/gpubench"},
		{"device", m.Device}, {"backend", m.Backend},
	} {
		if kv[1] != "" {
			fmt.Fprintf(bw, "%s: %s\n", kv[0], kv[1])
		}
	}
	fmt.Fprintf(bw, "Unit GB/s better=higher\n")
	fmt.Fprintf(bw, "Unit frac-of-copy better=higher\n")
	if slices.ContainsFunc(rep.Results, func(r Result) bool { return r.Flops > 0 }) {
		fmt.Fprintf(bw, "Unit TFLOP/s better=higher\n")
	}
	for _, r := range rep.Results {
		name := GoBenchName(r.Name)
		if r.Err != "" {
			fmt.Fprintf(bw, "--- FAIL: %s\n    %s\n", name, strings.ReplaceAll(r.Err, "\n", " "))
			continue
		}
		n := len(r.Samples)
		k := min(runs, n)
		for g := range k {
			lo, hi := g*n/k, (g+1)*n/k
			var sum float64
			for _, s := range r.Samples[lo:hi] {
				sum += s
			}
			ns := sum / float64(hi-lo)
			fmt.Fprintf(bw, "%s\t%d\t%s ns/op", name, (hi-lo)*max(r.Iters, 1), fmtFloat(ns))
			if gb := GBps(r.Bytes, ns); gb > 0 {
				fmt.Fprintf(bw, "\t%.2f GB/s", gb)
				if m.RefGBps > 0 {
					fmt.Fprintf(bw, "\t%s frac-of-copy", strconv.FormatFloat(gb/m.RefGBps, 'f', 4, 64))
				}
			}
			if r.Flops > 0 && ns > 0 {
				fmt.Fprintf(bw, "\t%.3f TFLOP/s", float64(r.Flops)/ns/1e3)
			}
			fmt.Fprintln(bw)
		}
	}
	return bw.Flush()
}

// fmtFloat formats a measurement the way the testing package does: more
// decimals for small values.
func fmtFloat(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
}
