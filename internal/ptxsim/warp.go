package ptxsim

import (
	"fmt"
	"math/bits"
)

// Warp-synchronous and block-wide instructions. A thread that reaches one records its
// operands (arrival) and waits; the block's scheduler calls the instruction's resolve
// once every participant waits at it (resolveWarps, resolveBarriers), with the
// participants in lane (thread) order, and resolve writes each one's results.

// arrival is what a thread brings to a collective instruction.
type arrival struct {
	in      *inst
	mask    uint32 // warp: the membermask
	a, b, c uint64
	p       bool
	bar     int // barrier: its id and thread count (0: all)
	cnt     int
}

// collective is a warp-synchronous (warp) or block-wide instruction.
type collective struct {
	warp    bool
	resolve func(ts []*thread)
}

// arriveWarp returns the exec of a warp-synchronous instruction whose membermask is
// operand mi, recording operands a, b, c (indexes, -1 for none) and predicate p.
func arriveWarp(in *inst, mi, a, b, c, p int, resolve func(ts []*thread)) (execFn, error) {
	if mi >= len(in.args) {
		return nil, fmt.Errorf("%s: missing operands", in.op)
	}
	in.coll = &collective{warp: true, resolve: resolve}
	get := func(t *thread, i int) uint64 {
		if i < 0 {
			return 0
		}
		return t.val(&in.args[i])
	}
	return func(t *thread, in *inst) {
		if t.blk == nil {
			faultf("%s outside a block (Run runs threads alone)", in.op)
		}
		t.arr = arrival{in: in, mask: uint32(t.val(&in.args[mi])), a: get(t, a), b: get(t, b), c: get(t, c), p: get(t, p)&1 != 0}
		t.wait = atWarp
	}, nil
}

// resolveWarps runs the warp-synchronous instructions whose lanes have all arrived.
func (b *block) resolveWarps() bool {
	done := false
	group := b.group
	for w := 0; w*32 < len(b.threads); w++ {
		lanes := b.threads[w*32 : min(len(b.threads), w*32+32)]
		var checked uint32 // lanes of groups found incomplete
		for i, t := range lanes {
			if t.wait != atWarp || checked>>i&1 != 0 {
				continue
			}
			m, in := t.arr.mask, t.arr.in
			if m>>i&1 == 0 {
				faultf("thread %d at %q: its lane is not in membermask %#x", t.lin, in.text, m)
			}
			group = group[:0]
			for j := range 32 {
				if m>>j&1 == 0 {
					continue
				}
				if j >= len(lanes) {
					faultf("thread %d at %q: membermask %#x names lanes past the block's %d threads", t.lin, in.text, m, len(b.threads))
				}
				if u := lanes[j]; u.done {
					faultf("thread %d at %q: lane %d of membermask %#x has exited", t.lin, in.text, j, m)
				} else if u.wait == atWarp && u.arr.in == in && u.arr.mask == m {
					group = append(group, u)
				}
			}
			if len(group) < bits.OnesCount32(m) {
				for _, u := range group {
					checked |= 1 << (u.lin % 32)
				}
				continue
			}
			in.coll.resolve(group)
			for _, u := range group {
				u.wait = running
			}
			done = true
		}
	}
	b.group = group
	return done
}

// resolveBarriers opens a barrier every participant has reached.
func (b *block) resolveBarriers() bool {
	live := 0
	var n [16]int
	var first [16]*thread
	for _, t := range b.threads {
		switch {
		case t.done:
		case t.wait == atBar:
			if n[t.arr.bar] == 0 {
				first[t.arr.bar] = t
			}
			n[t.arr.bar]++
			live++
		default:
			live++
		}
	}
	for id, k := range n {
		if k == 0 {
			continue
		}
		t := first[id]
		// A barrier of the whole block waits for its live threads: exited ones count
		// as arrived (PTX's exit releases the barriers it holds up).
		switch cnt := t.arr.cnt; {
		case cnt == 0 && k < live, k < cnt:
			continue
		case cnt != 0 && k > cnt:
			faultf("thread %d at %q: %d threads at a barrier for %d", t.lin, t.arr.in.text, k, cnt)
		}
		group := b.group[:0]
		for _, u := range b.threads {
			if !u.done && u.wait == atBar && u.arr.bar == id {
				group = append(group, u)
			}
		}
		b.group = group
		if t.arr.in.coll.resolve != nil {
			t.arr.in.coll.resolve(group)
		}
		for _, u := range group {
			u.wait = running
			u.epoch++
		}
		return true
	}
	return false
}

// compileBar compiles bar.sync, barrier.sync, bar.warp.sync and bar.red.
func compileBar(f *Func, in *inst) (execFn, error) {
	p := in.parts
	if has(p, "warp") { // bar.warp.sync membermask
		return arriveWarp(in, 0, -1, -1, -1, -1, func(ts []*thread) {
			for _, t := range ts {
				t.wepoch++
			}
		})
	}
	red := has(p, "red")
	if !red && !has(p, "sync") || has(p, "arrive") {
		return nil, fmt.Errorf("unsupported barrier %s", in.op)
	}
	args := in.args
	var d opnd
	if red { // bar.red.popc.u32 d, a{, b}, {!}c; bar.red.and.pred / .or.pred
		if len(args) < 3 {
			return nil, fmt.Errorf("%s: missing operands", in.op)
		}
		d, args = args[0], args[1:]
	}
	if len(args) == 0 || args[0].kind != oImm || args[0].imm > 15 {
		return nil, fmt.Errorf("%s: the barrier must be a constant from 0 to 15", in.op)
	}
	id := int(args[0].imm)
	cnt, pred := -1, -1
	switch {
	case red && len(args) == 3:
		cnt, pred = 1, 2
	case red:
		pred = 1
	case len(args) == 2:
		cnt = 1
	}
	coll := &collective{}
	if red {
		op := p[2]
		coll.resolve = func(ts []*thread) {
			n, all := 0, true
			for _, t := range ts {
				if t.arr.p {
					n++
				} else {
					all = false
				}
			}
			r := uint64(n)
			switch op {
			case "and":
				r = b2u(all)
			case "or":
				r = b2u(n > 0)
			}
			for _, t := range ts {
				t.set(&d, r)
			}
		}
	}
	in.coll = coll
	return func(t *thread, in *inst) {
		if t.blk == nil {
			faultf("%s outside a block (Run runs threads alone)", in.op)
		}
		t.arr = arrival{in: in, bar: id}
		if cnt >= 0 {
			t.arr.cnt = int(t.val(&in.args[len(in.args)-len(args)+cnt]))
		}
		if pred >= 0 {
			t.arr.p = t.val(&in.args[len(in.args)-len(args)+pred])&1 != 0
		}
		t.wait = atBar
	}, nil
}

// compileShfl compiles shfl.sync.{up,down,bfly,idx}.b32 d[|p], a, b, c, membermask
// (PTX ISA: the source lane j from b and the clamp and segment mask in c; out of range,
// a lane reads its own a and p is false).
func compileShfl(f *Func, in *inst) (execFn, error) {
	p := in.parts
	if len(p) != 4 || p[1] != "sync" || p[3] != "b32" || len(in.args) != 5 {
		return nil, fmt.Errorf("unsupported shuffle %s", in.op)
	}
	mode := p[2]
	switch mode {
	case "up", "down", "bfly", "idx":
	default:
		return nil, fmt.Errorf("unsupported shuffle %s", in.op)
	}
	d := in.args[0]
	return arriveWarp(in, 4, 1, 2, 3, -1, func(ts []*thread) {
		var src [32]*thread
		for _, t := range ts {
			src[t.lin%32] = t
		}
		for _, t := range ts {
			lane := t.lin % 32
			bval, cval, seg := int(t.arr.b&31), int(t.arr.c&31), int(t.arr.c>>8&31)
			maxLane := lane&seg | cval&^seg
			minLane := lane & seg
			var j int
			var ok bool
			switch mode {
			case "up":
				j = lane - bval
				ok = j >= maxLane
			case "down":
				j = lane + bval
				ok = j <= maxLane
			case "bfly":
				j = lane ^ bval
				ok = j <= maxLane
			case "idx":
				j = minLane | bval&^seg
				ok = j <= maxLane
			}
			if !ok {
				j = lane
			}
			if src[j] == nil {
				faultf("thread %d at %q: reads lane %d, outside membermask %#x", t.lin, in.text, j, t.arr.mask)
			}
			v := mask(src[j].arr.a, 32)
			if d.kind == oVec {
				t.setReg(d.vec[0], v)
				t.setReg(d.vec[1], b2u(ok))
			} else {
				t.set(&d, v)
			}
		}
	})
}

// compileVote compiles vote.sync.{all,any,uni}.pred and vote.sync.ballot.b32.
func compileVote(f *Func, in *inst) (execFn, error) {
	p := in.parts
	if len(p) != 4 || p[1] != "sync" || len(in.args) != 3 {
		return nil, fmt.Errorf("unsupported vote %s", in.op)
	}
	mode := p[2]
	if mode != "all" && mode != "any" && mode != "uni" && mode != "ballot" {
		return nil, fmt.Errorf("unsupported vote %s", in.op)
	}
	d := in.args[0]
	return arriveWarp(in, 2, -1, -1, -1, 1, func(ts []*thread) {
		var ballot uint64
		for _, t := range ts {
			ballot |= b2u(t.arr.p) << (t.lin % 32)
		}
		r := ballot
		switch mode {
		case "all":
			r = b2u(ballot == uint64(ts[0].arr.mask))
		case "any":
			r = b2u(ballot != 0)
		case "uni":
			r = b2u(ballot == 0 || ballot == uint64(ts[0].arr.mask))
		}
		for _, t := range ts {
			t.set(&d, r)
		}
	})
}

// compileMatch compiles match.{any,all}.sync.{b32,b64} d[|p], a, membermask.
func compileMatch(f *Func, in *inst) (execFn, error) {
	p := in.parts
	if len(p) != 4 || p[2] != "sync" || (p[1] != "any" && p[1] != "all") || len(in.args) != 3 {
		return nil, fmt.Errorf("unsupported match %s", in.op)
	}
	all, d := p[1] == "all", in.args[0]
	return arriveWarp(in, 2, 1, -1, -1, -1, func(ts []*thread) {
		for _, t := range ts {
			var same uint64
			for _, u := range ts {
				if u.arr.a == t.arr.a {
					same |= 1 << (u.lin % 32)
				}
			}
			r, ok := same, same == uint64(t.arr.mask)
			if all && !ok {
				r = 0
			}
			if d.kind == oVec {
				t.setReg(d.vec[0], r)
				t.setReg(d.vec[1], b2u(ok))
			} else {
				t.set(&d, r)
			}
		}
	})
}

// compileRedux compiles redux.sync.{add,min,max}.{u32,s32} and .{and,or,xor}.b32
// d, a, membermask.
func compileRedux(f *Func, in *inst) (execFn, error) {
	p := in.parts
	if len(p) != 4 || p[1] != "sync" || len(in.args) != 3 {
		return nil, fmt.Errorf("unsupported redux %s", in.op)
	}
	ty, err := lastType(p)
	if err != nil || ty.bits != 32 {
		return nil, fmt.Errorf("unsupported redux %s", in.op)
	}
	comb, err := rmwOp(p[2], ty)
	if err != nil || p[2] == "exch" || p[2] == "cas" || p[2] == "inc" || p[2] == "dec" {
		return nil, fmt.Errorf("unsupported redux %s", in.op)
	}
	d := in.args[0]
	return arriveWarp(in, 2, 1, -1, -1, -1, func(ts []*thread) {
		r := mask(ts[0].arr.a, 32)
		for _, t := range ts[1:] {
			r = comb(r, mask(t.arr.a, 32), 0)
		}
		for _, t := range ts {
			t.set(&d, r)
		}
	})
}

// compileActivemask compiles activemask.b32 d: the warp's lanes that have not exited.
func compileActivemask(f *Func, in *inst) (execFn, error) {
	if in.op != "activemask.b32" || len(in.args) != 1 {
		return nil, fmt.Errorf("unsupported %s", in.op)
	}
	return func(t *thread, in *inst) {
		if t.blk == nil {
			t.set(&in.args[0], 1<<(t.lin%32))
			return
		}
		w := t.lin / 32 * 32
		var m uint64
		for i, u := range t.blk.threads[w:min(w+32, len(t.blk.threads))] {
			if !u.done {
				m |= 1 << i
			}
		}
		t.set(&in.args[0], m)
	}, nil
}
