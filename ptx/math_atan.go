package ptx

// Inverse tangent (float32). For |x| <= 1, atan x = x + x³P(x²) with P minimax on
// [0, 1]; beyond, atan|x| = π/2 - atan(1/|x|) (Cody & Waite, ch. 14, without their
// second reduction: the polynomial covers [0, 1] directly), the sign applied last.

// atan(t) = t + t³ P(t²) for |t| <= 1 (float32, relative error 2^-31.2).
var atanPolyF32 = []float64{-0x1.555552p-2, 0x1.9997ep-3, -0x1.247374p-3, 0x1.c4f1e2p-4, -0x1.68e6fep-4,
	0x1.1422c8p-4, -0x1.6e19a2p-5, 0x1.714b1cp-6, -0x1.df970cp-8, 0x1.23f93p-10}

func atanF32(b *mb, t vtype, xs []val) val {
	x := xs[0]
	ax := b.abs(x)
	big := b.cmp(cGt, ax, b.f32(1))
	u := b.sel(big, b.div(b.f32(1), ax), ax)
	u2 := b.mul(u, u)
	p := b.fma(b.mul(u, u2), b.horner(u2, atanPolyF32), u)
	pio2 := splitConst(piOver2Digits, 2, t)
	r := b.sel(big, b.add(b.sub(b.fc(t, pio2[0]), p), b.fc(t, pio2[1])), p)
	return b.sel(b.isNaN(x), b.nan(t), b.withSign(r, x))
}
