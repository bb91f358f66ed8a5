package nccl

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/dtype"
)

// The test harness, shared by the CPU and CUDA tests: it runs one call on every rank,
// with inputs made from a seed (so that a process can compute every rank's inputs),
// and compares every rank's output with a reference computed here, element by element
// in rank order with the rounding rules of NCCL.

// spec is one test case.
type spec struct {
	kind    opKind
	t       dtype.DType
	count   int64
	red     Op
	root    int // root, or the shift of a Send/Recv ring
	inPlace bool
	seed    uint64
}

func (s spec) String() string {
	name := fmt.Sprintf("%s/%v/%d", s.kind, s.t, s.count)
	switch s.kind {
	case opAllReduce, opReduceScatter:
		name += "/" + s.red.String()
	case opReduce:
		name += fmt.Sprintf("/%v/root%d", s.red, s.root)
	case opBroadcast:
		name += fmt.Sprintf("/root%d", s.root)
	}
	if s.inPlace {
		name += "/inplace"
	}
	return name
}

// sendElems and recvElems are the elements of rank's send and receive buffers.
func (s spec) sendElems(world int) int64 {
	if s.kind == opReduceScatter {
		return s.count * int64(world)
	}
	return s.count
}

func (s spec) recvElems(world int) int64 {
	if s.kind == opAllGather {
		return s.count * int64(world)
	}
	return s.count
}

// input returns rank's input: random integers of every bit pattern (wrap-around is
// part of the test), floats in [-8, 8) rounded to the type (products of four stay in
// range).
func (s spec) input(rank, world int) []byte {
	n := s.sendElems(world)
	es := int64(s.t.Size())
	out := make([]byte, n*es)
	r := rand.New(rand.NewPCG(s.seed, uint64(rank)+1))
	for i := int64(0); i < n; i++ {
		b := out[i*es : (i+1)*es]
		f := r.Float64()*16 - 8
		switch s.t {
		case dtype.Float16:
			binary.LittleEndian.PutUint16(b, dtype.Float16FromFloat64(f))
		case dtype.BFloat16:
			binary.LittleEndian.PutUint16(b, dtype.BFloat16FromFloat64(f))
		case dtype.Float32:
			binary.LittleEndian.PutUint32(b, math.Float32bits(float32(f)))
		case dtype.Float64:
			binary.LittleEndian.PutUint64(b, math.Float64bits(f))
		default:
			v := r.Uint64()
			for j := range b {
				b[j] = byte(v >> (8 * j))
			}
		}
	}
	return out
}

// scalar reads and writes elements of a type as float64 (floats) or as wrapped bits
// (integers), independently of the package's reductions.
type scalar struct{ t dtype.DType }

func (s scalar) bits() uint { return uint(8 * s.t.Size()) }

func (s scalar) getU(b []byte, i int64) uint64 {
	switch s.t.Size() {
	case 1:
		return uint64(b[i])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b[2*i:]))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return binary.LittleEndian.Uint64(b[8*i:])
}

func (s scalar) putU(b []byte, i int64, v uint64) {
	switch s.t.Size() {
	case 1:
		b[i] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	default:
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
}

func (s scalar) mask(v uint64) uint64 {
	if s.bits() == 64 {
		return v
	}
	return v & (1<<s.bits() - 1)
}

// signed interprets masked bits as a signed integer.
func (s scalar) signed(v uint64) int64 {
	sh := 64 - s.bits()
	return int64(v<<sh) >> sh
}

func (s scalar) getF(b []byte, i int64) float64 {
	u := s.getU(b, i)
	switch s.t {
	case dtype.Float16:
		return dtype.Float16ToFloat64(uint16(u))
	case dtype.BFloat16:
		return dtype.BFloat16ToFloat64(uint16(u))
	case dtype.Float32:
		return float64(math.Float32frombits(uint32(u)))
	}
	return math.Float64frombits(u)
}

// round rounds x to the type (an exact operation on two values of a narrower type done
// in float64 and rounded once is correctly rounded).
func (s scalar) round(x float64) float64 {
	switch s.t {
	case dtype.Float16:
		return dtype.Float16ToFloat64(dtype.Float16FromFloat64(x))
	case dtype.BFloat16:
		return dtype.BFloat16ToFloat64(dtype.BFloat16FromFloat64(x))
	case dtype.Float32:
		return float64(float32(x))
	}
	return x
}

func (s scalar) putF(b []byte, i int64, x float64) {
	var u uint64
	switch s.t {
	case dtype.Float16:
		u = uint64(dtype.Float16FromFloat64(x))
	case dtype.BFloat16:
		u = uint64(dtype.BFloat16FromFloat64(x))
	case dtype.Float32:
		u = uint64(math.Float32bits(float32(x)))
	default:
		u = math.Float64bits(x)
	}
	s.putU(b, i, u)
}

// refReduce reduces element i of every input (starting at element off) into out[j].
func refReduce(t dtype.DType, red Op, ins [][]byte, off, n int64, out []byte) {
	s := scalar{t}
	world := len(ins)
	if t.IsFloat() {
		scale := s.round(1 / float64(world))
		for i := int64(0); i < n; i++ {
			var acc float64
			for r, in := range ins {
				x := s.getF(in, off+i)
				if red == Avg {
					x = s.round(x * scale)
				}
				switch {
				case r == 0:
					acc = x
				case red == Sum || red == Avg:
					acc = s.round(acc + x)
				case red == Prod:
					acc = s.round(acc * x)
				case red == Min:
					acc = math.Min(acc, x)
				case red == Max:
					acc = math.Max(acc, x)
				}
			}
			s.putF(out, i, acc)
		}
		return
	}
	sgn := t.IsSigned()
	for i := int64(0); i < n; i++ {
		var acc uint64
		for r, in := range ins {
			x := s.getU(in, off+i)
			switch {
			case r == 0:
				acc = x
			case red == Sum || red == Avg:
				acc = s.mask(acc + x)
			case red == Prod:
				acc = s.mask(acc * x)
			case red == Min, red == Max:
				less := x < acc
				if sgn {
					less = s.signed(x) < s.signed(acc)
				}
				if less == (red == Min) && x != acc {
					acc = x
				}
			}
		}
		if red == Avg {
			if sgn {
				acc = s.mask(uint64(s.signed(acc) / int64(world)))
			} else {
				acc /= uint64(world)
			}
		}
		s.putU(out, i, acc)
	}
}

// expected returns rank's expected receive buffer contents, or nil where the call
// writes nothing on rank.
func (s spec) expected(rank int, ins [][]byte) []byte {
	world := len(ins)
	es := int64(s.t.Size())
	out := make([]byte, s.recvElems(world)*es)
	switch s.kind {
	case opAllReduce:
		refReduce(s.t, s.red, ins, 0, s.count, out)
	case opReduce:
		if rank != s.root {
			return nil
		}
		refReduce(s.t, s.red, ins, 0, s.count, out)
	case opReduceScatter:
		refReduce(s.t, s.red, ins, int64(rank)*s.count, s.count, out)
	case opBroadcast:
		copy(out, ins[s.root])
	case opAllGather:
		for r, in := range ins {
			copy(out[int64(r)*s.count*es:], in)
		}
	case opSend: // a ring: rank receives from rank-shift
		copy(out, ins[(rank-s.root+world)%world])
	}
	return out
}

// rig is a communicator's ranks with a stream each.
type rig struct {
	comms   []*Comm
	streams []*gpu.Stream
}

func newRig(t testing.TB, comms []*Comm) *rig {
	t.Helper()
	r := &rig{comms: comms}
	for _, c := range comms {
		s, err := c.Device().NewStream()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		r.streams = append(r.streams, s)
	}
	return r
}

const guard = 64 // bytes after each receive buffer that must stay untouched

// bufs are one rank's buffers for a case.
type bufs struct {
	send, recv *gpu.Buffer
	alloc      []*gpu.Buffer // to free
	recvAlloc  *gpu.Buffer   // the allocation holding recv (with the guard)
	recvOff    int64
	sendHost   []byte // send's expected contents afterwards (out of place)
}

func upload(t testing.TB, d *gpu.Device, b []byte) *gpu.Buffer {
	t.Helper()
	buf, err := d.Alloc(int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := buf.CopyFromHost(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	return buf
}

func view(t testing.TB, b *gpu.Buffer, off, n int64) *gpu.Buffer {
	t.Helper()
	v, err := b.Slice(off, n)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// prepare makes rank's buffers: out of place a send buffer and a receive buffer
// filled with 0xCD and followed by a guard; in place one buffer laid out as NCCL's
// in-place rules say.
func (s spec) prepare(t testing.TB, d *gpu.Device, rank, world int, in []byte) *bufs {
	es := int64(s.t.Size())
	rb := s.recvElems(world) * es
	b := &bufs{}
	if !s.inPlace || s.kind == opSend {
		b.send = upload(t, d, in)
		fill := bytes.Repeat([]byte{0xCD}, int(rb+guard))
		b.recvAlloc = upload(t, d, fill)
		b.recv = view(t, b.recvAlloc, 0, rb)
		b.alloc = []*gpu.Buffer{b.send, b.recvAlloc}
		b.sendHost = in
		return b
	}
	switch s.kind {
	case opAllGather:
		x := bytes.Repeat([]byte{0xCD}, int(rb+guard))
		copy(x[int64(rank)*int64(len(in)):], in)
		b.recvAlloc = upload(t, d, x)
		b.recv = view(t, b.recvAlloc, 0, rb)
		b.send = view(t, b.recvAlloc, int64(rank)*int64(len(in)), int64(len(in)))
	case opReduceScatter:
		x := append(append([]byte(nil), in...), bytes.Repeat([]byte{0xCD}, guard)...)
		b.recvAlloc = upload(t, d, x)
		b.send = view(t, b.recvAlloc, 0, int64(len(in)))
		b.recvOff = int64(rank) * rb
		b.recv = view(t, b.recvAlloc, b.recvOff, rb)
	default: // AllReduce, Broadcast, Reduce: send == recv
		x := append(append([]byte(nil), in...), bytes.Repeat([]byte{0xCD}, guard)...)
		b.recvAlloc = upload(t, d, x)
		b.recv = view(t, b.recvAlloc, 0, rb)
		b.send = b.recv
	}
	b.alloc = []*gpu.Buffer{b.recvAlloc}
	return b
}

// call makes the case's call on rank.
func (s spec) call(c *Comm, st *gpu.Stream, b *bufs) error {
	world := c.World()
	switch s.kind {
	case opAllReduce:
		return c.AllReduce(st, b.send, b.recv, s.count, s.t, s.red)
	case opBroadcast:
		return c.Broadcast(st, b.send, b.recv, s.count, s.t, s.root)
	case opReduce:
		return c.Reduce(st, b.send, b.recv, s.count, s.t, s.red, s.root)
	case opAllGather:
		return c.AllGather(st, b.send, b.recv, s.count, s.t)
	case opReduceScatter:
		return c.ReduceScatter(st, b.send, b.recv, s.count, s.t, s.red)
	case opSend: // a ring: send to rank+shift, receive from rank-shift
		r := c.Rank()
		if err := c.Send(st, b.send, s.count, s.t, (r+s.root)%world); err != nil {
			return err
		}
		return c.Recv(st, b.recv, s.count, s.t, (r-s.root+world)%world)
	}
	return nil
}

// check reads rank's receive allocation back (through the default stream: the tracking
// orders it after the collective) and compares it with the expected contents.
func (s spec) check(t testing.TB, rank int, b *bufs, want []byte, exact bool) {
	t.Helper()
	ctx := context.Background()
	got := make([]byte, b.recvAlloc.Size())
	if err := b.recvAlloc.CopyToHost(ctx, got); err != nil {
		t.Fatalf("rank %d: reading the result: %v", rank, err)
	}
	rb := b.recv.Size()
	res := got[b.recvOff : b.recvOff+rb]
	if want == nil { // nothing written on this rank
		if s.inPlace {
			return
		}
		want = bytes.Repeat([]byte{0xCD}, int(rb))
	}
	if !equalElems(s.t, res, want, exact) {
		t.Fatalf("rank %d: %s", rank, firstDiff(s.t, res, want))
	}
	if tail := got[b.recvOff+rb:]; s.kind != opReduceScatter || !s.inPlace {
		for i, v := range tail[:min(len(tail), guard)] {
			if v != 0xCD {
				t.Fatalf("rank %d: the guard after the receive buffer was overwritten at byte %d (%#x)", rank, i, v)
			}
		}
	}
	if b.sendHost != nil && b.send.Size() > 0 {
		sh := make([]byte, b.send.Size())
		if err := b.send.CopyToHost(ctx, sh); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(sh, b.sendHost) {
			t.Fatalf("rank %d: the send buffer was modified: %s", rank, firstDiff(s.t, sh, b.sendHost))
		}
	}
}

// equalElems compares two arrays of t: exactly, or for floats within a few units in
// the last place (NCCL's order of reduction over more than two ranks is its own).
func equalElems(t dtype.DType, got, want []byte, exact bool) bool {
	if bytes.Equal(got, want) {
		return true
	}
	if exact || !t.IsFloat() || len(got) != len(want) {
		return false
	}
	s := scalar{t}
	eps := map[dtype.DType]float64{dtype.Float16: 0x1p-10, dtype.BFloat16: 0x1p-7, dtype.Float32: 0x1p-23, dtype.Float64: 0x1p-52}[t]
	for i := range int64(len(got)) / int64(t.Size()) {
		g, w := s.getF(got, i), s.getF(want, i)
		if math.Abs(g-w) > 4*eps*max(math.Abs(w), 1) {
			return false
		}
	}
	return true
}

func firstDiff(t dtype.DType, got, want []byte) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d bytes, want %d", len(got), len(want))
	}
	es := t.Size()
	s := scalar{t}
	for i := 0; i < len(got); i += es {
		if !bytes.Equal(got[i:i+es], want[i:i+es]) {
			n := 0
			for j := i; j < len(got); j += es {
				if !bytes.Equal(got[j:j+es], want[j:j+es]) {
					n++
				}
			}
			e := int64(i / es)
			if t.IsFloat() {
				return fmt.Sprintf("element %d = %v, want %v (%d of %d elements differ)", e, s.getF(got, e), s.getF(want, e), n, len(got)/es)
			}
			return fmt.Sprintf("element %d = %#x, want %#x (%d of %d elements differ)", e, s.getU(got, e), s.getU(want, e), n, len(got)/es)
		}
	}
	return "equal"
}

// runSpec runs one case on every rank of r, launched from one goroutine in one Group.
func (r *rig) runSpec(t testing.TB, s spec, exact bool) {
	t.Helper()
	world := len(r.comms)
	ins := make([][]byte, world)
	all := make([]*bufs, world)
	for i, c := range r.comms {
		ins[i] = s.input(i, world)
		all[i] = s.prepare(t, c.Device(), i, world, ins[i])
	}
	defer func() {
		for _, b := range all {
			for _, a := range b.alloc {
				a.Free()
			}
		}
	}()
	err := Group(r.comms, func() error {
		for i, c := range r.comms {
			if err := s.call(c, r.streams[i], all[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v: %v", s, err)
	}
	for i := range r.comms {
		s.check(t, i, all[i], s.expected(i, ins), exact)
	}
}

// specs lists the cases for every collective and element type: every operator at the
// given small sizes plus in-place variants at the last of them; at each large size
// (in bytes of the largest buffer of the call), Sum and the collectives without
// operator.
func specs(world int, small []int64, largeBytes []int64) []spec {
	var out []spec
	seed := uint64(1)
	add := func(s spec) {
		s.seed = seed
		seed++
		out = append(out, s)
	}
	for _, t := range DTypes {
		for _, n := range small {
			for _, red := range []Op{Sum, Prod, Min, Max, Avg} {
				add(spec{kind: opAllReduce, t: t, count: n, red: red})
				add(spec{kind: opReduceScatter, t: t, count: n, red: red})
				add(spec{kind: opReduce, t: t, count: n, red: red, root: (int(n) + 1) % world})
			}
			add(spec{kind: opBroadcast, t: t, count: n, root: world - 1})
			add(spec{kind: opAllGather, t: t, count: n})
			add(spec{kind: opSend, t: t, count: n, root: 1})
		}
		odd := small[len(small)-1]
		for _, k := range []opKind{opAllReduce, opBroadcast, opReduce, opAllGather, opReduceScatter} {
			add(spec{kind: k, t: t, count: odd, red: Sum, root: 1, inPlace: true})
		}
		for _, nb := range largeBytes {
			n := nb/int64(t.Size()) | 1 // odd
			per := n/int64(world) | 1
			add(spec{kind: opAllReduce, t: t, count: n, red: Sum})
			add(spec{kind: opReduce, t: t, count: n, red: Sum, root: world - 1})
			add(spec{kind: opReduceScatter, t: t, count: per, red: Sum})
			add(spec{kind: opBroadcast, t: t, count: n, root: world / 2})
			add(spec{kind: opAllGather, t: t, count: per})
			add(spec{kind: opSend, t: t, count: n, root: 1})
		}
	}
	return out
}
