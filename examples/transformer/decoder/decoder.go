// Package decoder is the work of the transformer example: one forward pass of a
// decoder block of a GPT-style language model (Radford et al. 2019: pre-norm, causal
// self-attention, a GELU MLP) in bfloat16, written with the library's operations.
//
// For tokens (B, T) and model width D with H heads of width D/H:
//
//	x  = E[tokens] + P[:T]                          gpu.Take, gpu.EvalInto
//	q, k, v = split(LayerNorm(x) @ Wqkv)            gpu.LayerNorm, gpu.MatMul, gpu.Contiguous of a transpose
//	a  = softmax(mask(q @ kᵀ / √(D/H))) @ v         gpu.MatMul (batched), gpu.EvalInto (causal mask and scale), gpu.Softmax
//	x += merge(a) @ Wo                              gpu.Gemm with beta 1 (the residual added by the BLAS)
//	x += GELU(LayerNorm(x) @ W1 + b1) @ W2          gpu.MatMul, gpu.EvalInto (bias and erf GELU), gpu.Gemm
//
// Every array is bfloat16; the operations compute in float32 (matrix products
// accumulate in float32 on the tensor cores) and round once when they store, as
// PyTorch's bfloat16 operations do. The linear layers have no bias but the MLP's first
// (as in many recent models); the layer norms have a weight and a bias.
package decoder

import (
	"errors"
	"fmt"
	"math"

	"github.com/go-gpu/gpu"
)

// BF16 is the element type of the block's arrays.
type BF16 = gpu.BFloat16

// Config is the shape of a block.
type Config struct {
	Vocab  int     // tokens of the embedding table
	MaxSeq int     // positions of the position table
	D      int     // model width
	Heads  int     // attention heads (D must be a multiple)
	Hidden int     // width of the MLP (4D in GPT-2)
	Eps    float64 // layer norms' epsilon
}

// Small is GPT-2 small's block (124M parameters in 12 such blocks): the example's and
// its benchmark's.
var Small = Config{Vocab: 50257, MaxSeq: 1024, D: 768, Heads: 12, Hidden: 3072, Eps: 1e-5}

func (c Config) check() error {
	if c.Vocab < 1 || c.MaxSeq < 1 || c.D < 1 || c.Heads < 1 || c.D%c.Heads != 0 || c.Hidden < 1 || !(c.Eps >= 0) {
		return fmt.Errorf("decoder: config %+v: sizes must be positive, D a multiple of Heads: %w", c, gpu.ErrInvalidValue)
	}
	return nil
}

// Weights are a block's parameters.
type Weights struct {
	Config
	Emb, Pos   *gpu.Array[BF16] // (Vocab, D), (MaxSeq, D)
	LN1W, LN1B *gpu.Array[BF16] // (D)
	Wqkv       *gpu.Array[BF16] // (D, 3D): the query, key and value projections side by side
	Wo         *gpu.Array[BF16] // (D, D)
	LN2W, LN2B *gpu.Array[BF16] // (D)
	W1, B1, W2 *gpu.Array[BF16] // (D, Hidden), (Hidden), (Hidden, D)
	layers     []*gpu.Array[BF16]
	rows, cols *gpu.Array[int32] // the positions 0..MaxSeq-1 as a column and as a row (views of positions)
	positions  *gpu.Array[int32]
}

// NewWeights draws a block's parameters from g: the matrices and tables normal with
// standard deviation 0.02 (GPT-2's initialization), the layer norms' weights 1 + 0.1
// N(0, 1) and their biases and b1 0.1 N(0, 1) (random, so that a check sees them).
func NewWeights(s *gpu.Stream, g *gpu.Generator, c Config) (w *Weights, err error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	w = &Weights{Config: c}
	defer func() {
		if err != nil {
			w.Free()
			w = nil
		}
	}()
	mk := func(src string, shape ...int) (*gpu.Array[BF16], error) {
		z, err := gpu.RandN[float32](s, g, shape...)
		if err != nil {
			return nil, err
		}
		defer z.Free()
		a, err := gpu.Eval[BF16](s, src, gpu.Vars{"z": z})
		if err == nil {
			w.layers = append(w.layers, a)
		}
		return a, err
	}
	const (
		matrix = "0.02*z"
		scale  = "1 + 0.1*z"
		bias   = "0.1*z"
	)
	for _, p := range []struct {
		dst   **gpu.Array[BF16]
		src   string
		shape []int
	}{
		{&w.Emb, matrix, []int{c.Vocab, c.D}}, {&w.Pos, matrix, []int{c.MaxSeq, c.D}},
		{&w.LN1W, scale, []int{c.D}}, {&w.LN1B, bias, []int{c.D}},
		{&w.Wqkv, matrix, []int{c.D, 3 * c.D}}, {&w.Wo, matrix, []int{c.D, c.D}},
		{&w.LN2W, scale, []int{c.D}}, {&w.LN2B, bias, []int{c.D}},
		{&w.W1, matrix, []int{c.D, c.Hidden}}, {&w.B1, bias, []int{c.Hidden}}, {&w.W2, matrix, []int{c.Hidden, c.D}},
	} {
		if *p.dst, err = mk(p.src, p.shape...); err != nil {
			return w, err
		}
	}
	if w.positions, err = gpu.Arange[int32](s, 0, int32(c.MaxSeq), 1); err != nil {
		return w, err
	}
	if w.rows, err = w.positions.Reshape(c.MaxSeq, 1); err != nil {
		return w, err
	}
	w.cols, err = w.positions.Reshape(1, c.MaxSeq)
	return w, err
}

// Free frees the weights.
func (w *Weights) Free() error {
	if w == nil {
		return nil
	}
	var err error
	for _, a := range w.layers {
		err = errors.Join(err, a.Free())
	}
	if w.positions != nil {
		err = errors.Join(err, w.positions.Free())
	}
	w.layers, w.positions = nil, nil
	return err
}

// Forward runs the block on tokens (B, T) (values in [0, Vocab), T <= MaxSeq) and
// returns the output (B, T, D). An out-of-range token is an error reported by a later
// wait (gpu.ErrIndexOutOfRange).
func (w *Weights) Forward(s *gpu.Stream, tokens *gpu.Array[int32]) (out *gpu.Array[BF16], err error) {
	if tokens == nil || tokens.Ndim() != 2 || tokens.Size() == 0 || tokens.Shape()[1] > w.MaxSeq {
		return nil, fmt.Errorf("decoder: tokens of shape %v, want (B, T) with 1 <= T <= %d: %w", tokens.Shape(), w.MaxSeq, gpu.ErrInvalidValue)
	}
	b, t := tokens.Shape()[0], tokens.Shape()[1]
	d, h := w.D, w.Heads
	dh := d / h
	var temps []*gpu.Array[BF16]
	defer func() {
		for _, a := range temps {
			err = errors.Join(err, a.Free())
		}
		if err != nil && out != nil {
			out.Free()
			out = nil
		}
	}()
	temp := func(a *gpu.Array[BF16], err error) (*gpu.Array[BF16], error) {
		if err == nil {
			temps = append(temps, a)
		}
		return a, err
	}
	// contiguous is gpu.Contiguous, keeping a copy it makes to free (it returns a itself
	// when a is contiguous: one token, or one head).
	contiguous := func(a *gpu.Array[BF16]) (*gpu.Array[BF16], error) {
		c, err := gpu.Contiguous(s, a)
		if err == nil && c != a {
			temps = append(temps, c)
		}
		return c, err
	}

	// Embeddings: the residual stream x (B, T, D), updated in place from here on.
	x, err := gpu.Take(s, w.Emb, tokens, gpu.OnAxis(0))
	if err != nil {
		return nil, err
	}
	out = x
	pos, err := w.Pos.Slice(gpu.R(0, t))
	if err != nil {
		return nil, err
	}
	if err := gpu.EvalInto(s, x, "x + p", gpu.Vars{"x": x, "p": pos}); err != nil {
		return nil, err
	}
	x2, err := x.Reshape(b*t, d)
	if err != nil {
		return nil, err
	}

	// Attention.
	n1, err := temp(gpu.LayerNorm(s, x2, 1, w.LN1W, w.LN1B, w.Eps))
	if err != nil {
		return nil, err
	}
	qkv, err := temp(gpu.MatMul(s, n1, w.Wqkv)) // (B*T, 3D)
	if err != nil {
		return nil, err
	}
	split, err := qkv.Reshape(b, t, 3, h, dh)
	if err == nil {
		split, err = split.Transpose(2, 0, 3, 1, 4) // (3, B, H, T, dh)
	}
	if err != nil {
		return nil, err
	}
	heads, err := contiguous(split)
	if err != nil {
		return nil, err
	}
	q, err := heads.Slice(gpu.R(0))
	if err != nil {
		return nil, err
	}
	kk, err := heads.Slice(gpu.R(1))
	if err != nil {
		return nil, err
	}
	v, err := heads.Slice(gpu.R(2))
	if err != nil {
		return nil, err
	}
	if q, err = q.Squeeze(0); err != nil {
		return nil, err
	}
	if kk, err = kk.Squeeze(0); err != nil {
		return nil, err
	}
	if v, err = v.Squeeze(0); err != nil {
		return nil, err
	}
	kt, err := kk.Transpose(0, 1, 3, 2) // (B, H, dh, T)
	if err != nil {
		return nil, err
	}
	scores, err := temp(gpu.MatMul(s, q, kt)) // (B, H, T, T)
	if err != nil {
		return nil, err
	}
	ci, err := w.rows.Slice(gpu.R(0, t), gpu.R())
	if err != nil {
		return nil, err
	}
	cj, err := w.cols.Slice(gpu.R(), gpu.R(0, t))
	if err != nil {
		return nil, err
	}
	if err := gpu.EvalInto(s, scores, "where(i >= j, s*scale, -inf)",
		gpu.Vars{"i": ci, "j": cj, "s": scores, "scale": 1 / math.Sqrt(float64(dh))}); err != nil {
		return nil, err
	}
	probs, err := temp(gpu.Softmax(s, scores, -1))
	if err != nil {
		return nil, err
	}
	att, err := temp(gpu.MatMul(s, probs, v)) // (B, H, T, dh)
	if err != nil {
		return nil, err
	}
	merged, err := att.Transpose(0, 2, 1, 3) // (B, T, H, dh)
	if err != nil {
		return nil, err
	}
	mc, err := contiguous(merged)
	if err != nil {
		return nil, err
	}
	m2, err := mc.Reshape(b*t, d)
	if err != nil {
		return nil, err
	}
	if err := gpu.Gemm(s, 1, m2, w.Wo, 1, x2); err != nil {
		return nil, err
	}

	// MLP.
	n2, err := temp(gpu.LayerNorm(s, x2, 1, w.LN2W, w.LN2B, w.Eps))
	if err != nil {
		return nil, err
	}
	u, err := temp(gpu.MatMul(s, n2, w.W1)) // (B*T, Hidden)
	if err != nil {
		return nil, err
	}
	if err := gpu.EvalInto(s, u, GELU, gpu.Vars{"u": u, "b": w.B1}); err != nil {
		return nil, err
	}
	if err := gpu.Gemm(s, 1, u, w.W2, 1, x2); err != nil {
		return nil, err
	}
	return x, nil
}

// GELU is the MLP's activation of u + b as an expression: the exact GELU, x Φ(x) =
// x (1 + erf(x/√2)) / 2 (Hendrycks & Gimpel 2016; torch.nn.functional.gelu's default).
const GELU = "0.5*(u + b)*(1 + erf((u + b)*0.7071067811865476))"

// Flops returns the floating-point operations of a forward pass of tokens (b, t): the
// matrix products (2mnk each; the attention's over the whole T x T square, as it is
// computed).
func (c Config) Flops(b, t int) int64 {
	bt := int64(b) * int64(t)
	d, f := int64(c.D), int64(c.Hidden)
	proj := 2 * bt * (3*d*d + d*d + 2*d*f)
	attn := 2 * 2 * int64(b) * int64(t) * int64(t) * d
	return proj + attn
}
