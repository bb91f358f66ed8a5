package kernel

import (
	"fmt"

	"github.com/go-gpu/gpu/ptx"
)

// blockAttrs declares the block size a kernel is always launched with (.maxntid) and
// lets it use the registers it needs (.maxnreg 128, two 256-thread blocks' worth, or
// what one block of more than 512 threads can have: 65536/threads).
//
// Without .maxnreg, CUDA 13's ptxas (the H200 driver's JIT) treats .maxntid as a hint
// to pick a register count for occupancy: it capped the 1-D scan at 32 and 64 registers,
// the column scan at 80, a permute variant and the compaction's scatter at 32, and each
// then spilled 8-16 bytes, where CUDA 11.8's ptxas used 36-72 registers and no stack.
// With .maxnreg both assemblers use what the kernel needs (seen with ptxas 13.0.88 and
// 11.8 on 2026-12-01). GPU_KERNEL_REGCAP=ptxas in the environment at start-up leaves
// the choice to ptxas again, so that both can be timed.
func blockAttrs(f *ptx.Func, threads int) {
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", threads))
	if LiftRegCap {
		f.Attr(fmt.Sprintf(".maxnreg %d", min(128, 65536/threads)))
	}
}

// regAttrs declares a kernel's block size (.maxntid) and its register cap: cap 0
// leaves the count to ptxas (no .maxnreg), -1 caps as blockAttrs does, n > 0 is
// .maxnreg n.
func regAttrs(f *ptx.Func, threads, cap int) {
	if cap < 0 {
		blockAttrs(f, threads)
		return
	}
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", threads))
	if cap > 0 {
		f.Attr(fmt.Sprintf(".maxnreg %d", cap))
	}
}

// compactAttrs declares the compaction kernels' (CompactCount, CompactScatter) block
// size and register cap, CompactRegCap: by default ptxas's choice, as before
// blockAttrs. These kernels are bound by memory bandwidth, and occupancy mattered more
// than the few bytes CUDA 13's ptxas spills at its cap: on the H200 (2026-12-02, one
// run, three processes each) findall of 2^28 bools took 623-631 us with ptxas's choice,
// 674-679 us with .maxnreg 128 and 669-681 us with 40; logical indexing 846-862, 904-915
// and 901-931 us.
func compactAttrs(f *ptx.Func) { regAttrs(f, SearchBlock, CompactRegCap) }

// CompactRegCap is the compaction kernels' .maxnreg: 0 (the default) the choice of
// ptxas (no .maxnreg), -1 as every other kernel (blockAttrs), or a register count (24
// to 128). The root package's start-up setting GPU_COMPACT_REGCAP (ptxas, lift or a
// count) sets it, before any kernel is generated.
var CompactRegCap = 0

// ScanRegCap is the register cap of the scan kernels that have no MinBlocks (the
// column scan, ScanColumns, and ScanTiles with MinBlocks 0), as CompactRegCap: 0 (the
// default) ptxas's choice, -1 blockAttrs' .maxnreg, or a count. These kernels are bound
// by memory bandwidth too: on the H200 (2026-12-02, each setting in turn, two
// processes each) the Int64 scans along the rows of 16384x16384 (gpubench
// array/accumulate/Int64/dims=2/16k) took 1.54 ms with ptxas's choice against 1.62 ms
// with .maxnreg 128 (the 2026-11-30 build, without it: 1.54-1.58), the float16 and
// bfloat16 column scans 492-502 us against 498-537, the other 16k scans within 1%.
// CUDA 13's ptxas then spills 4-16 bytes in some of them (the tests log it). The root
// package's start-up setting GPU_SCAN_REGCAP (ptxas, lift or a count) sets it.
var ScanRegCap = 0

// LiftRegCap says whether blockAttrs adds .maxnreg (see there): true but where the
// root package's start-up setting GPU_KERNEL_REGCAP=ptxas (its tuning.go) clears it,
// before any kernel is generated.
var LiftRegCap = true
