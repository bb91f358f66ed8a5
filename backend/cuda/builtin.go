package cuda

import (
	"fmt"

	"github.com/go-gpu/gpu/backend"
)

// builtinPTX holds the kernels listed in backend.Builtins. The target is sm_50 so that
// the driver compiles it for any device since Maxwell. %globaltimer counts nanoseconds.
// The spins add up the steps between two reads of it, each counted as at most 1 ms (a
// step backwards is a huge unsigned step, so it counts 1 ms too): a jump of the timer
// either way (a resynchronization) moves a spin's end by at most 1 ms instead of
// ending it at once, and a spin preempted for long spins on afterwards. Conformance's
// TimingEvents saw a 100 ms spin's event complete right after its launch twice: once
// when the spin compared the time elapsed unsigned (a step backwards), and once on an
// H100 (driver 580.159) when it compared it signed (a step forwards, presumably).
// spin_copy_u32 writes its stamps (start, end) from block 0 only: use one block when
// they matter.
const builtinPTX = `
.version 7.0
.target sm_50
.address_size 64

.visible .entry empty()
{
	ret;
}

.visible .entry trap()
{
	trap;
	ret;
}

.visible .entry spin(.param .u64 ns)
{
	.reg .u64 %t0, %t, %d, %ns, %el;
	.reg .pred %p;
	ld.param.u64 %ns, [ns];
	mov.u64 %el, 0;
	mov.u64 %t0, %globaltimer;
SPIN:
	mov.u64 %t, %globaltimer;
	sub.u64 %d, %t, %t0;
	mov.u64 %t0, %t;
	min.u64 %d, %d, 1000000;
	add.u64 %el, %el, %d;
	setp.lt.u64 %p, %el, %ns;
	@%p bra SPIN;
	ret;
}

.visible .entry fill_u32(.param .u64 ptr, .param .u32 val, .param .u64 n)
{
	.reg .u64 %base, %n, %i, %stride, %a, %t;
	.reg .u32 %v, %bid, %bdim, %th, %gdim;
	.reg .pred %p;
	ld.param.u64 %base, [ptr];
	cvta.to.global.u64 %base, %base;
	ld.param.u32 %v, [val];
	ld.param.u64 %n, [n];
	mov.u32 %bid, %ctaid.x;
	mov.u32 %bdim, %ntid.x;
	mov.u32 %th, %tid.x;
	mov.u32 %gdim, %nctaid.x;
	mul.wide.u32 %i, %bid, %bdim;
	cvt.u64.u32 %t, %th;
	add.u64 %i, %i, %t;
	mul.wide.u32 %stride, %gdim, %bdim;
LOOP:
	setp.ge.u64 %p, %i, %n;
	@%p bra DONE;
	shl.b64 %a, %i, 2;
	add.u64 %a, %base, %a;
	st.global.u32 [%a], %v;
	add.u64 %i, %i, %stride;
	bra LOOP;
DONE:
	ret;
}

.visible .entry add_u32(.param .u64 dst, .param .u64 src, .param .u32 val, .param .u64 n)
{
	.reg .u64 %d, %s, %n, %i, %stride, %a, %b, %t;
	.reg .u32 %v, %x, %bid, %bdim, %th, %gdim;
	.reg .pred %p;
	ld.param.u64 %d, [dst];
	cvta.to.global.u64 %d, %d;
	ld.param.u64 %s, [src];
	cvta.to.global.u64 %s, %s;
	ld.param.u32 %v, [val];
	ld.param.u64 %n, [n];
	mov.u32 %bid, %ctaid.x;
	mov.u32 %bdim, %ntid.x;
	mov.u32 %th, %tid.x;
	mov.u32 %gdim, %nctaid.x;
	mul.wide.u32 %i, %bid, %bdim;
	cvt.u64.u32 %t, %th;
	add.u64 %i, %i, %t;
	mul.wide.u32 %stride, %gdim, %bdim;
LOOP:
	setp.ge.u64 %p, %i, %n;
	@%p bra DONE;
	shl.b64 %t, %i, 2;
	add.u64 %a, %s, %t;
	ld.global.u32 %x, [%a];
	add.u32 %x, %x, %v;
	add.u64 %b, %d, %t;
	st.global.u32 [%b], %x;
	add.u64 %i, %i, %stride;
	bra LOOP;
DONE:
	ret;
}

.visible .entry spin_copy_u32(.param .u64 dst, .param .u64 src, .param .u64 n, .param .u64 ns, .param .u64 stamps)
{
	.reg .u64 %d, %s, %n, %ns, %st, %i, %stride, %a, %b, %t, %t0, %now, %el, %prev, %step;
	.reg .u32 %x, %bid, %bdim, %th, %gdim, %lead;
	.reg .pred %p, %first, %hasst;
	ld.param.u64 %d, [dst];
	cvta.to.global.u64 %d, %d;
	ld.param.u64 %s, [src];
	cvta.to.global.u64 %s, %s;
	ld.param.u64 %n, [n];
	ld.param.u64 %ns, [ns];
	ld.param.u64 %st, [stamps];
	mov.u32 %bid, %ctaid.x;
	mov.u32 %bdim, %ntid.x;
	mov.u32 %th, %tid.x;
	mov.u32 %gdim, %nctaid.x;
	or.b32 %lead, %bid, %th;
	setp.eq.u32 %first, %lead, 0;
	setp.ne.u64 %hasst, %st, 0;
	and.pred %first, %first, %hasst;
	cvta.to.global.u64 %st, %st;
	mov.u64 %t0, %globaltimer;
	@%first st.global.u64 [%st], %t0;
	mov.u64 %el, 0;
	mov.u64 %prev, %t0;
SPIN:
	mov.u64 %now, %globaltimer;
	sub.u64 %step, %now, %prev;
	mov.u64 %prev, %now;
	min.u64 %step, %step, 1000000;
	add.u64 %el, %el, %step;
	setp.lt.u64 %p, %el, %ns;
	@%p bra SPIN;
	mul.wide.u32 %i, %bid, %bdim;
	cvt.u64.u32 %t, %th;
	add.u64 %i, %i, %t;
	mul.wide.u32 %stride, %gdim, %bdim;
LOOP:
	setp.ge.u64 %p, %i, %n;
	@%p bra DONE;
	shl.b64 %t, %i, 2;
	add.u64 %a, %s, %t;
	ld.global.u32 %x, [%a];
	add.u64 %b, %d, %t;
	st.global.u32 [%b], %x;
	add.u64 %i, %i, %stride;
	bra LOOP;
DONE:
	bar.sync 0;
	mov.u64 %now, %globaltimer;
	@%first st.global.u64 [%st+8], %now;
	ret;
}
`

// BuiltinPTX returns the PTX text of the built-in kernels.
func BuiltinPTX() string { return builtinPTX }

// Builtin returns a built-in kernel, loading the built-in module on first use.
func (d *Device) Builtin(name string) (backend.Function, error) {
	d.builtinOnce.Do(func() {
		d.builtinMod, d.builtinErr = d.LoadModule([]byte(builtinPTX))
	})
	if d.builtinErr != nil {
		return nil, fmt.Errorf("cuda: loading the built-in kernels: %w", d.builtinErr)
	}
	return d.builtinMod.Function(name)
}
