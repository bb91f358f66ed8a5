package gpu

import "slices"

// MayShareMemory reports whether a and b might share memory, by their bounds only
// (numpy.may_share_memory): whether they lie in one allocation and the byte ranges
// from each one's lowest element's first byte to its highest element's last byte
// intersect. False is a proof that no byte of a is a byte of b; true is not a proof
// that one is (a[::2] and a[1::2] share bounds but no byte: see SharesMemory). An
// empty or nil array shares memory with nothing.
func MayShareMemory(a, b AnyArray) bool {
	ha, hb, ok := overlapHeaders(a, b)
	if !ok {
		return false
	}
	la, ua := byteBounds(ha)
	lb, ub := byteBounds(hb)
	return la < ub && lb < ua
}

// SharesMemory reports whether a and b have a byte of an element in common
// (numpy.shares_memory): whether they lie in one allocation and some element of a
// and some element of b (each its element size of bytes, at the offset its index and
// strides give) overlap. It is exact as NumPy's is: it solves the same bounded linear
// Diophantine problem (one unknown an index of a dimension of more than one element
// and nonzero stride, plus one for the byte within the elements), so disjoint views
// of one allocation (a[::2] and a[1::2], a[:n] and a[n:], the columns of a row-major
// matrix) are false and overlapping ones (a and a reversed, a[1:] and a[:n-1], an
// int64 view over an int32 array's bytes, a broadcast row and the rows it is
// broadcast to) true. The search stops after a bounded amount of work (NumPy's
// max_work, where shares_memory raises TooHardError); a problem it can't settle within
// it, which takes many large dimensions of unrelated strides, is reported true, so
// false is always a proof that no byte is shared. An empty or nil array shares memory
// with nothing.
func SharesMemory(a, b AnyArray) bool {
	ha, hb, ok := overlapHeaders(a, b)
	return ok && sharesMemory(ha, hb)
}

// sharesMemoryWork bounds the search of sharesMemory, in candidate values tried.
const sharesMemoryWork = 1 << 16

// headersShareMemory is SharesMemory of two layouts.
func headersShareMemory(ha, hb *header) bool {
	return mayOverlap(ha, hb) && sharesMemory(ha, hb)
}

// mayOverlap reports whether ha and hb are non-empty layouts of one allocation, the
// only ones that may share memory.
func mayOverlap(ha, hb *header) bool {
	return ha.buf.a == hb.buf.a && prod(ha.shape) != 0 && prod(hb.shape) != 0
}

// sameLayout reports whether a and b, one allocation's, address the same bytes for
// each index: the same first byte, element size and strides (in elements, b's as
// given, so that a caller can pass an operand's strides broadcast to a's shape). Such
// an operand of an elementwise operation is read and written element by element in
// place; one that shares memory with the output otherwise (SharesMemory) is copied
// first, as NumPy copies it, so that no element is overwritten before it is read.
func sameLayout(a, b *header, bStrides []int) bool {
	return firstByte(a) == firstByte(b) && a.dt.Size() == b.dt.Size() && slices.Equal(a.strides, bStrides)
}

// firstByte is the offset of h's first element in its allocation, in bytes.
func firstByte(h *header) int64 { return h.buf.off + int64(h.off)*int64(h.dt.Size()) }

// overlapHeaders returns a's and b's layouts when both are non-nil, non-empty and in
// one allocation, the only arrays that may share memory.
func overlapHeaders(a, b AnyArray) (ha, hb *header, ok bool) {
	if a == nil || b == nil || a.isNil() || b.isNil() {
		return nil, nil, false
	}
	ha, hb = a.header(), b.header()
	return ha, hb, mayOverlap(ha, hb)
}

// byteBounds returns the byte range [lo, hi) of the allocation from h's lowest
// element's first byte to its highest element's last, h not empty.
func byteBounds(h *header) (lo, hi int64) {
	es := int64(h.dt.Size())
	lo = firstByte(h)
	hi = lo
	for i, d := range h.shape {
		span := int64(d-1) * int64(h.strides[i]) * es
		if span < 0 {
			lo += span
		} else {
			hi += span
		}
	}
	return lo, hi + es
}

// sharesMemory is SharesMemory of two non-empty arrays of one allocation. A byte of a
// is la + Σ A_i·x_i + e (la its lowest byte, A_i = |stride_i|·size, 0 <= x_i < n_i,
// 0 <= e < size), and likewise of b; one byte of both is a solution of
// Σ A_i·x_i + e + Σ B_j·(m_j-1-y_j) + (sb-1-e') = lb - la + Σ B_j·(m_j-1) + sb-1, a sum
// of nonnegative multiples of positive coefficients, each multiple bounded, equal to a
// target: searched coefficient by coefficient, largest first.
func sharesMemory(ha, hb *header) bool {
	la, ua := byteBounds(ha)
	lb, ub := byteBounds(hb)
	if la >= ub || lb >= ua {
		return false // disjoint bounds
	}
	// The unknowns, by coefficient: a coefficient's bound is the sum of its unknowns'
	// (the sums of c·x, x in [0,u], and c·y, y in [0,v], are c·z, z in [0,u+v]).
	bound := map[int64]int64{}
	target := lb - la
	terms := func(h *header, flip bool) {
		es := int64(h.dt.Size())
		for i, d := range h.shape {
			st := int64(h.strides[i])
			if d <= 1 || st == 0 {
				continue
			}
			c := max(st, -st) * es
			bound[c] += int64(d - 1)
			if flip {
				target += c * int64(d-1)
			}
		}
		bound[1] += es - 1
		if flip {
			target += es - 1
		}
	}
	terms(ha, false)
	terms(hb, true)
	var cs, us []int64
	for c, u := range bound {
		if u > 0 {
			cs = append(cs, c)
		}
	}
	slices.Sort(cs)
	slices.Reverse(cs)
	for _, c := range cs {
		us = append(us, bound[c])
	}
	// rest[k]: the largest sum of the unknowns from k on; g[k]: their coefficients' gcd.
	rest := make([]int64, len(cs)+1)
	g := make([]int64, len(cs)+1)
	for k := len(cs) - 1; k >= 0; k-- {
		rest[k] = rest[k+1] + cs[k]*us[k]
		g[k] = gcd(g[k+1], cs[k])
	}
	work := 0
	var solve func(k int, t int64) (found, done bool)
	solve = func(k int, t int64) (bool, bool) {
		if t == 0 {
			return true, true
		}
		if k == len(cs) || t < 0 || t > rest[k] || t%g[k] != 0 {
			return false, true
		}
		c := cs[k]
		if k == len(cs)-1 {
			return t%c == 0 && t/c <= us[k], true
		}
		hi := min(us[k], t/c)
		lo := max(0, (t-rest[k+1]+c-1)/c)
		for x := hi; x >= lo; x-- {
			if work++; work > sharesMemoryWork {
				return false, false
			}
			if found, done := solve(k+1, t-c*x); found || !done {
				return found, done
			}
		}
		return false, true
	}
	found, done := solve(0, target)
	return found || !done // unsettled: may share
}

// gcd is the greatest common divisor of a and b, nonnegative (gcd(0, b) = b).
func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return max(a, -a)
}
