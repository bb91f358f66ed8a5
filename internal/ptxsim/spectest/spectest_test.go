package spectest_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/ptxsim/spectest"
)

// addK is a spec whose PTX adds 1 to each int32 of a buffer of n and whose CPU
// implementation adds k: the two agree for k = 1 only.
type addK struct{ k int32 }

func (s addK) Key() string { return fmt.Sprintf("add%d", s.k) }

func (s addK) PTX(major, minor int) (string, string, error) {
	return `.version 7.8
.target sm_90
.address_size 64
.visible .entry add1(.param .u64 x, .param .u64 n)
{
	.reg .pred %p1;
	.reg .b32 %r<4>;
	.reg .b64 %rd<6>;
	ld.param.u64 %rd1, [x];
	ld.param.u64 %rd2, [n];
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	mad.lo.u32 %r1, %r1, %r2, %r3;
	cvt.u64.u32 %rd3, %r1;
	setp.ge.u64 %p1, %rd3, %rd2;
	@%p1 ret;
	mad.lo.u64 %rd4, %rd3, 4, %rd1;
	ld.global.u32 %r2, [%rd4];
	add.u32 %r2, %r2, 1;
	st.global.u32 [%rd4], %r2;
	ret;
}
`, "add1", nil
}

func (s addK) CPU() (func(*cpu.Launch) error, error) {
	return func(l *cpu.Launch) error {
		x := cpu.Slice[int32](l.Mem(0))
		for i := range l.Uint64(1) {
			x[i] += s.k
		}
		return nil
	}, nil
}

func TestBoth(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	in := spectest.RandBytes(rng, dtype.Int32, 100, false)
	for _, k := range []int32{1, 2} {
		args := []spectest.Arg{spectest.BufAt(in, 4), spectest.U64(90)}
		sim, cpu := spectest.Both(t, addK{k}, 3, 32, 2, args)
		i := spectest.FirstDiff(dtype.Int32, sim[0], cpu[0])
		if k == 1 && i >= 0 || k == 2 && i != 0 {
			t.Errorf("k = %d: first difference at %d", k, i)
		}
		if spectest.FirstDiff(dtype.Int32, sim[0][360:], in[360:]) >= 0 || sim[1] != nil {
			t.Errorf("k = %d: elements past n written, or a scalar returned", k)
		}
	}
}
