// Command transformer runs one forward pass of a GPT-style decoder block in bfloat16
// on the default device (a CUDA GPU if there is one, else the CPU backend;
// GPU_BACKEND=cpu|cuda forces one) and prints the tokens per second:
//
//	go run ./examples/transformer                     # GPT-2 small's block, 16 sequences of 1024 tokens
//	go run ./examples/transformer -batch 2 -seq 32 -d 64 -heads 4 -hidden 256 -vocab 1000 -check
//
// The weights and the tokens are random, from the library's generator; the work is
// package decoder's: embedding lookup (gpu.Take), layer norms, causal self-attention
// with a softmax, and a GELU MLP, with the residual additions folded into the matrix
// products (gpu.Gemm with beta 1). After an untimed warm-up pass that compiles the
// kernels, it times -runs passes and reports the median. -check compares the output
// with plain Go (float64, rounding to bfloat16 where the device stores): keep the
// sizes small.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/examples/transformer/decoder"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("transformer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := decoder.Small
	batch := fs.Int("batch", 16, "sequences per pass")
	seq := fs.Int("seq", 1024, "tokens per sequence")
	fs.IntVar(&cfg.D, "d", cfg.D, "model width")
	fs.IntVar(&cfg.Heads, "heads", cfg.Heads, "attention heads")
	fs.IntVar(&cfg.Hidden, "hidden", cfg.Hidden, "MLP width")
	fs.IntVar(&cfg.Vocab, "vocab", cfg.Vocab, "vocabulary size")
	runs := fs.Int("runs", 5, "timed passes")
	seed := fs.Uint64("seed", 1, "generator seed")
	check := fs.Bool("check", false, "compare with plain Go (slow: keep the sizes small)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg.MaxSeq = *seq
	if err := forward(ctx, stdout, cfg, *batch, *seq, *runs, *seed, *check); err != nil {
		fmt.Fprintln(stderr, "transformer:", err)
		return 1
	}
	return 0
}

func forward(ctx context.Context, w io.Writer, cfg decoder.Config, batch, seq, runs int, seed uint64, check bool) error {
	if batch < 1 || seq < 1 || runs < 1 {
		return fmt.Errorf("%d sequences of %d tokens, %d runs: each must be at least 1: %w", batch, seq, runs, gpu.ErrInvalidValue)
	}
	dev, err := gpu.Open()
	if err != nil {
		return err
	}
	s, err := dev.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	g := gpu.NewGenerator(seed)
	wts, err := decoder.NewWeights(s, g, cfg)
	if err != nil {
		return err
	}
	defer wts.Free()
	tokens, err := gpu.RandInt[int32](s, g, 0, int64(cfg.Vocab), batch, seq)
	if err != nil {
		return err
	}
	defer tokens.Free()
	fmt.Fprintf(w, "transformer: a decoder block (d %d, %d heads, MLP %d, vocabulary %d) in bfloat16 on %d sequences of %d tokens on %v\n",
		cfg.D, cfg.Heads, cfg.Hidden, cfg.Vocab, batch, seq, dev)

	pass := func() (time.Duration, *gpu.Array[decoder.BF16], error) {
		t0 := time.Now()
		out, err := wts.Forward(s, tokens)
		if err == nil {
			err = s.Synchronize(ctx)
		}
		return time.Since(t0), out, err
	}
	_, out, err := pass() // warm-up
	if err != nil {
		return err
	}
	out.Free()
	var times []time.Duration
	for range runs {
		el, out, err := pass()
		if err != nil {
			return err
		}
		times = append(times, el)
		if len(times) < runs || !check {
			out.Free()
			continue
		}
		defer out.Free()
		if err := compare(ctx, w, wts, tokens, out, batch, seq); err != nil {
			return err
		}
	}
	slices.Sort(times)
	med := times[len(times)/2]
	tokensN := float64(batch) * float64(seq)
	fmt.Fprintf(w, "forward: %v median of %d (%v to %v); %.4g tokens/s, %.3g TFLOP/s\n", med.Round(time.Microsecond), runs,
		times[0].Round(time.Microsecond), times[len(times)-1].Round(time.Microsecond),
		tokensN/med.Seconds(), float64(cfg.Flops(batch, seq))/med.Seconds()/1e12)
	return nil
}

// compare checks the output against plain Go.
func compare(ctx context.Context, w io.Writer, wts *decoder.Weights, tokens *gpu.Array[int32], out *gpu.Array[decoder.BF16], batch, seq int) error {
	th, err := tokens.ToSlice(ctx)
	if err != nil {
		return err
	}
	got, err := out.ToSlice(ctx)
	if err != nil {
		return err
	}
	hw, err := wts.Host(ctx)
	if err != nil {
		return err
	}
	t0 := time.Now()
	want := hw.Reference(th, batch, seq)
	var ss, sd, worst float64
	for i, v := range want {
		e := got[i].Float64() - v
		ss += v * v
		sd += e * e
		worst = max(worst, math.Abs(e))
	}
	rms := math.Sqrt(ss / float64(len(want)))
	maxRel, rmsRel := worst/rms, math.Sqrt(sd/float64(len(want)))/rms
	fmt.Fprintf(w, "plain Go (float64 rounded to bfloat16, one goroutine): %v; largest difference %.3g, rms %.3g of the output's rms\n",
		time.Since(t0).Round(time.Microsecond), maxRel, rmsRel)
	if maxRel > 0.03 || rmsRel > 3e-3 {
		return errors.New("check failed: the output differs from plain Go")
	}
	fmt.Fprintln(w, "check: ok")
	return nil
}
