package ptx

// erf (float32 and float64).
//
// |x| < 1: erf x = x + x·F(x²), F(t) = erf(sqrt t)/sqrt t - 1 minimax on [0, 1]
// (relative error of erf 2^-62.7 for float64 with 13 terms, 2^-29.6 for float32 with 7),
// the last steps in double-word arithmetic.
// 1 <= |x| < 6 (float32: 4): erf x = 1 - erfc|x| with erfc a minimax polynomial in
// |x| - c on pieces of width 1/2 (float32: 1) around their centres c, read from a table
// (absolute error below 2^-58.7, 2^-32.6 for float32; coefficients from
// internal/remez): erfc is small there, so the rounding of its Horner sum is a small
// fraction of an ulp of erf = 1 - erfc. Beyond, erf is ±1 (erfc(5.9) < 2^-54,
// erfc(3.9) < 2^-25). The sign is applied last; NaN gives NaN.

func init() {
	register(Erf, erfF32, erfF64)
}

// F(t) = erf(sqrt t)/sqrt t - 1, t in [0, 1] (float64, relative error of erf 2^-62.7).
var erfPolyF64 = []float64{0x1.06eba8214db69p-3, -0x1.812746b0379e6p-2, 0x1.ce2f21a042b20p-4,
	-0x1.b82ce3128499cp-6, 0x1.565bcd0db02e5p-8, -0x1.c02db3d8ed26ep-11, 0x1.f9a321a11e172p-14,
	-0x1.f4d1df3950630p-17, 0x1.b9def19e32224p-20, -0x1.5f1d36c450065p-23, 0x1.f7a41243f4332p-27,
	-0x1.386ac1072584dp-30, 0x1.0579ab6781f95p-34}

// The same for float32 (relative error 2^-29.6).
var erfPolyF32 = []float64{0x1.06eba8p-3, -0x1.81273ep-2, 0x1.ce2cf8p-4, -0x1.b7f90ep-6, 0x1.5405b2p-8,
	-0x1.a3f7p-11, 0x1.496a32p-14}

// erfc(c + u), |u| <= 1/4, on the pieces [1 + k/2, 3/2 + k/2), k = 0..9, 14 terms each.
var erfcPiecesF64 = []float64{
	// [1.0, 1.5) center 1.25: error 2^-59.4
	0x1.3bcd133aa0ffcp-4, -0x1.e4652fadcb6b1p-3, 0x1.2ebf3dcc9f20ep-2, -0x1.571d01c5c5990p-3, 0x1.93a9a7bc04f2bp-8, 0x1.8281ce0ba3e21p-5, -0x1.5d0003bc36ba5p-6, -0x1.db43cb5825089p-9, 0x1.7567363126d94p-8, -0x1.cc21420e8323bp-11, -0x1.a00e3c7d115b7p-11, 0x1.53875fa771340p-12, 0x1.bf9378ed5ad5bp-15, -0x1.c71b9e91ef77dp-15,
	// [1.5, 2.0) center 1.75: error 2^-58.7
	0x1.b4be201caa4b5p-7, -0x1.b055303221018p-5, 0x1.7a4a8a2bdcd24p-4, -0x1.7148c3d57c010p-4, 0x1.8a0da54323eb7p-5, -0x1.b22257ded4cddp-8, -0x1.25b378f5f42a7p-7, 0x1.8d10fbea39717p-8, -0x1.7ec151d557f79p-11, -0x1.d4cf994ec9179p-11, 0x1.d02a7714b1fdfp-12, 0x1.72da1acb539d0p-18, -0x1.1bc476deea1aep-14, 0x1.1bc7c0c265cebp-16,
	// [2.0, 2.5) center 2.25: error 2^-59.2
	0x1.7f713f9cc977dp-10, -0x1.d4143a9dfe95fp-8, 0x1.074b60f8df5ffp-6, -0x1.63ef61e824745p-6, 0x1.38a983275d9f1p-6, -0x1.5d3b17bba439ap-7, 0x1.7cae0dc816825p-9, 0x1.5f8312afbbbe6p-11, -0x1.060311d766a8ap-10, 0x1.8353170d4a1fdp-12, 0x1.82e4be156e903p-17, -0x1.1148a175fec32p-14, 0x1.702c696694a7ap-16, 0x1.9dff0f81caad9p-20,
	// [2.5, 3.0) center 2.75: error 2^-61.1
	0x1.a609f7584d349p-14, -0x1.3360ccd23db3ap-11, 0x1.a6a519a114204p-10, -0x1.69cf466ccdf8fp-9, 0x1.ab0c273b1ddb5p-9, -0x1.69359606632d4p-9, 0x1.b2755bb8c21eap-10, -0x1.52b62640c36d3p-11, 0x1.7558370241715p-14, 0x1.2abb3e777cba5p-14, -0x1.cd7d4a7a396a8p-15, 0x1.09d02cae96777p-16, 0x1.54655d2b36c55p-20, -0x1.68a24191482aap-19,
	// [3.0, 3.5) center 3.25: error 2^-67.5
	0x1.20c1303550f0fp-18, -0x1.e9b5e8d00cec8p-16, 0x1.8de3cd290a770p-14, -0x1.9aa489e3c95f1p-13, 0x1.2c7d5ef0553dcp-12, -0x1.490a4d2388394p-12, 0x1.145464e9a9e3ap-12, -0x1.647f71d5c6e13p-13, 0x1.56747a1be052ep-14, -0x1.b2c373a45dedfp-16, 0x1.38928c38eb895p-19, 0x1.80a5c4f08bb73p-19, -0x1.ff3185d1b7e29p-20, 0x1.1db615061135bp-21,
	// [3.5, 4.0) center 3.75: error 2^-65.5
	0x1.e87470e4f3c83p-24, -0x1.d9371e2ff78ecp-21, 0x1.bba3ac4d09ed7p-19, -0x1.0b6a7b0f221f6p-17, 0x1.d06f585c2a5b7p-17, -0x1.3436bc9db67c7p-16, 0x1.4357b62830e67p-16, -0x1.110de52a6881fp-16, 0x1.7566735433991p-17, -0x1.99f5755a969a6p-18, 0x1.5d84b7164bd95p-19, -0x1.a07393605d454p-21, 0x1.5af8b871a95c0p-24, 0x1.055c2438da422p-24,
	// [4.0, 4.5) center 4.25: error 2^-69.4
	0x1.fcae93fb74afbp-30, -0x1.155a09065d17cp-26, 0x1.26afa9969d2e3p-24, -0x1.95ea6fe009979p-23, 0x1.96ba737042627p-22, -0x1.3b46801790c38p-21, 0x1.8868e008fb829p-21, -0x1.916e92c65ec0bp-21, 0x1.566f53bef068bp-21, -0x1.eab4bd26afe30p-22, 0x1.274999cf46f27p-22, -0x1.27dfc5718435bp-23, 0x1.e5c8e75792c51p-25, -0x1.24567a8c58ceep-26,
	// [4.5, 5.0) center 4.75: error 2^-71.2
	0x1.453141083f078p-36, -0x1.8a61745ed7995p-33, 0x1.d453ba2b30acfp-31, -0x1.6a8aeba26dc10p-29, 0x1.9b017b67740a7p-28, -0x1.6b43c9a1df750p-27, 0x1.042f1a5470b0ap-26, -0x1.35dc786f14fa9p-26, 0x1.3837c2cc6ef54p-26, -0x1.0d4e735de638bp-26, 0x1.9023bdb485c93p-27, -0x1.01aacbf8e3845p-27, 0x1.2b16ffc845446p-28, -0x1.1adb5f2b7e48bp-29,
	// [5.0, 5.5) center 5.25: error 2^-75.5
	0x1.fd5f08ae96a94p-44, -0x1.5422ef5e1ca79p-40, 0x1.be6dda08016bcp-38, -0x1.7f8a0f2b2874ap-36, 0x1.e4cb4f41909b5p-35, -0x1.e044b6ca8b9c4p-34, 0x1.83e9e3a1d49fbp-33, -0x1.0659270357f0ap-32, 0x1.2ece91fb69c00p-32, -0x1.2e3f5386ea2b7p-32, 0x1.06a8dfaf7f4c9p-32, -0x1.93190851891e6p-33, 0x1.254becccf6660p-33, -0x1.5cfcf90709f00p-34,
	// [5.5, 6.0) center 5.75: error 2^-81.1
	0x1.e7eea035d0e25p-52, -0x1.63daf8b86dd20p-48, 0x1.ff8ac4cc083f0p-46, -0x1.e2d06cf4c4164p-44, 0x1.505da0abfe5cbp-42, -0x1.70b70a64cdb65p-41, 0x1.4aec55c00aa45p-40, -0x1.f3c4511a468e2p-40, 0x1.43d98c680c781p-39, -0x1.6d2f622a389b0p-39, 0x1.681519486aa38p-39, -0x1.3d56d422b4c26p-39, 0x1.1461a2980c260p-39, -0x1.830ee6f20b46fp-40,
}

// erfc(c + u), |u| <= 1/2, on [1, 2), [2, 3), [3, 4), 10 terms each (float32).
var erfcPiecesF32 = []float64{
	// [1.0, 2.0) center 1.5: error 2^-32.6
	0x1.15aaa80000000p-5, -0x1.e723720000000p-4, 0x1.6d5a940000000p-3, -0x1.1c2a220000000p-3, 0x1.6d5ba80000000p-5, 0x1.e74e4c0000000p-7, -0x1.3cbfe80000000p-6, 0x1.33e28e0000000p-8, 0x1.3aaa600000000p-9, -0x1.9234020000000p-10,
	// [2.0, 3.0) center 2.5: error 2^-32.8
	0x1.aab8500000000p-12, -0x1.1d83180000000p-9, 0x1.64e44e0000000p-8, -0x1.119d8a0000000p-7, 0x1.1a82940000000p-7, -0x1.90eb8a0000000p-8, 0x1.7012fe0000000p-9, -0x1.1b86820000000p-11, -0x1.4121700000000p-12, 0x1.00c2de0000000p-12,
	// [3.0, 4.0) center 3.5: error 2^-36.8
	0x1.8ef3c80000000p-21, -0x1.6a59840000000p-18, 0x1.3d07380000000p-16, -0x1.62cc4e0000000p-15, 0x1.1c40340000000p-14, -0x1.5872000000000p-14, 0x1.4393b00000000p-14, -0x1.e7b7280000000p-15, 0x1.36acd40000000p-15, -0x1.04fdc20000000p-16,
}

// hornerTable returns sum c[base+i]·u^i (i < n) from a constant table.
func (b *mb) hornerTable(u val, tbl uint64, base val, n int) val {
	q := b.load(tbl, b.add(base, b.u32(uint32(n-1))))
	for i := n - 2; i >= 0; i-- {
		q = b.fma(q, u, b.load(tbl, b.add(base, b.u32(uint32(i)))))
	}
	return q
}

func erfGeneric(b *mb, t vtype, xs []val, poly, pieces []float64, perUnit float64, n int, top float64) val {
	x := xs[0]
	ax := b.abs(x)
	one := b.fc(t, 1)
	res := b.variable(x)
	b.ifElse(b.cmp(cLt, ax, one), func() {
		// x + x·F(t), t = x², with the last two Horner steps and the final sum in
		// double-word arithmetic: F reaches -0.157 at 1, where plain Horner's rounding
		// errors would cost a third of an ulp.
		t2 := b.mul(x, x)
		r := b.horner(t2, poly[2:])
		ph, pl := b.twoProd(t2, r)
		s1, e1 := b.fastTwoSum(b.fc(t, poly[1]), ph) // |c1| >= |t·R|
		l1 := b.add(e1, pl)
		qh, ql := b.twoProd(t2, s1)
		fh, fe := b.twoSum(b.fc(t, poly[0]), qh)
		fl := b.fma(t2, l1, b.add(fe, ql))
		ah, al := b.twoProd(x, fh)
		vh, ve := b.fastTwoSum(x, ah)
		v := b.add(vh, b.fma(x, fl, b.add(ve, al)))
		b.set(res, b.sel(b.cmp(cEq, x, b.fc(t, 0)), x, v)) // ±0 keeps its sign
	}, func() {
		name := "erfc_f64"
		tt := tF64
		if t == tF32 {
			name, tt = "erfc_f32", tF32
		}
		data := make([]uint64, len(pieces))
		for i, c := range pieces {
			data[i] = fbits(tt, c)
		}
		tbl := b.table(name, tt, data)
		last := len(pieces)/n - 1
		// piece k = floor((|x| - 1)·perUnit), centre 1 + (k + 1/2)/perUnit
		kf := b.floor(b.mul(b.sub(ax, one), b.fc(t, perUnit)))
		kf = b.sel(b.cmp(cLt, kf, b.fc(t, float64(last))), kf, b.fc(t, float64(last)))
		c := b.fma(kf, b.fc(t, 1/perUnit), b.fc(t, 1+0.5/perUnit))
		u := b.sub(ax, c) // exact (Sterbenz)
		k := b.cvtFI(kf)
		e := b.hornerTable(u, tbl, b.mul(k, b.u32(uint32(n))), n)
		v := b.sub(one, e)
		v = b.sel(b.cmp(cGe, ax, b.fc(t, top)), one, v)
		b.set(res, b.sel(b.isNaN(x), b.nan(t), b.withSign(v, x)))
	})
	return res
}

func erfF64(b *mb, t vtype, xs []val) val {
	return erfGeneric(b, t, xs, erfPolyF64, erfcPiecesF64, 2, 14, 6)
}

func erfF32(b *mb, t vtype, xs []val) val {
	return erfGeneric(b, t, xs, erfPolyF32, erfcPiecesF32, 1, 10, 4)
}
