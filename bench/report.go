package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Schema is the value of Report.Schema written by this version. Readers accept
// any "gpubench/1" report; later versions that only add fields keep it.
const Schema = "gpubench/1"

// Report is the result of a run, and the document written by -json:
//
//	{
//	  "schema": "gpubench/1",
//	  "meta": {
//	    "device": "NVIDIA H200", "driver": "580.159.04", "backend": "cuda",
//	    "date": "2026-12-01T10:00:00Z", "go_version": "go1.26.8",
//	    "goos": "linux", "goarch": "amd64", "hostname": "...",
//	    "args": ["-run", "array/"],
//	    "reference": "reference/dtod_copy", "ref_gbps": 4100.5,
//	    "peers": "peers/h200-2026-11-30.json",
//	    "settings": {"benchtime": "500ms", "count": 1000, "min_samples": 5,
//	                 "warmup_time": "50ms", "warmup_count": 2, "min_sample_time": "10µs"}
//	  },
//	  "benchmarks": [
//	    {"name": "array/copy/16k", "group": "array", "mode": "GPU", "timing": "device",
//	     "bytes": 2147483648, "iters_per_sample": 1,
//	     "samples_ns": [523100.5, ...],
//	     "n": 120, "min_ns": ..., "median_ns": ..., "mean_ns": ..., "max_ns": ..., "stddev_ns": ...,
//	     "gbps": 4105.2, "frac_of_ref": 1.0,
//	     "peer": {"key": "copy", "size": "L", "cupy_ns": 1288885.5, "torch_ns": 521374.5},
//	     "baseline": "raw/...", "vs_baseline": 1.03,
//	     "error": "..."}
//	  ],
//	  "skipped": [{"name": "raw/kernel/launch", "reason": "..."}]
//	}
//
// Times are nanoseconds per call (float). "reference" is the name of the
// benchmark whose GB/s is ref_gbps, or "given" when -ref-gbps set it; both
// are absent when there was no reference. "timing" is "device" when a device
// timer (events) timed the benchmark and "host" when the host clock did
// (always for Host mode). gbps (bytes / median) and frac_of_ref are absent
// when zero; peer is present when peer figures were loaded and the name maps
// onto a peer key; baseline and vs_baseline when the benchmark names a
// baseline (vs_baseline when both ran); error is present when the benchmark
// failed (its stats then cover the samples taken before the failure, possibly
// none). meta.large_side is present when the "/16k" benchmarks ran at another
// side than 16384 (the CPU backend). skipped lists the benchmarks that do not
// apply to the device.
type Report struct {
	// Schema is "gpubench/1".
	Schema string `json:"schema"`
	// Meta describes the run.
	Meta Meta `json:"meta"`
	// Results holds one entry per benchmark, in run order.
	Results []Result `json:"benchmarks"`
	// Skipped lists the benchmarks whose Setup skipped them on this device
	// (ErrSkip), in run order.
	Skipped []Skipped `json:"skipped,omitempty"`
}

// Skipped is a benchmark skipped on this device, and why.
type Skipped struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Meta describes a run: the machine, the software, the settings.
type Meta struct {
	// Device is the device's name ("NVIDIA H200", "cpu").
	Device string `json:"device"`
	// Driver is the driver version ("580.159.04"), empty for the CPU backend.
	Driver string `json:"driver"`
	// Libraries names the libraries used and their settings (Target.Libraries).
	Libraries string `json:"libraries,omitempty"`
	// Backend is the -backend flag ("auto", "cpu", "cuda").
	Backend string `json:"backend"`
	// Date is when the run started, UTC.
	Date time.Time `json:"date"`
	// GoVersion is runtime.Version() of the benchmark binary.
	GoVersion string `json:"go_version"`
	// GOOS and GOARCH are the platform of the benchmark binary.
	GOOS   string `json:"goos"`
	GOARCH string `json:"goarch"`
	// Hostname is the machine's host name.
	Hostname string `json:"hostname,omitempty"`
	// Args are the command-line arguments of the run.
	Args []string `json:"args,omitempty"`
	// Reference is the name of the benchmark that gave RefGBps, or "given".
	Reference string `json:"reference,omitempty"`
	// RefGBps is the reference (device-to-device copy) bandwidth in GB/s.
	RefGBps float64 `json:"ref_gbps,omitempty"`
	// NoReference, if not empty, says why the run has no reference
	// bandwidth and no "% copy" (Target.NoCopyFraction).
	NoReference string `json:"no_reference,omitempty"`
	// Peers is the peer-figures file used, if any.
	Peers string `json:"peers,omitempty"`
	// LargeSide is the side of the square arrays the LargeSuffix benchmarks
	// used (Env.LargeSide); absent means LargeSide.
	LargeSide int `json:"large_side,omitempty"`
	// Settings are the run's sampling settings.
	Settings Settings `json:"settings"`
}

// Settings are the sampling settings of a run (see Config).
type Settings struct {
	// Benchtime is the sampling budget per benchmark.
	Benchtime Duration `json:"benchtime"`
	// Count is the most samples per benchmark.
	Count int `json:"count"`
	// MinSamples is the fewest samples per benchmark.
	MinSamples int `json:"min_samples"`
	// WarmupTime and WarmupCount are the least warm-up time and calls.
	WarmupTime  Duration `json:"warmup_time"`
	WarmupCount int      `json:"warmup_count"`
	// MinSampleTime is the shortest sample (see Config.MinSampleTime).
	MinSampleTime Duration `json:"min_sample_time"`
}

// Duration is a time.Duration written in JSON as a string ("500ms").
type Duration time.Duration

// MarshalText writes d as time.Duration.String does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText parses d with time.ParseDuration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Values of Result.Timing.
const (
	TimingDevice = "device"
	TimingHost   = "host"
)

// Result is one benchmark's outcome.
type Result struct {
	// Name and Group are the benchmark's.
	Name  string `json:"name"`
	Group string `json:"group"`
	// Mode is the benchmark's timing mode.
	Mode Mode `json:"mode"`
	// Timing says which clock timed it: TimingDevice or TimingHost.
	Timing string `json:"timing"`
	// Bytes is the bytes moved per call, read plus written.
	Bytes int64 `json:"bytes"`
	// Iters is the number of calls per sample.
	Iters int `json:"iters_per_sample"`
	// Samples holds every sample, as nanoseconds per call, in order.
	Samples []float64 `json:"samples_ns"`
	// Stats summarizes Samples.
	Stats
	// GBps is Bytes over the median time, in GB/s (0 when Bytes is 0).
	GBps float64 `json:"gbps,omitempty"`
	// FracOfRef is GBps over the run's reference bandwidth.
	FracOfRef float64 `json:"frac_of_ref,omitempty"`
	// Flops is the floating-point operations per call (0: not counted), and
	// TFlops the rate at the median, in 10^12 FLOP/s.
	Flops  int64   `json:"flops,omitempty"`
	TFlops float64 `json:"tflops,omitempty"`
	// PeakFlops is the device's peak for this arithmetic in FLOP/s, when known,
	// and FracOfPeak TFlops over it.
	PeakFlops  float64 `json:"peak_flops,omitempty"`
	FracOfPeak float64 `json:"frac_of_peak,omitempty"`
	// Peer holds the peers' figures for this benchmark, when known.
	Peer *PeerFigures `json:"peer,omitempty"`
	// Baseline is the benchmark's Baseline (a raw driver baseline's name) and
	// VsBaseline this median over the baseline's median in the same run
	// (absent when either is missing or failed).
	Baseline   string  `json:"baseline,omitempty"`
	VsBaseline float64 `json:"vs_baseline,omitempty"`
	// Err is the failure, if the benchmark failed.
	Err string `json:"error,omitempty"`
}

// Lookup returns the result with the given name.
func (r *Report) Lookup(name string) (*Result, bool) {
	for i := range r.Results {
		if r.Results[i].Name == name {
			return &r.Results[i], true
		}
	}
	return nil, false
}

// Failed returns the results that have an error.
func (r *Report) Failed() []Result {
	var out []Result
	for _, res := range r.Results {
		if res.Err != "" {
			out = append(out, res)
		}
	}
	return out
}

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(r)
}

// ReadReport decodes a report written by WriteJSON.
func ReadReport(rd io.Reader) (*Report, error) {
	var r Report
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		return nil, fmt.Errorf("bench: reading report: %w", err)
	}
	if !strings.HasPrefix(r.Schema, "gpubench/1") {
		return nil, fmt.Errorf("bench: report schema %q, want %q", r.Schema, Schema)
	}
	return &r, nil
}

// ReadReportFile reads a report from a JSON file.
func ReadReportFile(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := ReadReport(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}
