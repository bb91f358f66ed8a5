package simdev_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/internal/ptxsim/simdev"
)

// scaleSum: y[i] = a*x[i] for i < n, and, through dynamic shared memory and a barrier,
// sums[block] = the sum of the block's y.
const scaleSum = `.version 7.8
.target sm_90
.address_size 64
.extern .shared .align 4 .b8 part[];
.visible .entry scale_sum(.param .u64 y, .param .u64 sums, .param .u64 x, .param .f32 a, .param .u32 n)
{
	.reg .pred %p<4>;
	.reg .b32 %r<12>;
	.reg .b64 %rd<12>;
	.reg .f32 %f<6>;
	ld.param.u64 %rd1, [y];
	ld.param.u64 %rd2, [sums];
	ld.param.u64 %rd3, [x];
	ld.param.f32 %f1, [a];
	ld.param.u32 %r1, [n];
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mad.lo.u32 %r5, %r3, %r4, %r2;
	mov.f32 %f2, 0f00000000;
	setp.ge.u32 %p1, %r5, %r1;
	@%p1 bra $L__store;
	mul.wide.u32 %rd4, %r5, 4;
	add.u64 %rd5, %rd3, %rd4;
	ld.global.f32 %f3, [%rd5];
	mul.rn.f32 %f2, %f3, %f1;
	add.u64 %rd6, %rd1, %rd4;
	st.global.f32 [%rd6], %f2;
$L__store:
	mov.u32 %r6, part;
	shl.b32 %r7, %r2, 2;
	add.u32 %r6, %r6, %r7;
	st.shared.f32 [%r6], %f2;
	bar.sync 0;
	setp.ne.u32 %p2, %r2, 0;
	@%p2 bra $L__end;
	mov.f32 %f4, 0f00000000;
	mov.u32 %r8, 0;
$L__sum:
	shl.b32 %r9, %r8, 2;
	mov.u32 %r10, part;
	add.u32 %r9, %r9, %r10;
	ld.shared.f32 %f5, [%r9];
	add.rn.f32 %f4, %f4, %f5;
	add.u32 %r8, %r8, 1;
	setp.lt.u32 %p3, %r8, %r4;
	@%p3 bra $L__sum;
	mul.wide.u32 %rd7, %r3, 4;
	add.u64 %rd8, %rd2, %rd7;
	st.global.f32 [%rd8], %f4;
$L__end:
	ret;
}

.visible .entry oob(.param .u64 x)
{
	.reg .b64 %rd<3>;
	.reg .b32 %r<2>;
	ld.param.u64 %rd1, [x];
	ld.global.u32 %r1, [%rd1+4096];
	ret;
}
`

func TestLaunch(t *testing.T) {
	d, err := gpu.NewDevice(simdev.New(2))
	if err != nil {
		t.Fatal(err)
	}
	if i := d.Info(); d.Backend() != "cuda" || i.ComputeMajor != 9 || i.WarpSize != 32 {
		t.Fatalf("info: %+v", i)
	}
	s := d.DefaultStream()
	mod, err := d.LoadModule([]byte(scaleSum))
	if err != nil {
		t.Fatal(err)
	}
	fn, err := mod.Function("scale_sum")
	if err != nil {
		t.Fatal(err)
	}
	const n, block, grid = 100, 32, 4
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i) - 20.5
	}
	x, _ := gpu.FromSlice(s, xs)
	y, _ := gpu.Full(s, float32(-1), n+3)
	sums, _ := gpu.Full(s, float32(-1), grid)
	cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: grid}, Block: gpu.Dim3{X: block}, SharedMem: 4 * block}
	if err := s.Launch(fn, cfg, gpu.Out(y), gpu.Out(sums), gpu.In(x), float32(2), uint32(n)); err != nil {
		t.Fatal(err)
	}
	ys, err := y.ToSlice(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ss, _ := sums.ToSlice(context.Background())
	for i, v := range ys {
		want := float32(-1)
		if i < n {
			want = 2 * xs[i]
		}
		if v != want {
			t.Fatalf("y[%d] = %v, want %v", i, v, want)
		}
	}
	for b := range grid {
		var want float32
		for i := b * block; i < min(n, (b+1)*block); i++ {
			want += 2 * xs[i]
		}
		if ss[b] != want {
			t.Errorf("sums[%d] = %v, want %v", b, ss[b], want)
		}
	}
	// An access out of bounds fails the launch and faults the device.
	oob, err := mod.Function("oob")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Launch(oob, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}, gpu.In(x)); err != nil {
		t.Fatal(err)
	}
	err = s.Synchronize(context.Background())
	if !errors.Is(err, gpu.ErrLaunchFailed) || !strings.Contains(err.Error(), "outside") {
		t.Errorf("an access out of bounds: %v", err)
	}
}

// TestArgumentSizes: a scalar of another size than its parameter fails the launch (on a
// GPU the kernel would read the wrong bytes).
func TestArgumentSizes(t *testing.T) {
	d, err := gpu.NewDevice(simdev.New(1))
	if err != nil {
		t.Fatal(err)
	}
	s := d.DefaultStream()
	mod, err := d.LoadModule([]byte(scaleSum))
	if err != nil {
		t.Fatal(err)
	}
	fn, _ := mod.Function("scale_sum")
	x, _ := gpu.Zeros[float32](s, 4)
	cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 4}, SharedMem: 16}
	if err := s.Launch(fn, cfg, gpu.Out(x), gpu.Out(x), gpu.In(x), float32(2), uint64(4)); err == nil {
		err = s.Synchronize(context.Background())
		if !errors.Is(err, gpu.ErrLaunchFailed) || !strings.Contains(err.Error(), "parameter n") {
			t.Errorf("a u64 argument for a u32 parameter: %v", err)
		}
	}
}
