package random

// Philox4x32-10: J. K. Salmon, M. A. Moraes, R. O. Dror and D. E. Shaw, "Parallel random
// numbers: as easy as 1, 2, 3", SC 2011 (doi:10.1145/2063384.2063405), section 4.2, with
// the constants of the Random123 library (include/Random123/philox.h: PHILOX_M4x32_0,
// PHILOX_M4x32_1, PHILOX_W32_0, PHILOX_W32_1).
const (
	philoxM0 = 0xD2511F53 // multiplier of counter word 0
	philoxM1 = 0xCD9E8D57 // multiplier of counter word 2
	philoxW0 = 0x9E3779B9 // key schedule increment of key word 0 (golden ratio)
	philoxW1 = 0xBB67AE85 // key schedule increment of key word 1 (sqrt(3)-1)
)

// Rounds is the number of Philox rounds this package uses (Philox4x32-10, the variant the
// paper recommends and cuRAND, PyTorch and JAX use).
const Rounds = 10

// Philox4x32 returns Philox4x32-10 of the 128-bit counter ctr (four 32-bit words, word 0
// least significant) under the 64-bit key (two 32-bit words). It is a bijection of the
// counter for every key; the package's streams are built on it (see the package doc).
func Philox4x32(ctr [4]uint32, key [2]uint32) [4]uint32 {
	return philoxR(Rounds, ctr, key)
}

// philoxR is Philox4x32 with a given number of rounds (the known-answer tests also check
// 7 rounds). One round maps (c0, c1, c2, c3) to
// (hi(M1*c2) ^ c1 ^ k0, lo(M1*c2), hi(M0*c0) ^ c3 ^ k1, lo(M0*c0)), and the key is bumped
// by (W0, W1) between rounds.
func philoxR(rounds int, ctr [4]uint32, key [2]uint32) [4]uint32 {
	c0, c1, c2, c3 := ctr[0], ctr[1], ctr[2], ctr[3]
	k0, k1 := key[0], key[1]
	for i := 0; i < rounds; i++ {
		p0 := uint64(c0) * philoxM0
		p1 := uint64(c2) * philoxM1
		c0, c1, c2, c3 = uint32(p1>>32)^c1^k0, uint32(p1), uint32(p0>>32)^c3^k1, uint32(p0)
		k0 += philoxW0
		k1 += philoxW1
	}
	return [4]uint32{c0, c1, c2, c3}
}

// Key returns the Philox key of a seed: its low and high 32-bit halves.
func Key(seed uint64) [2]uint32 { return [2]uint32{uint32(seed), uint32(seed >> 32)} }

// Counter returns the Philox counter of block number ctr (offset plus the block's index in
// its request, modulo 2^64) in draw round round: ctr in the low 64 bits, round in the high
// 64 bits. Every first draw uses round 0; rounds 1, 2, ... serve only the rejection
// resampling of IntRange (see the package doc).
func Counter(ctr, round uint64) [4]uint32 {
	return [4]uint32{uint32(ctr), uint32(ctr >> 32), uint32(round), uint32(round >> 32)}
}

// Block returns the four 32-bit words of Philox block ctr, draw round round, under seed:
// Philox4x32(Counter(ctr, round), Key(seed)).
func Block(seed, ctr, round uint64) [4]uint32 {
	return Philox4x32(Counter(ctr, round), Key(seed))
}

// block is Block for round 0 with the key already split, unrolled for speed.
func block(k0, k1 uint32, ctr uint64) (w0, w1, w2, w3 uint32) {
	return blockR(k0, k1, ctr, 0)
}

// blockR is Block with the key already split and a 32-bit round (the high word of the
// round, counter word 3, is 0 for every round this package uses).
func blockR(k0, k1 uint32, ctr uint64, round uint32) (w0, w1, w2, w3 uint32) {
	c0, c1, c2, c3 := uint32(ctr), uint32(ctr>>32), round, uint32(0)
	for i := 0; i < Rounds; i++ {
		p0 := uint64(c0) * philoxM0
		p1 := uint64(c2) * philoxM1
		c0, c1, c2, c3 = uint32(p1>>32)^c1^k0, uint32(p1), uint32(p0>>32)^c3^k1, uint32(p0)
		k0 += philoxW0
		k1 += philoxW1
	}
	return c0, c1, c2, c3
}
