// Package random generates counter-based random numbers that are identical, bit for bit,
// on the CPU (Go) and on NVIDIA GPUs (PTX kernels generated here), so that an array filled
// on either backend, in any number of chunks, by any grid, holds the same values.
//
// # Generator
//
// The bit generator is Philox4x32-10 (J. K. Salmon, M. A. Moraes, R. O. Dror and
// D. E. Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011), checked against
// the known-answer vectors of the Random123 library. It maps a 128-bit counter and a
// 64-bit key to four 32-bit words, a "block".
//
// A request is (seed, offset, n elements of one Spec). Its key is the seed's two 32-bit
// halves (Key). Its blocks j = 0, 1, ... have counters (offset + j mod 2^64) in the low 64
// bits (counter words 0 and 1) and a draw round in the high 64 bits (words 2 and 3),
// which is 0 for every first draw (Counter, Block). Rounds 1, 2, ... are used only by
// the rejection step of Range, and only with that request's own low counters.
//
// # Element mapping
//
// Every block gives 16 bytes of output: its words w0, w1, w2, w3 in little-endian order.
// For an element type of S bytes (S = 1, 2, 4 or 8) a block holds E = 16/S elements
// (Spec.ElemsPerBlock), and element i of the request comes from block j = i / E, slot
// k = i % E:
//
//   - S = 4: word k.  S = 8: the 64-bit word x = w[2k] | w[2k+1] << 32.
//   - S = 2: the 16-bit half h = (w[k/2] >> (16*(k%2))) & 0xFFFF (low half first).
//   - S = 1: the byte (w[k/4] >> (8*(k%4))) & 0xFF (least significant first).
//
// Normal float16 and bfloat16 are the exception: element i is the normal float32 element
// i of the same request (from block i/4, below) rounded once to nearest even, so a
// block gives 4 of them (E = 4, 8 bytes of output).
//
// A request of n elements therefore consumes Blocks(n) = ceil(n/E) blocks (ceil(n*S/16)
// but for normal halves), counters offset .. offset+Blocks(n)-1. A generator that adds
// Blocks(n) to its offset after each request never reuses a block; the unused slots of a
// request's last block are discarded. Element i depends only on (seed, offset, i), so a
// chunk [i0, i1) of an output is computed on its own (Fill with first = i0).
//
// # Distributions
//
// With the slot's bits as above:
//
//   - Uniform float32 in [0, 1): (w >> 8) * 2^-24; largest 1 - 2^-24.
//   - Uniform float64 in [0, 1): (x >> 11) * 2^-53; largest 1 - 2^-53.
//   - Uniform float16 in [0, 1): (h >> 5) * 2^-11 (bits of the exact binary16 value);
//     largest 1 - 2^-11.
//   - Uniform bfloat16 in [0, 1): (h >> 8) * 2^-8; largest 1 - 2^-8.
//
// Every value is exact in its type, so 1.0 never appears. Converting a wider uniform to
// a narrower type is not safe: 1 - 2^-24 rounds to 1.0 in float16 and bfloat16, and
// 1 - 2^-53 rounds to 1.0 in float32. That is why the half types have their own
// generators with their own mantissa widths.
//
//   - FullRange integers (int8 ... uint64): the slot's bits as the type (two's complement
//     for signed types). Bool: bit 0 of the byte slot (a fair coin).
//   - Range int32 [lo, hi): D. Lemire, "Fast random integer generation in an interval",
//     ACM TOMACS 29(1), 2019, without bias. r = uint32(hi - lo), t = (2^32 - r) mod r;
//     for draw w, m = w * r (64-bit); if uint32(m) >= t the element is lo + int32(m >> 32);
//     otherwise the element redraws with the same slot k of the block with counter
//     (offset + j, round), round = 1, 2, ... The result does not depend on which thread
//     draws, or in what order. Round MaxRounds-1 = 63 is accepted whatever it draws; a
//     draw is rejected with probability t/2^32 < 1/2, so an element reaches that round
//     with probability below 2^-63 (and is then still in [lo, hi)).
//   - Range int64 [lo, hi): the same with 64-bit draws x, r = uint64(hi - lo),
//     t = (2^64 - r) mod r and the 128-bit product x * r.
//   - Normal float32 (mean 0, variance 1): Box-Muller on the word pairs (w0, w1) and
//     (w2, w3) of a block: for a pair (a, b), elements 2p and 2p+1 are
//     (s r cos(pi t), r sin(pi t)) with r = sqrt(-2 ln u), u = fl32(2k+1) * 2^-32 for
//     k = a & 0x7FFFFFFF (so u in [2^-32, 1]), s = -1 if bit 31 of a is set (else 1), and
//     t = fl32(int32(b)) * 2^-32 in [-1/2, 1/2]. The angle pi t covers the right
//     half-plane and s mirrors it onto the left one, so the angle is uniform on the
//     circle. |z| <= sqrt(64 ln 2) (1 + 2^-21) < 6.6605 (the largest radius, for u =
//     2^-32, times the bounds of the rounding errors below).
//   - Normal float16 and bfloat16: the normal float32 values, rounded once to nearest
//     even (|z| < 6.6605 stays finite; the half types' normals are the float32 ones of
//     the same generator state, rounded).
//   - Normal float64: Box-Muller on (x0, x1) = (w0 | w1 << 32, w2 | w3 << 32) of a block:
//     elements 2j, 2j+1 are (r cos t, r sin t) with u = fl(fl(x0) * 2^-64 + 2^-65),
//     r = sqrt(-2 ln u), t = 2 pi x1 / 2^64. |z| <= sqrt(130 ln 2) < 9.5.
//
// # Reproducible floating point
//
// The normal generators use only operations that IEEE 754 defines exactly and that both
// Go and PTX perform identically: add, sub, mul, fma, div and sqrt with rounding to
// nearest even (PTX .rn; never .approx, never .ftz, and always .rn so that ptxas does not
// contract a mul and an add into an fma), integer to float conversions with .rn, and
// integer operations. ln, sqrt and sin/cos are this package's own domain-restricted
// sequences of such operations (fmath.go), which the kernel generator emits step for
// step; the results depend only on the words, not on the GPU.
//
// Float32 (boxMuller32, radius32, sincospi32; no division, one sqrt.rn a pair):
//
//   - ln: from the bits of x = fl32(2k+1) (u = x 2^-32 = 2^e m, m in [sqrt(1/2),
//     sqrt(2))), with integer operations: e, and the bits of M = m 2^32; f' = sigma (m - 1)
//     by one fma; L' = lambda (-2 ln u) = e fl32(-2 lambda ln 2) + f' P(f'), P a monic
//     degree-7 minimax polynomial; r' = sqrt(L') = sqrt(lambda) r. L' is exactly 0 for
//     u = 1 and within 5.1 * 2^-24 relative of lambda (-2 ln u); r within 3.2 * 2^-24.
//   - sin and cos of pi t: ts = fl(fl32(int32(b)) alpha 2^-32), y = ts^2; sin(pi t) /
//     sqrt(lambda) = ts S(y) and cos(pi t) / sqrt(lambda) = C(y), S and C monic degree-4
//     minimax polynomials (absolute errors below 2.5 and 3.4 * 2^-24 after the scaling).
//   - z0 = fl(s r' C(y)), z1 = fl(r' fl(ts S(y))): the factors sqrt(lambda) cancel.
//
// The constants lambda (about 8.3e5), sigma and alpha make every polynomial monic, so
// that its first Horner step adds one immediate (an SASS FFMA takes one immediate
// operand). Against Box-Muller in float64 on the same float32 inputs u and t, a float32
// normal is within 5.5 * 2^-24 r (r <= 6.661; the largest difference measured is
// 9.3e-7); with the exact angle int32(b) 2^-32, within 1.5e-6 (1.06e-6 measured). (u is
// the float32 value fl32(2k+1) 2^-32 by definition: near 1 its spacing is 2^-24, so the
// smallest radii are sqrt(-2 ln(1 - j 2^-24)).)
//
// Float64 (boxMuller64, log64, sincos2pi64):
//
//   - ln: x = 2^e * m, m in [sqrt(1/2), sqrt(2)), from the bits; f = m - 1;
//     s = f/(2+f); ln(m) = f - (f^2/2 - s (f^2/2 + R(s^2))), R the Taylor series of
//     2 atanh(s)/s - 2 to s^20; ln x = e ln2hi + (e ln2lo + ln m) (fdlibm's scheme).
//     Within 1 ulp of math.Log on (0, 1] in the tests.
//   - sin/cos of 2 pi w / 2^64: exact integer reduction to a quadrant q and a signed
//     remainder d, t = fl(d) * 2^-62 in [-1/2, 1/2], Taylor polynomials of sin(pi/2 t) and
//     cos(pi/2 t) to t^17 and t^16, then a swap and sign flips by quadrant. Within 2 ulp
//     of math.Sincos.
//
// Go may fuse x*y+z into an fma on some architectures unless a conversion rounds the
// product, so the Go code wraps products in explicit conversions. Go has no float32 fma,
// and float32(math.FMA(a, b, c)) rounds twice; fma32 rounds the float64 sum to odd first
// (Boldo and Melquiond 2008), which makes the second rounding correct; it is tested
// against math/big.
//
// # Performance
//
// On the H200 (sm_90) the float32 normal kernel's main loop does two blocks per thread
// and iteration in 253 SASS instructions (ptxas 11.8), 31.6 per element: Philox about
// 10.5, the transform about 19.5 (a pair: ln 17, the square root 7, sin/cos and the
// products 14), the loop and stores 1.5. (The first float32 kernel, with div.rn in ln and
// a quadrant reduction, took 54 per element; sqrt.rn.f32's range check and branch took 5
// more per pair than the sequence used now.) At about 33e12 instructions/s (132 SMs * 4
// schedulers * 32 lanes * 1.98 GHz), 2^28 float32 normals take 0.26 ms of issue, about
// the 0.27 ms it takes to write 1 GiB at the copy bandwidth; measured, the schedulers
// issue in about 70% of cycles, so the kernel runs at about two thirds of the copy
// bandwidth. Nsight Compute on the H200 (session 5, 2^28 float32, ptxas of driver 580):
// 30.3 warp instructions issued per element, issue slots busy 69.5%, the FMA pipe (FP32
// and integer multiplies) the busiest at 54%; of the 20.3 cycles between a warp's
// instructions, 8.5 not selected (another warp issued), 4.9 math pipe throttle, 3.7
// dispatch stall, 2.1 fixed-latency waits, under 0.2 memory. The kernel is bound by
// issue and the FMA pipe, not by memory or occupancy (89.7% achieved): only fewer
// instructions would make it faster. (A ziggurat does not get there: session 6 built
// Marsaglia and Tsang's with 256 strips in NumPy's float32 layout, one word a candidate,
// the strip table in shared memory and the 1.5% of rejected candidates queued per warp
// and finished 32 at a time; it matched the CPU bit for bit, but took 657-673 us for
// 2^28 elements against Box-Muller's 366: 29.3 warp instructions per element (Philox
// 10, the fast path 12, queue and slow path the rest), issue slots busy 49%, stalls on
// the shared table's bank conflicts (short scoreboard 4.3, MIO throttle 2.9 cycles per
// instruction) and the slow path's loads (long scoreboard 4.6). The code is on the
// branch experiment/ziggurat-randn.) Float64 normals: 100 per element (FP64 at half the
// FP32 rate; their polynomial coefficients come from a constant bank). The uniform and
// integer kernels (4 to 18 instructions per element) run at memory speed, except the
// first uniform float16 and bfloat16 kernels: at 84 SASS instructions per block of 8
// values, 5.3 per byte written (float32: 62 per 4 values, 3.9 per byte), each value
// through float32, they ran at 80.6-82% of the copy bandwidth on the H200 (2^28
// elements), bound by issue (slots 61% busy, the ALU pipe 64%, DRAM 70%). The packed
// transform (Options.HalfUniform 2 and 3) makes the same bits from integer bit
// patterns and one packed half multiply a word: 58 instructions per block of bfloat16
// and 62 of float16 (3.6 and 3.9 per byte); with two blocks in flight a thread (3, the
// default), 53.5 and 57.5.
//
// # API
//
// Chunk functions (one goroutine; first is the global index of dst[0]): UniformFloat32,
// UniformFloat64, UniformFloat16, UniformBFloat16, NormalFloat32, NormalFloat64,
// NormalFloat16, NormalBFloat16, Bits,
// Bool, IntRange32, IntRange64, and the generic Fill and FillBytes. Whole requests over
// all cores: FillParallel, Expected (the reference bytes a GPU kernel must write) and
// Parallel. Kernels: Spec.Kernel returns the PTX (see Kernel for its parameters and the
// recommended launch) and Spec.Args its arguments.
package random
