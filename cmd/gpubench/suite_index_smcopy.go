package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/go-gpu/gpu/backend/cuda/cu"
	"github.com/go-gpu/gpu/bench"
)

// The multiprocessors' plain copy beside index/concat/float32/axis1/16k: raw kernels
// that copy the concatenation's bytes (its two inputs' 512 MiB, contiguous, into 512
// MiB of cuMemAlloc memory) the way a copy kernel can, with nothing of a
// concatenation's work, sampled in turn with it (its Interleave group):
//
//   - raw/index/concat/float32/axis1/smcopy/16k: 16-byte vectors, 4 a thread;
//   - raw/index/concat/float32/axis1/smcopy8/16k: 8 a thread.
//
// Block b of 256 threads copies vectors [b*K*256, (b+1)*K*256): thread t loads vectors
// t, t+256, ..., every load before its first store (the tiled concatenation kernel's
// access pattern without its row arithmetic). The driver's copy of the same bytes
// (.../dtod/16k) runs on a copy engine, which a concatenation along axis 1 can reach
// only through pitched copies (.../memcpy2d/16k); these rows are what the
// multiprocessors get for the same bytes.

// smCopyBlock is the threads of a copy kernel's block.
const smCopyBlock = 256

// rawSMCopyKernels are the copy kernels: the entry and the vectors a thread copies.
var rawSMCopyKernels = []struct {
	entry string
	items int
}{
	{"sm_copy4", 4},
	{"sm_copy8", 8},
}

// rawSMCopyModule returns the PTX of the copy kernels: parameters (src, dst), the grid
// one block per items*256 vectors.
func rawSMCopyModule() string {
	var b strings.Builder
	b.WriteString(".version 7.0\n.target sm_80\n.address_size 64\n")
	for _, k := range rawSMCopyKernels {
		fmt.Fprintf(&b, `
.visible .entry %s(.param .u64 src, .param .u64 dst)
{
	.reg .b32 %%r<3>;
	.reg .b32 %%v<%d>;
	.reg .b64 %%rd<6>;
	ld.param.u64 %%rd1, [src];
	ld.param.u64 %%rd2, [dst];
	cvta.to.global.u64 %%rd1, %%rd1;
	cvta.to.global.u64 %%rd2, %%rd2;
	mov.u32 %%r1, %%ctaid.x;
	mov.u32 %%r2, %%tid.x;
	mul.wide.u32 %%rd3, %%r1, %d;
	mul.wide.u32 %%rd4, %%r2, 16;
	add.u64 %%rd3, %%rd3, %%rd4;
	add.u64 %%rd4, %%rd1, %%rd3;
	add.u64 %%rd5, %%rd2, %%rd3;
`, k.entry, 4*k.items, k.items*smCopyBlock*16)
		for j := range k.items {
			fmt.Fprintf(&b, "\tld.global.nc.v4.u32 {%%v%d, %%v%d, %%v%d, %%v%d}, [%%rd4+%d];\n", 4*j, 4*j+1, 4*j+2, 4*j+3, j*smCopyBlock*16)
		}
		for j := range k.items {
			fmt.Fprintf(&b, "\tst.global.v4.u32 [%%rd5+%d], {%%v%d, %%v%d, %%v%d, %%v%d};\n", j*smCopyBlock*16, 4*j, 4*j+1, 4*j+2, 4*j+3)
		}
		b.WriteString("\tret;\n}\n")
	}
	return b.String()
}

// rawSMCopyPTX is the module of the copy kernels.
var rawSMCopyPTX = rawSMCopyModule()

// registerRawSMCopies registers the copy rows (see above).
func registerRawSMCopies() {
	group := "index/concat/float32/axis1" + bench.LargeSuffix
	for _, k := range rawSMCopyKernels {
		name := "raw/index/concat/float32/axis1/smcopy" + bench.LargeSuffix
		if k.items != 4 {
			name = fmt.Sprintf("raw/index/concat/float32/axis1/smcopy%d%s", k.items, bench.LargeSuffix)
		}
		var (
			mod      cu.Module
			fn       cu.Function
			src, dst uint64
			grid     uint32
		)
		free := func(r *raw) error { return r.freeKernel(&mod, &src, &dst) }
		side := int64(bench.LargeSide)
		registerRaw(rawSpec{
			Name:       name,
			Interleave: group,
			Bytes:      4 * side * side, // read and written: the concatenation's
			SyncTimer:  true,
			Setup: func(r *raw, env *bench.Env) (err error) {
				side := int64(env.Side())
				size := 2 * side * side // bytes copied: two (side/2)^2 float32 inputs
				per := int64(k.items * smCopyBlock * 16)
				if size%per != 0 || size/per > 1<<31-1 {
					return fmt.Errorf("%s: %d bytes, not a multiple of %d: %w", k.entry, size, per, bench.ErrSkip)
				}
				grid = uint32(size / per)
				env.Bytes = 2 * size
				if mod, err = r.ctx.ModuleLoadData(append([]byte(rawSMCopyPTX), 0)); err != nil {
					return err
				}
				defer func() {
					if err != nil {
						err = errors.Join(err, free(r))
					}
				}()
				if fn, err = r.ctx.ModuleGetFunction(mod, k.entry); err != nil {
					return err
				}
				if src, err = r.memAlloc(size); err != nil {
					return err
				}
				if dst, err = r.memAlloc(size); err != nil {
					return err
				}
				if err = r.ctx.MemsetAsync(cu.DevicePtr(src), 0x3f800000, 4, size/4, r.s); err != nil {
					return err
				}
				return r.syncStream()
			},
			Teardown: free,
			Body: func(r *raw) error {
				var blob [16]byte
				binary.LittleEndian.PutUint64(blob[0:], src)
				binary.LittleEndian.PutUint64(blob[8:], dst)
				return r.ctx.LaunchKernel(fn, [3]uint32{grid, 1, 1}, [3]uint32{smCopyBlock, 1, 1}, 0, r.s, blob[:], []int32{0, 8})
			},
		})
	}
}
