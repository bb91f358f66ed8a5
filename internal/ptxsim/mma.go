package ptxsim

import (
	"fmt"
	"math"
	"strconv"
)

// The tensor-core path of sm_80: cp.async (asynchronous copies from global into
// shared memory, in groups), ldmatrix (8x8 matrices of 16-bit elements from shared
// memory into a warp's fragments) and mma.sync (a warp's matrix multiply-accumulate on
// fragments), with the fragment layouts of the PTX ISA ("Matrix fragments for
// mma.m16n8k16", "for mma.m16n8k8"), and cvt.rna.tf32.f32.

// asyncCopy is one cp.async copy: n bytes from global src into shared dst, then
// zeros up to size bytes.
type asyncCopy struct {
	dst, src uint64
	size, n  int
}

// compileCpAsync compiles cp.async.{ca,cg}.shared.global [dst], [src], size{, n}
// (n: the source bytes read, the rest of size zero-filled), cp.async.commit_group,
// cp.async.wait_group N and cp.async.wait_all. A copy takes effect when its thread
// waits for its group: the shared bytes are written then (and checked for hazards
// both when the copy is issued and when it lands), the global ones read then.
func compileCpAsync(f *Func, in *inst) (execFn, error) {
	p := in.parts
	if len(p) < 3 || p[1] != "async" {
		return nil, fmt.Errorf("unsupported %s", in.op)
	}
	switch {
	case len(p) == 3 && p[2] == "commit_group" && len(in.args) == 0:
		return func(t *thread, in *inst) {
			t.groups = append(t.groups, t.async)
			t.async = nil
		}, nil
	case len(p) == 3 && p[2] == "wait_all" && len(in.args) == 0:
		return func(t *thread, in *inst) {
			t.groups = append(t.groups, t.async)
			t.async = nil
			t.landCopies(0)
		}, nil
	case len(p) == 3 && p[2] == "wait_group" && len(in.args) == 1 && in.args[0].kind == oImm:
		n := int(in.args[0].imm)
		return func(t *thread, in *inst) { t.landCopies(n) }, nil
	}
	if len(p) != 5 || (p[2] != "ca" && p[2] != "cg") || p[3] != "shared" || p[4] != "global" ||
		len(in.args) < 3 || len(in.args) > 4 || in.args[0].kind != oMem || in.args[1].kind != oMem || in.args[2].kind != oImm {
		return nil, fmt.Errorf("unsupported %s", in.op)
	}
	size := int(in.args[2].imm)
	if size != 4 && size != 8 && size != 16 || p[2] == "cg" && size != 16 {
		return nil, fmt.Errorf("%s: copy size %d", in.op, size)
	}
	return func(t *thread, in *inst) {
		c := asyncCopy{dst: t.addr(in.args[0]), src: t.addr(in.args[1]), size: size, n: size}
		if len(in.args) == 4 {
			if n := t.val(&in.args[3]); n < uint64(size) {
				c.n = int(n)
			}
		}
		if c.src%uint64(size) != 0 {
			faultf("cp.async of %d bytes from misaligned %#x", size, c.src)
		}
		t.shared(c.dst, size, accWrite) // bounds, alignment and hazards at issue
		t.async = append(t.async, c)
	}, nil
}

// landCopies completes the committed groups of t's copies but the newest n.
func (t *thread) landCopies(n int) {
	k := len(t.groups) - n
	if k <= 0 {
		return
	}
	for _, g := range t.groups[:k] {
		for _, c := range g {
			b := t.buf[:c.size]
			clear(b)
			if c.n > 0 {
				if t.l.mem == nil {
					faultf("global access at %#x without memory", c.src)
				}
				if err := t.l.mem.Load(c.src, b[:c.n]); err != nil {
					faultf("cp.async of %d bytes at %#x: %v", c.n, c.src, err)
				}
			}
			copy(t.shared(c.dst, c.size, accWrite), b)
		}
	}
	t.groups = append(t.groups[:0], t.groups[k:]...)
}

// compileLdmatrix compiles ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16
// d, [a]: lanes 8j to 8j+7 give the addresses of the rows of matrix j (16 bytes each);
// lane l receives in register j elements 2(l%4) and 2(l%4)+1 of row l/4 of matrix j,
// or with .trans those of column l/4 in rows 2(l%4) and 2(l%4)+1 (lower half first).
func compileLdmatrix(f *Func, in *inst) (execFn, error) {
	p := in.parts
	num, trans, ok := 0, false, len(p) >= 7 && p[1] == "sync" && p[2] == "aligned" && p[3] == "m8n8"
	if ok {
		num, _ = strconv.Atoi(p[4][1:])
		rest := p[5:]
		if rest[0] == "trans" {
			trans, rest = true, rest[1:]
		}
		ok = p[4][0] == 'x' && (num == 1 || num == 2 || num == 4) && len(rest) == 2 && rest[0] == "shared" && rest[1] == "b16"
	}
	if !ok || len(in.args) != 2 || in.args[1].kind != oMem {
		return nil, fmt.Errorf("unsupported %s", in.op)
	}
	regs, err := regsOf(in.args[0], num)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", in.op, err)
	}
	if num == 1 {
		regs = []int{int(in.args[0].reg)}
	}
	a := in.args[1]
	return arriveFull(in, func(t *thread) uint64 { return t.addr(a) }, func(ts []*thread) {
		var rows [4][8][8]uint16 // matrix, row, element
		for j := range num {
			for r := range 8 {
				u := ts[8*j+r]
				b := u.shared(u.arr.a, 16, accRead)
				for e := range 8 {
					rows[j][r][e] = uint16(b[2*e]) | uint16(b[2*e+1])<<8
				}
			}
		}
		for l, t := range ts {
			for j := range num {
				var lo, hi uint16
				if trans {
					lo, hi = rows[j][2*(l%4)][l/4], rows[j][2*(l%4)+1][l/4]
				} else {
					lo, hi = rows[j][l/4][2*(l%4)], rows[j][l/4][2*(l%4)+1]
				}
				t.setReg(regs[j], uint64(lo)|uint64(hi)<<16)
			}
		}
	})
}

// arriveFull returns the exec of a .sync.aligned instruction of the whole warp (all
// 32 lanes, which the block must have), recording the value a gives.
func arriveFull(in *inst, a func(t *thread) uint64, resolve func(ts []*thread)) (execFn, error) {
	in.coll = &collective{warp: true, resolve: func(ts []*thread) {
		if len(ts) != 32 {
			faultf("%q needs a full warp, got %d lanes", in.text, len(ts))
		}
		resolve(ts)
	}}
	return func(t *thread, in *inst) {
		if t.blk == nil {
			faultf("%s outside a block (Run runs threads alone)", in.op)
		}
		if len(t.blk.threads) < (t.lin/32+1)*32 {
			faultf("thread %d at %q: a partial warp", t.lin, in.text)
		}
		t.arr = arrival{in: in, mask: 0xffffffff, a: a(t)}
		t.wait = atWarp
	}, nil
}

// compileMma compiles mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32
// and mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {d0..d3}, {a..}, {b..},
// {c0..c3}: D = A*B + C for a 16xK row-major A, a Kx8 column-major B and 16x8 C and D
// in float32, in the fragments of the PTX ISA (lane l: group g = l/4, t = l%4). The
// products are exact and summed in float64, then rounded once to float32 (the
// hardware's order and truncation of the sum are its own: tests compare with a
// tolerance); tf32 operands lose the low 13 bits of their float32 encoding.
func compileMma(f *Func, in *inst) (execFn, error) {
	p := in.parts
	if len(p) != 10 || p[1] != "sync" || p[2] != "aligned" || p[4] != "row" || p[5] != "col" ||
		p[6] != "f32" || p[9] != "f32" || p[7] != p[8] {
		return nil, fmt.Errorf("unsupported %s", in.op)
	}
	var k int
	var elem func(w uint32, hi bool) float64
	switch {
	case p[3] == "m16n8k16" && (p[7] == "f16" || p[7] == "bf16"):
		k = 16
		ty, _ := parseType(p[7])
		elem = func(w uint32, hi bool) float64 {
			if hi {
				w >>= 16
			}
			return fval(uint64(w&0xffff), ty)
		}
	case p[3] == "m16n8k8" && p[7] == "tf32":
		k = 8
		elem = func(w uint32, _ bool) float64 { return float64(math.Float32frombits(w &^ 0x1fff)) }
	default:
		return nil, fmt.Errorf("unsupported %s", in.op)
	}
	if len(in.args) != 4 {
		return nil, fmt.Errorf("%s takes 4 operands", in.op)
	}
	var regs [4][]int
	for i, n := range []int{4, 4, 2, 4} { // D, A, B, C
		r, err := regsOf(in.args[i], n)
		if err != nil || r == nil {
			return nil, fmt.Errorf("%s: operand %d: a vector of %d registers", in.op, i+1, n)
		}
		regs[i] = r
	}
	// a(r, c) and b(c, n): the lane and register holding an element, and which half.
	aAt := func(ts []*thread, r, c int) float64 {
		if k == 8 { // tf32: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4)
			return elem(uint32(ts[(r%8)*4+c%4].fr.r[regs[1][r/8+2*(c/4)]]), false)
		}
		// f16/bf16: a0,a1 (g, 2t..2t+1), a2,a3 (g+8, ...), a4..a7 the same at k+8
		return elem(uint32(ts[(r%8)*4+(c%8)/2].fr.r[regs[1][r/8+2*(c/8)]]), c%2 == 1)
	}
	bAt := func(ts []*thread, c, n int) float64 {
		if k == 8 { // b0 (t, g), b1 (t+4, g)
			return elem(uint32(ts[n*4+c%4].fr.r[regs[2][c/4]]), false)
		}
		return elem(uint32(ts[n*4+(c%8)/2].fr.r[regs[2][c/8]]), c%2 == 1)
	}
	return arriveFull(in, func(*thread) uint64 { return 0 }, func(ts []*thread) {
		var d [16][8]float64
		for r := range 16 {
			for n := range 8 {
				// c0,c1 (g, 2t..2t+1), c2,c3 (g+8, ...)
				s := float64(math.Float32frombits(uint32(ts[(r%8)*4+n/2].fr.r[regs[3][2*(r/8)+n%2]])))
				for c := range k {
					s += aAt(ts, r, c) * bAt(ts, c, n)
				}
				d[r][n] = s
			}
		}
		for l, t := range ts {
			g, q := l/4, l%4
			for i, x := range []float64{d[g][2*q], d[g][2*q+1], d[g+8][2*q], d[g+8][2*q+1]} {
				t.setReg(regs[0][i], canon32(float32(x), false))
			}
		}
	})
}
