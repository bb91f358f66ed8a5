package gpu

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-gpu/gpu/internal/kernel"
)

// Tuning is a device's tuning knobs: choices among kernels and strategies that change
// how fast an operation runs, never its results (every choice computes the same
// values; float reductions and scans are deterministic for each choice). Each device
// has its own, DefaultTuning() when it is opened; Device.Tuning reads it and
// Device.SetTuning replaces it, safely while other goroutines run operations on the
// device (an operation reads the tuning once, when it starts). Tests and benchmarks use
// SetTuning to run every variant; programs rarely need to.
//
// # Environment variables
//
// The package reads these environment variables, all in one place (tuning.go; more on
// each with the field or function named). A value a variable can't take leaves the
// default. The first part sets DefaultTuning's fields, read once, at
// start-up:
//
//	GPU_REDUCE_BLOCKS_PER_SM=0..64          ReduceBlocksPerSM (0)
//	GPU_REDUCE_HALF_UNROLL=1|2|4|8          ReduceHalfUnroll (4)
//	GPU_REDUCE_HALF_ACCS=1|2|4|8            ReduceHalfAccs (2)
//	GPU_SCAN_VARIANT=v1|1|v4|4              Scan.Variant 1; v4: Scan.Stage (ScanTuning)
//	GPU_SCAN_STAGE=on|off                   Scan.Stage (on)
//	GPU_SCAN_LOOKBACK=0|1|2|4|8             Scan.Lookback (0)
//	GPU_SCAN_MINBLOCKS=0..8                 Scan.MinBlocks (5)
//	GPU_PERMUTE_VARIANT=v1|v2|v3            PermuteVariant (3)
//	GPU_RANDOM_WAVES=n (n > 0)              RandomWaves (4)
//	GPU_RANDOM_UNIFORM_WAVES=n (n > 0)      RandomUniformWaves (16)
//	GPU_RANDOM_HALF_UNIFORM=v1|v2|v3        RandomHalfUniform (3)
//	GPU_SCATTER_VARIANT=v1|v2|v3            ScatterVariant (2)
//	GPU_GATHER_STREAM=on|off                GatherStream (off)
//	GPU_GATHER_VARIANT=v1|v2                GatherVariant (1)
//	GPU_PUT_VARIANT=v1|v2                   PutVariant (1)
//	GPU_MATMUL_TILE=0..len(MatMulTiles)     MatMulTile (0: by type and size)
//	GPU_STAT_EXACT_EXP=1                    StatExactExp (off)
//	GPU_CONCAT_VARIANT=v1|1|v2|2            Concat.Variant (2)
//	GPU_CONCAT_ROWS=1|2                     Concat.Rows (1)
//	GPU_CONCAT_ITEMS=4|8                    Concat.Items (4)
//	GPU_CONCAT_STREAM=on|off                Concat.Stream (off)
//	GPU_CONCAT_BLOCKS_PER_SM=0..1024        Concat.BlocksPerSM (0)
//	GPU_CONCAT_AXIS0=kernel|memcpy          Concat.Axis0Kernel (memcpy)
//	GPU_CONCAT_AXIS1=kernel|memcpy|memcpy2d Concat.RowsKernel (kernel)
//	GPU_SEARCH_VARIANT=v1|v2                SearchVariant (2)
//	GPU_SEARCH_SHARED=0..5                  SearchShared (5)
//	GPU_SEARCH_BLOCK=256|512|1024           SearchBlock (0: by the shared levels)
//	GPU_SEARCH_QUERIES=1..8                 SearchQueries (0: 4, 2 for 8-byte keys, at most 2 in blocks of 1024)
//	GPU_SEARCH_BLOCKS_PER_SM=1..64          SearchBlocksPerSM (0: by the shared levels)
//	GPU_SEARCH_SWIZZLE=on|off               SearchSwizzle (on)
//	GPU_SEARCH_TABLE=0|4..14                SearchTable (0: none)
//	GPU_SEARCH_TABLE_GLOBAL=0|4..22         SearchTableGlobal (0: none)
//	GPU_SEARCH_HINTS=0..4                   SearchHints (2)
//	GPU_SEARCH_CARVEOUT=0..100              SearchCarveout (0: the driver's choice)
//	GPU_SEARCH_PAIR=on|off                  SearchPair (on)
//	GPU_TOPK_VARIANT=v1|v2|v3               TopKVariant (3)
//	GPU_UNIQUE_DENSE_MAX=0..2097152         UniqueDenseMax (2^21)
//	GPU_QUANTILE_SELECT=n (n >= 0)          QuantileSelect (2^16)
//	GPU_QUANTILE_SELECT_TOTAL=n (n >= 0)    QuantileSelectTotal (2^20)
//	GPU_EW_PDL=on|off                       ElementwisePDL (off)
//
// ("vN|N": either spelling; "on|off": 1, true or on; 0, false or off.) The second part
// sets process-wide settings, for every device, read once at start-up
// (startupFromEnv):
//
//	GPU_WAIT_SPIN=duration (not 0)          DefaultWaitPolicy.Spin, and that of the policies whose Spin is 0 (DefaultSpin)
//	GPU_SPIN_YIELD=duration (>= 0)          how long a spinning wait queries between yields (100us)
//	GPU_RACECHECK=1|panic                   the race checker on for every device opened (SetRaceCheck); panic: reports panic
//	GPU_KERNEL_REGCAP=ptxas                 kernels leave the register count to ptxas (no .maxnreg: internal/kernel's LiftRegCap)
//	GPU_COMPACT_REGCAP=ptxas|lift|24..128   the compaction kernels' .maxnreg (internal/kernel's CompactRegCap): ptxas's choice (the default), as the other kernels, or a count
//	GPU_SCAN_REGCAP=ptxas|lift|24..128      the same for the scan kernels without MinBlocks (internal/kernel's ScanRegCap)
//	GPU_SORT_ITEMS=4..28, GPU_SORT_ITEMS8=4..16, GPU_SORT_LOOKBACK=1|2|4|8|16|32,
//	GPU_SORT_LOOKBACK_VALS=0|1|2|4|8|16|32,
//	GPU_SORT_MINBLOCKS=0..8, GPU_SORT_RANK=ballot|ballot3|match|or, GPU_SORT_MATCH=on,
//	GPU_SORT_RANK_ALONE=ballot|ballot3|match|or,
//	GPU_SORT_LOADFENCE=on|off, GPU_SORT_SMALL_ITEMS=0..16,
//	GPU_SORT_SMALL_LOOKBACK=0|1|2|4|8|16|32, GPU_SORT_LOOKBACK_LEAN=on|off,
//	GPU_SORT_HIST_LEAN=on|off, GPU_SORT_LONG_ITEMS=0|4..64,
//	GPU_SORT_LONG_ITEMS8=0|4..64, GPU_SORT_LONG_ITEMS8_VALS=0|4..64,
//	GPU_SORT_LONG_MINBLOCKS=0..8, GPU_SORT_LONG_LOOKBACK8=0|1|2|4|8|16|32,
//	GPU_SORT_PDL=on|off,
//	GPU_SORT_FUSED=0..2^24, GPU_SORT_FUSED_ITEMS=4..28, GPU_SORT_FUSED_BLOCKS=1|2,
//	GPU_SORT_FUSED_SPLIT=on|off,
//	GPU_SORT_FUSED_EARLY=on|off, GPU_SORT_FUSED_RANK=ballot|or,
//	GPU_SORT_FUSED_FULL=on|off, GPU_SORT_FULL_TILES=off|long|narrow|all,
//	GPU_SORT_SECTORS=off|values|on, GPU_SORT_PREFETCH=0..64,
//	GPU_SORT_PREFETCH_KV=0..64, GPU_SORT_PRMT=on|off,
//	GPU_SORT_PREFETCH_VALS=on|off           the sort kernels' configuration (sortConfigFromEnv has the defaults)
//
// The third part is read at each call:
//
//	GPU_BACKEND=cpu|cuda|cuda:N             Open's device (default: the first CUDA device, else the CPU)
//	GPU_MATMUL=auto|library|cublas|gonum|generated|fallback
//	                                        what MatMulAuto uses (auto: the library if there is one)
//
// The backends read their own (backend/cuda: GPU_CUDA_LIBRARY, GPU_STREAM_MEMOPS,
// GPU_CUBLAS_*; package nccl: NCCL's and the rendezvous's).
type Tuning struct {
	// ReduceSplitMin is the least number of elements a CUDA reduction splits across
	// blocks into partial results (fewer take one launch of one block per output
	// tile): internal/kernel's PlanReduce. Default 1<<17.
	ReduceSplitMin int
	// ReduceFuse makes a split CUDA reduction one launch, the last block of each
	// output tile combining the tile's partial results (internal/kernel's FuseReduce);
	// false: two launches. Default true.
	ReduceFuse bool
	// ReduceBlocksPerSM is the blocks of a split CUDA reduction's kernel that the
	// planner counts on per multiprocessor when it sizes the grid to whole waves
	// (internal/kernel's PlanReduce): 0 (the default), CUDA's occupancy of the kernels
	// that may run, the partial one and the fused one, the smaller; n > 0: n. 8 is
	// what reductions with a float16 or bfloat16 result got before 2026-12-02 (their
	// occupancy query failed): a sum over axis 0 of 16384x16384 bfloat16 in 1024
	// blocks where 660 fit at once (a second wave of 364), 89.9% of the copy bandwidth
	// on the H200, the whole-array sum of 2^28 in 1056 (94.2%); with 0 they get 512
	// and 660, one wave, as float32 does (99.5%, 101.4%). GPU_REDUCE_BLOCKS_PER_SM=n
	// (0 <= n <= 64) sets it.
	ReduceBlocksPerSM int
	// ReduceHalfUnroll is the loads in flight per thread of a CUDA reduction reading
	// 8-element (16-byte) vectors of float16 or bfloat16 (1, 2, 4 or 8), and
	// ReduceHalfAccs the sets of 8 accumulators they fold into (1, 2, 4 or 8; at most
	// the unroll): internal/kernel's ReduceTuning has the measurements. Defaults 4 and
	// 2; GPU_REDUCE_HALF_UNROLL=n and GPU_REDUCE_HALF_ACCS=n set them.
	ReduceHalfUnroll, ReduceHalfAccs int
	// ReduceIndex64 forces 64-bit index arithmetic in every CUDA reduction kernel (by
	// default only reductions of 2^31 elements or more use it): for tests.
	ReduceIndex64 bool
	// Scan is the configuration of the CUDA row scan (ScanTuning).
	Scan ScanTuning
	// ScanKeepStatus keeps each stream's scan status scratch between scans on CUDA
	// (the kernels leave it clean); false: a zeroed pool buffer for each scan. Default
	// true.
	ScanKeepStatus bool
	// CompactEagerMax is the largest output (bytes) of Nonzero, Argwhere and Extract
	// allocated before the count is known, saving the wait for the count between the
	// two kernels at the cost of at most this much unused memory in the result; 0:
	// never. Default 4 MiB.
	CompactEagerMax int64
	// ReadPinned makes the small reads of a count (8 bytes) go through the device's
	// pinned words rather than pageable memory. Default true.
	ReadPinned bool
	// PermuteVariant selects the tiled permute kernel: 3, for tiles with a short side
	// (the output's innermost dimension or the one read along at most 32 elements) the
	// third kernel, 16 elements per thread through a swizzled shared tile (internal/
	// kernel's Permute.V3; its planPermuteV3 has the analysis), the second for
	// other shapes; 2, every load of a thread in flight before any use, 16-byte
	// accesses where aligned (Permute.V2); or 1, the first. Measured on the H200
	// (2026-11-30): a 16384^2 float32 transpose at 3329 GB/s with 2 against 2639 with
	// 1 (device copy 4144); variants 2 and 3 run the same kernel on it. Default 3
	// (predicted from the instruction count: the (32, 32, 16, 16384) permutation
	// (1, 0, 3, 2) at 53.5% of the copy bandwidth with 2, issue-bound); the
	// environment's GPU_PERMUTE_VARIANT=v1|v2|v3 (or 1, 2, 3) selects one.
	PermuteVariant int
	// RandomWaves is the most 256-thread blocks per SM of a random fill, in units of the
	// 8 that are resident at once (the kernels compute the same output for any grid).
	// Measured on the H200 with 2^28 float32 (share of the copy bandwidth, 1 / 4 / 16
	// waves): uniform 92 / 95-96 / 99%, normal 65-68 / 66-70 / 65%. This is the
	// normal distribution's limit (RandomUniformWaves the others'). Default 4;
	// GPU_RANDOM_WAVES=n (n > 0) sets it.
	RandomWaves int
	// RandomUniformWaves is RandomWaves for the other distributions (Rand, RandInt):
	// 16 after the measurements above (99% of the copy bandwidth for float32, against
	// 95-96% with 4; bfloat16 and float16 Rand of 2^28 at 83.4% with 4, 2026-12-02).
	// Default 16; GPU_RANDOM_UNIFORM_WAVES=n (n > 0) sets it.
	RandomUniformWaves int
	// RandomHalfUniform selects the CUDA Rand kernels of Float16 and BFloat16 (package
	// random's Options.HalfUniform; the same bits with each): 2, each word of a Philox
	// block to two values by integer construction and one packed half multiply
	// (fma.rn.f16x2 from sm_53, fma.rn.bf16x2 from sm_80; older GPUs get 1): 58 SASS
	// instructions per block of 8 bfloat16 values and 62 per 8 float16 values (ptxas
	// 13, sm_90), against 84 and 82 with 1, each value through float32; 3, 2 with two
	// blocks in flight a thread (the normal float32 kernel's main loop): 53.5 and 57.5
	// a block, 32 registers. Measured on the H200 with 1 (2026-12-02, 2^28 elements, 16
	// waves): bfloat16 152 µs, float16 158 µs, 80.6-82% of the copy bandwidth,
	// issue-bound (Nsight Compute: issue slots 61% busy, the ALU pipe 64%, DRAM 70%).
	// Default 3 (predicted from the instruction counts: float32 Rand, 62 instructions
	// per 16 bytes, runs at 99%); GPU_RANDOM_HALF_UNIFORM=v1|v2|v3 (or 1, 2, 3) selects
	// one.
	RandomHalfUniform int
	// ScatterVariant selects how the CUDA scatter-combines (AddAt, MaximumAt,
	// MinimumAt, Bincount) avoid contention on few targets: 2 (the default), copies of
	// the shared bins of a small destination, a private one per thread for up to 32
	// 4-byte bins (internal/kernel's Scatter.Copies), and over a large destination
	// plain global atomics (red.global), aggregated within a warp only where a vote
	// finds neighbouring updates with one target (Scatter.Detect); 3, as 2 but the
	// global atomics never aggregate (PyTorch's and CuPy's plain atomicAdd); 1, the
	// first design: warp aggregation (match.any) before every atomic, one copy of the
	// shared bins. Every variant computes the same results (float sums in an order
	// that varies from run to run, as ever). GPU_SCATTER_VARIANT=v1|v2|v3 selects one.
	ScatterVariant int
	// GatherStream marks the CUDA gathers' (Take, TakeAlongAxis) use-once accesses:
	// the source's elements read without allocating in L1 and the output stored
	// evict-first (internal/kernel's Gather.Stream). Default false;
	// GPU_GATHER_STREAM=1 sets it (0 clears it).
	GatherStream bool
	// GatherVariant selects the CUDA kernel of the flat gathers (Take of a contiguous
	// index array at a 16-byte aligned address; internal/kernel's Gather.Variant):
	// 1 (the default; 0 means 1), the first kernel, 4 elements per thread in a
	// grid-stride loop over at most 32 blocks per multiprocessor; 2, 8 elements per
	// thread over a grid that covers the array once, every index load first, then
	// every random source load, then the stores, with Raise mode's range check
	// costing two compares per element and one warp vote (30 registers on sm_90: full
	// occupancy). Both record the same out-of-range indices and compute the same
	// results. GPU_GATHER_VARIANT=v1|v2 selects one. On the H200 (2026-12-02, 2^26
	// random int64 indices into 2^28 float32, in turn in one run) the second's half
	// as many instructions gained nothing: 2.01 ms against 1.99 ms, the random loads
	// alone taking 1.75 ms (raw/index/take/float32/random/floor/16k).
	GatherVariant int
	// PutVariant selects the CUDA kernel of the flat Put (contiguous indices and
	// values at 16-byte aligned addresses; internal/kernel's Scatter.Variant): 1 (the
	// default; 0 means 1), the first scatter kernel; 2, GatherVariant 2's design for
	// stores: 8 updates per thread over a grid that covers them once, indices and
	// values in 16-byte loads, then the random stores (32 registers on sm_90). Both
	// record the same out-of-range indices and skip those updates.
	// GPU_PUT_VARIANT=v1|v2 selects one. On the H200 (2026-12-02, 2^26 values at
	// random indices of 2^28 float32, in turn in one run) 4.34 ms against 4.33 ms, the
	// random stores alone taking 4.18 ms.
	PutVariant int
	// MatMulTile selects the tiling of the generated tensor-core matrix product
	// (float16, bfloat16, TF32; internal/kernel's MatMulTiles, BM x BN x BK for 16-bit
	// types): 1, 128x128x32 tiles of 4 warps in 4 stages; 2, 128x256x32 of 8 warps in 4
	// stages; 3, 256x128x32 of 8 warps; 4, 128x256x32 in 3 stages; 5, 128x256x64 of 8
	// warps in 3 stages; 6, 128x128x64 of 4 warps in 3 stages; 7 to 11, tilings 1, 6,
	// 2, 3 and 5 with the software-pipelined main loop (MatMulTile.Pipelined: fragments
	// double-buffered in registers, the next tile's copies among the mma.sync, one
	// barrier a tile before its last k step); 12 and 13, 128x128x32 in 4 stages and
	// 128x128x64 in 3, of 8 warps of 64x32 (126 registers: 2 blocks, 16 warps an SM);
	// 14, 256x128x32 in 4 stages, of 16 warps of 64x32 (1 block).
	// Measured on the H200 (2026-12-02, 4096^3 bfloat16, one run): 1 at 447 µs, 6 at
	// 451, 7 at 451, 8 at 431, 9 at 420, 10 at 428, 11 at 368, 12 at 488, 13 at 459,
	// 14 at 582, against cuBLAS's 197 µs (an earlier run: 2-4 at 523-554, 5 at 465).
	// Default 0: tiling 11 for 16-bit products of 2048x2048 outputs and more where its
	// 153 KiB of shared memory a block fit (sm_80, sm_90), 1 otherwise (matmul.go's
	// mmJob.tile); GPU_MATMUL_TILE=n selects one for all.
	MatMulTile int
	// StatExactExp makes the CUDA float32 row statistics (Softmax, LogSoftmax,
	// LogSumExp) compute exp with ptx.Math's correctly-rounded-in-most-cases routine
	// instead of the 2-ulp one (internal/kernel's RowStat.ExactExp): a measurement
	// knob. Default false; GPU_STAT_EXACT_EXP=1 sets it.
	StatExactExp bool
	// Concat is the configuration of Concatenate's copy kernel (ConcatTuning).
	Concat ConcatTuning
	// SearchVariant selects SearchSorted's CUDA kernel: 2, a search tree of fanout 8
	// (internal/kernel's SearchTree: eight keys, one sector, a step; the top levels in
	// shared memory, a sample of a seventh of the array for the middle ones, one step
	// in the array); 1, the first design, a binary search whose top 12 levels read
	// shared memory (internal/kernel's SearchSorted; 6.68 ms for 2^26 float32 queries
	// in 2^24 on the H200, 2026-12-02). Default 2; GPU_SEARCH_VARIANT=v1|v2 selects one.
	SearchVariant int
	// SearchShared, SearchQueries, SearchBlock and SearchBlocksPerSM configure
	// SearchSorted's tree (SearchVariant 2, internal/kernel's SearchTree): the top
	// levels a block copies into shared memory (0 to 5, at most the tree's levels but
	// one; each takes 8 times the one above: 4 levels are 4680 keys, 18 KiB of 4-byte
	// keys, a copy per block, which leaves less of the multiprocessor's 256 KiB to L1,
	// where the next level, 128 KiB for 2^24 keys, could stay; 5 levels, 146 KiB of
	// dynamic shared memory, one block a multiprocessor, are for keys of up to 4 bytes
	// on CUDA: others get 4), the queries a thread walks down the tree together (1 to
	// 8; their loads in flight at once; at most 4 for 8-byte keys, 2 in blocks of 1024
	// threads; 0: 4 for keys of up to 4 bytes, 2 for 8-byte keys), the threads of
	// a block (256, 512 or 1024; 0: 1024 where the block's shared memory is dynamic, 5
	// shared levels or a large SearchTable, else 256) and the most blocks launched per
	// multiprocessor (1 to 64; 0: where it is dynamic, as many as fit, at most 2 (1
	// with 5 shared levels on the H200), else 16). Defaults 5, 0, 0 and 0; GPU_SEARCH_SHARED=0..5, GPU_SEARCH_QUERIES=1..8,
	// GPU_SEARCH_BLOCK=256|512|1024 and GPU_SEARCH_BLOCKS_PER_SM=1..64 set them. On the
	// H200 (2026-12-02, 2^26 float32 queries in 2^24, one run): 5 levels, blocks of
	// 1024, 2 queries a thread, a block a multiprocessor 2.32 ms; 4 levels, 256, 4 and
	// 16 (the earlier defaults) 3.35 ms; 3 levels 3.06; 2 levels 2.99; 8 queries 3.46;
	// 4 blocks a multiprocessor 2.92; 5 levels in blocks of 512 with 8 queries 3.33.
	// On an H100 (2026-12-06, with SearchHints 2, two processes each in turn, against
	// the defaults' 2.41-2.42 ms): 4 levels in blocks of 1024 1.115x; 4 levels, blocks
	// of 512, 4 queries 1.167x (the same with SearchCarveout 16); 3 levels so 1.30x; 4
	// levels, 256, 4 queries, 8 blocks a multiprocessor 1.32x; 4 levels, 512, 8
	// queries 1.38x.
	SearchShared, SearchQueries, SearchBlock, SearchBlocksPerSM int
	// SearchSwizzle lays the tree's shared levels out XOR-swizzled by 16-byte chunks
	// (internal/kernel's SearchTree.Swizzle): a node's first chunk then starts in any
	// of the eight 16-byte bank groups rather than 4 of them (2 for 8-byte keys), fewer
	// bank conflicts among the lanes of a quarter warp reading random nodes (Nsight
	// Compute on the H200, 2026-12-02, 2^26 float32 queries in 2^24 unswizzled: 11.2
	// shared wavefronts per load request where 4 would do, the L1 pipe 95.7% busy;
	// swizzled, 7.9: eight random nodes of a quarter warp still meet on some groups). Default true: 2.07-2.08 against 2.29-2.31 ms for that
	// search (H200, 2026-12-02, three processes each in turn); GPU_SEARCH_SWIZZLE=off
	// clears it.
	SearchSwizzle bool
	// SearchTable, where not 0 (4 to 14), gives SearchSorted's tree over float32,
	// int32 and uint32 arrays of fewer than 2^32 elements a table of up to
	// 2^SearchTable buckets of the values (internal/kernel's SearchTable: one launch of
	// 2^bits + 1 binary searches before the search; at most about m/8 buckets, none for
	// fewer queries than buckets), staged in shared memory beside the shared levels,
	// that starts each query's walk at the lowest level its bucket's range allows
	// (SearchTree.TableBits). For 2^24 uniform keys and 2^14 buckets (about 1024 keys
	// a bucket) the walk starts at level 3, a quarter of the time level 4: 3 or 4 of the
	// five shared levels' steps skipped, the sample's two levels and the array still
	// read. Where the shared memory of a block (MaxSharedPerBlock) doesn't hold the
	// table beside the shared levels, it takes fewer buckets down to 2^10, then fewer
	// shared levels, then fewer buckets; at most 4 queries a thread (SearchQueries).
	// Default 0: measured slower. On an H100 (2026-12-06, 2^26 float32 queries in
	// 2^24, two processes each in turn) 5.59 ms with 2^14 buckets against 2.47 ms
	// without (2.26x; docs/benchmarks/h100-2026-12-06-sort.txt); the results were
	// right (the search tests passed with it there). The cost is the L1 it takes: the
	// table beside the five shared levels needs the largest shared-memory carveout,
	// which leaves 28 KiB of L1 (see SearchCarveout); with SearchHints 2, later the
	// same day, 2^14 buckets 1.66x, 2^12 1.10x. GPU_SEARCH_TABLE=0 or 4..14 sets it
	// (1 to 3 are ignored).
	SearchTable int
	// SearchTableGlobal, where not 0 (4 to 22), gives SearchSorted's tree over
	// float32, int32 and uint32 arrays of fewer than 2^32 elements too long for the
	// shared levels to hold the tree (more than 8^6 = 262144 elements) a table of up to
	// 2^SearchTableGlobal buckets that the search reads from global memory (L2) instead
	// of shared memory (SearchTree.TableGlobal): about one bucket for 16 elements
	// (2^20 for 2^24 keys), no shared levels (so blocks of 256 threads unless
	// SearchBlock says otherwise), at most 4 queries a thread. On uniform keys a query then reads its bucket's two words, one node of
	// the sample's lowest level and the array's sector; where the values crowd into
	// few buckets it walks from higher up (from the root where one bucket holds
	// them all). It takes the place of SearchTable where both apply. Default 0:
	// measured slower. On an H100 (2026-12-06, 2^26 float32 queries in 2^24, processes
	// of each setting in turn; docs/benchmarks/h100-2026-12-06-search.txt) 3.31 ms with
	// 20 bits against 2.47 ms without, 22 bits 3.31 ms, 18 bits 3.85 ms; with the hints
	// (SearchHints 2) 3.16 ms for 20 and 22 bits. A query reads as many random sectors
	// from global memory as the tree's (the table's two words, the sample's lowest level,
	// the array, and a quarter of the time the level above), and more L2 for them.
	// GPU_SEARCH_TABLE_GLOBAL=0 or 4..22 sets it (1 to 3 are ignored).
	SearchTableGlobal int
	// SearchHints gives SearchSorted's tree L2 eviction priorities (internal/kernel's
	// SearchTree.Hints): 1, the array's loads evict-first (and no L1 allocation), so
	// that a search's random sectors of the array don't push the sample's levels out
	// of L2; 2, besides, the sample's levels and a global table evict-last; 3, besides,
	// the sample's lowest level's loads without L1 allocation, 4 every global level's
	// (an L1 line for each load in flight: the L1 bounds them). Default 2:
	// on an H100 (2026-12-06, 2^26 float32 queries in 2^24, three processes of each in
	// turn; docs/benchmarks/h100-2026-12-06-search.txt) 2.39 ms against 2.47 ms
	// without hints (0.967x), 1 2.40 ms (0.970x); 3 1.048x and 4 1.094x of 2's time.
	// BenchmarkSearchSortedDist, one process: uniform keys 0.961x without hints'
	// time, normal and log-normal ones 1.011-1.012x (their queries meet on fewer of
	// the array's sectors, which the evict-first loads leave L2 less time to share),
	// clustered ones the same. With SearchPair's loads (no sector's halves read
	// apart) 1, 3 and 4 took the time 2 did, within 0.4% (H100, four processes each in
	// turn, docs/benchmarks/h100-2026-12-06-pair.txt). GPU_SEARCH_HINTS=0..4 sets it.
	SearchHints int
	// SearchCarveout, where not 0 (1 to 100), is the percent of a multiprocessor's
	// unified L1/shared memory SearchSorted's tree asks for as shared memory (a hint
	// to the driver, rounded up to a size the hardware has; the rest is L1). Default 0:
	// the driver's choice. A measurement knob: on an H100 (2026-12-06, the search
	// above, hints 2) 65 (the five shared levels' 146 KiB in a 164 KiB carveout, 92 KiB
	// of L1) took the same time as the driver's choice, 100 (28 KiB of L1) 1.77x it, as
	// a shared table beside the levels did (SearchTable 14: 1.66x; 12, which leaves the
	// carveout as it was, 1.10x). GPU_SEARCH_CARVEOUT=0..100 sets it.
	SearchCarveout int
	// SearchPair has SearchSorted's tree read its global nodes (the sample's levels
	// in global memory and the array) by lane pairs, each load of a warp covering
	// whole 32-byte sectors (internal/kernel's SearchTree.Pair), where the array's
	// loads are vector loads and there is no table. Default on: the tree was bound by
	// L2 (Nsight Compute on an H100, 2026-12-06: L2 92% busy, 4.5 L2 requests a query
	// where its three global nodes are three sectors, each half of a sector read
	// without L1 allocation a request of its own); with pair loads 2^26 float32 queries
	// in 2^24 took 2.25 ms against 2.42 (0.931x, five processes of each in turn), and
	// BenchmarkSearchSortedDist, one process, 0.955x of the time without on uniform
	// keys, 0.913x on normal ones, 0.896x on log-normal ones. GPU_SEARCH_PAIR=on|off
	// sets it.
	SearchPair bool
	// TopKVariant selects TopK's radix select on CUDA: 2, the histogram passes in one
	// wave (8 blocks a multiprocessor) with 16-byte loads of 4-byte keys, each pass's
	// last block doing the select step (no step launches), the count pass reading its
	// tiles with coalesced loads, the gather leaving at once the tiles whose counts
	// hold none of the k, and for k up to 512 a rank sort of the k in one block instead
	// of the radix block sort (internal/kernel's SelectHist.Vector and Fused,
	// TopKCount.Striped, TopKGather.Skip, TopKRankSort); 1, the first design (293 µs
	// for the 100 largest of 2^24 float32 on the H200, 2026-12-02: 4 histogram passes
	// of 34 µs and 4 steps of 2.5 µs, count 39 µs, gather 77 µs, block sort 14 µs);
	// 3, for 4-byte keys, k up to 512 and up to 256 rows (others as 2), an 11-bit
	// radix select with candidate buffers (internal/kernel's TopKRadix, after RAFT's
	// AIR top-k): three launches, two reads of the keys (the second appending the top
	// bucket's keys to a buffer), the third pass over that buffer, its last block
	// taking the ties and ordering the k, no memset; variant 2's count, scan, gather
	// and rank sort follow, returning at once unless the last bucket overflowed. On
	// the H200 (2026-12-02, the 100 largest of 2^24 float32, one run) 150 µs against
	// variant 2's 191. Default 3; GPU_TOPK_VARIANT=v1|v2|v3 selects one.
	TopKVariant int
	// UniqueDenseMax is the widest range of values (largest minus smallest, plus one)
	// of an integer array whose Unique (values only) marks the values present in a
	// bitmap of the range instead of sorting the array: a pass for the range (its two
	// ends read back, one more wait), a pass marking each key's bit in a copy of the
	// bitmap in each block's shared memory, then a compaction of the range's set bits
	// (internal/kernel's UniqueRange, UniqueMark, UniqueExpand): two reads of the keys
	// where the radix sort makes a read and a write of them per 8 bits of range. A
	// wider range (after that first pass), the options ReturnIndex, ReturnInverse and
	// ReturnCounts, and float and bool arrays sort. It is capped at 8 bits a byte of
	// the device's shared memory per block (1.8 million on the H200, 393216 on the CPU
	// backend), and tried from 2^16 elements on. 0: never. Default 2^21 (the cap
	// decides); GPU_UNIQUE_DENSE_MAX=n (0 <= n <= 2^21) sets it. On the H200
	// (2026-12-02, 2^26 int64 of 2^20 values, one run) 346 µs against the sort's 2.64 ms.
	UniqueDenseMax int
	// QuantileSelect is the least row length (elements a result reduces) whose Median,
	// Quantile of one q (Quantile, Quantiles with one q) and their Nan variants
	// (NanMedian, NanQuantile, NanQuantiles with one q) select the elements they need
	// rather than sorting the row. A select costs: a radix select (TopK's,
	// internal/kernel's SelectHist, fused) of the lower position, one histogram pass
	// per byte of the key, each reading the rows' keys once; then one counting pass
	// (internal/kernel's QuantileFlags: the keys up to the selected one and the least
	// above it, from which the upper neighbour follows, and a float row's NaNs and zeros
	// of each sign), which integer keys skip where one element decides (a median of an
	// odd count); the Nan variants of float keys read the keys once more before the
	// select, counting each row's NaNs (the positions depend on them); then one block a
	// row applying the sort path's arithmetic (internal/kernel's QuantileSelect). A
	// float32 median reads the keys 5 times, a NanMedian 6. A sort makes a read and a
	// write of the keys per byte (and the sorted copy's memory); the results are the
	// same, bit for bit. Quantiles of several qs sort. 0: never. Default 2^16, with
	// QuantileSelectTotal. GPU_QUANTILE_SELECT=n (n >= 0) sets it.
	QuantileSelect int
	// QuantileSelectTotal is the least number of elements (the rows times their
	// length) of a call that selects (QuantileSelect): below it the selection's launches
	// (a float32 median 6, a NanMedian 8, a float64 median 10) cost more than the sort's (one row of up to about 1.7 million
	// float32 keys is one cooperative launch). Default 2^20; 0: QuantileSelect alone
	// decides. On an H100 (2026-12-06, BenchmarkQuantileSelect, one process, 100 calls
	// plus a synchronize each, µs, float32, select against sort):
	//
	//	rows x length     median        nanmedian
	//	1 x 2^14          45.8 / 31.5   48.8 / 31.9
	//	1 x 2^16          42.4 / 32.0   55.2 / 35.1
	//	1 x 2^18          42.7 / 35.4   49.7 / 41.1
	//	1 x 2^20          48.0 / 54.6   53.0 / 60.0
	//	1 x 2^22          70.7 / 175    79.0 / 182
	//	1 x 2^24          168 / 448     194 / 457     (Quantile 0.3: 201 / 479)
	//	16 x 2^20         168 / 431     193 / 452
	//	256 x 2^16        185 / 437     213 / 432
	//	4096 x 2^12       428 / 302     454 / 310
	//
	// hence rows of 2^16 or more in calls of 2^20 or more. GPU_QUANTILE_SELECT_TOTAL=n
	// (n >= 0) sets it.
	QuantileSelectTotal int
	// ElementwisePDL launches the elementwise kernels (Eval, EvalInto, Kernel, and the
	// operations made of them) with programmatic dependent launch on CUDA devices of
	// compute capability 9.0+: each kernel starts with griddepcontrol.launch_dependents
	// and griddepcontrol.wait (internal/kernel's Elementwise.GridDep) and is launched
	// with programmatic stream serialization (backend.LaunchConfig.Programmatic), so that
	// its blocks are scheduled while the kernel ahead of it still runs and start the
	// moment it completes, taking the launch latency between dependent kernels (in a
	// graph, too) off the critical path. The results are the same. The trade-off: the
	// waiting blocks hold multiprocessor slots meanwhile, and kernels of other streams
	// may find fewer free. gpubench's raw/graph/launch/10ops/512x1000/cuGraphLaunch/pdl
	// is the driver-only measure of the gain on ten small dependent kernels. Default
	// false; GPU_EW_PDL=1 sets it (0 clears it).
	ElementwisePDL bool
}

// ConcatTuning is the configuration of Concatenate's (and Stack's and Roll's) copies:
// internal/kernel's ConcatRows and the launch join.go makes of it, or the driver's
// copies. Measured on the H200 (2026-12-02, the first kernel with Rows 1, BlocksPerSM 32, memcpy on axis 0):
// two 8192x8192 float32 along axis 1 at 79.5% of the copy bandwidth, two 2^27 float32
// vectors at 92.2%; with Rows 2, 91.3% along axis 1 (the kernel alone 266 µs in Nsight
// Compute: DRAM 82% busy, where the driver's copy keeps it 87% busy), 97.9% on axis 0.
// Environment variables (DefaultTuning):
//
//	GPU_CONCAT_VARIANT=v1|v2        Variant
//	GPU_CONCAT_ROWS=1|2             Rows
//	GPU_CONCAT_BLOCKS_PER_SM=n      BlocksPerSM (0 <= n <= 1024)
//	GPU_CONCAT_ITEMS=4|8            Items
//	GPU_CONCAT_STREAM=1|0           Stream
//	GPU_CONCAT_AXIS0=kernel|memcpy  Axis0Kernel
//	GPU_CONCAT_AXIS1=kernel|memcpy  RowsKernel (memcpy: cuMemcpy2DAsync)
type ConcatTuning struct {
	// Variant selects the kernel (internal/kernel's ConcatRows): 1 (or 0), the first,
	// whose blocks loop over rows r, r + gridDim.y, ... of one chunk of 1024 vectors;
	// 2, the tiled kernel (ConcatRows.Tiles), a block a tile of Rows consecutive rows by
	// Items*256 vectors, the grid (with BlocksPerSM 0) one tile per block in the
	// result's address order, so that the resident blocks stream one contiguous window
	// of each array as a copy does, with 32-bit row offsets (56 registers a thread for
	// the first kernel with Rows 2, 27 for the second with Rows 1 and Items 4, ptxas
	// 13 for sm_90). Default 2: on the H200 (2026-12-02, two 8192x8192 float32 along
	// axis 1, timed in turn in one run) 274 us (92.7% of the copy bandwidth) against
	// the first kernel's 279 us (90.8%, with Rows 2 and BlocksPerSM 32) and the
	// driver's plain copy of the same bytes, 261 us (97.2%).
	Variant int
	// Rows is the rows a block moves per iteration, all loads of them before the
	// stores: 1, or 2 (twice the bytes in flight a thread): rows r and r + gridDim.y
	// with Variant 1, two consecutive rows with Variant 2. Default 1 (2 suits Variant
	// 1).
	Rows int
	// BlocksPerSM sizes the grid's y dimension (the blocks of a row of chunks loop over
	// the rows): about this many blocks a multiprocessor in all; 0: one block for every
	// row, or tile of Rows rows with Variant 2 (up to 65535). Default 0 (32 suits
	// Variant 1).
	BlocksPerSM int
	// Items is the 16-byte (or narrower) vectors a thread of the Variant 2 kernel
	// moves per row, all loads before the stores: 4 (or 0) or 8 (a chunk of 1024 or
	// 2048 vectors). Default 4.
	Items int
	// Stream marks the Variant 2 kernel's loads and stores evict-first
	// (ld.global.cs.nc, st.global.cs): every byte is used once. Default false.
	Stream bool
	// Axis0Kernel copies contiguous inputs joined in one row (axis 0) with the kernel,
	// one launch for up to eight inputs, instead of one driver copy
	// (cuMemcpyDtoDAsync) each. Default false.
	Axis0Kernel bool
	// RowsKernel copies inputs of several rows (joined on any axis but the first) with
	// the kernel, up to eight inputs in one launch, instead of one pitched driver copy
	// (cuMemcpy2DAsync) for each input of 4 MiB or more whose rows are at least 4 KiB
	// (the others always go to the kernel, as do those of a backend without such
	// copies). Default true: on the H200 (2026-12-02, two 8192x8192 float32 arrays
	// along axis 1) the kernel took 286 us (89.6% of the copy bandwidth), the pitched
	// driver copies 651 us (39.3%).
	RowsKernel bool
}

// ScanTuning is the configuration of the CUDA row scan (internal/kernel's ScanTiles
// tuning options).
//
// Variant 2 (the default) takes 32 items per thread for 4-byte accumulators and 16 for
// 8-byte ones (kernel.ScanTiles with Items 32 or 16, stored through the warp staging
// area), variant 1 the first configuration's 16 and 8. Measured on the H200
// (2026-11-30, one run): 1-D CumSum of 2^28 float32 at 2366 GB/s with v2 against 2214
// with v1, of 2^27 int64 at 1666 against 1409 (device copy 4144).
//
// Options (the defaults are Stage on and MinBlocks 5, measured best):
//
//   - Stage (ScanTiles.Stage, where CanStage): each thread scans its elements and
//     stages them in shared memory right after its loads; only the tile's prefix is
//     combined after the look-back (far fewer registers live: 48 with MinBlocks 5,
//     40 without spills with MinBlocks 6, for both v2 kernels of 1-D CumSum).
//   - Lookback n (1, 2, 4, 8; ScanTiles.Lookback): the wide look-back, 32n predecessors
//     per round trip, waiting only up to the nearest inclusive prefix; 0 (the default):
//     windows of 32.
//   - MinBlocks n (ScanTiles.MinBlocks, single-column rows only): .minnctapersm n.
//
// The measurements behind these choices, and four designs measured slower and not
// kept, are in scan.go. Environment variables (DefaultTuning):
//
//	GPU_SCAN_VARIANT=v1|v2|v4   v4: v2 with Stage
//	GPU_SCAN_STAGE=1            Stage with any variant (v1: staged tiles of 4096 float32)
//	GPU_SCAN_LOOKBACK=0|1|2|4|8
//	GPU_SCAN_MINBLOCKS=0..8
type ScanTuning struct {
	Variant   int // 1 or 2
	Stage     bool
	Lookback  int // 0, 1, 2, 4, 8
	MinBlocks int // 0 (none) to 8
}

// defaultTuning is DefaultTuning's value, read from the environment once.
var defaultTuning = tuningFromEnv(os.Getenv)

// DefaultTuning returns the tuning a device starts with: the defaults documented on
// Tuning's fields, with the environment's overrides.
func DefaultTuning() Tuning { return defaultTuning }

// tuningFromEnv returns the defaults with the overrides that getenv gives.
func tuningFromEnv(getenv func(string) string) Tuning {
	t := Tuning{
		ReduceSplitMin:      kernel.DefaultReduceTuning.SplitMin,
		ReduceHalfUnroll:    kernel.DefaultReduceTuning.HalfUnroll,
		ReduceHalfAccs:      kernel.DefaultReduceTuning.HalfAccs,
		ReduceFuse:          true,
		ScanKeepStatus:      true,
		CompactEagerMax:     4 << 20,
		ReadPinned:          true,
		PermuteVariant:      3,
		RandomWaves:         4,
		RandomUniformWaves:  16,
		RandomHalfUniform:   3,
		MatMulTile:          0,
		Scan:                ScanTuning{Variant: 2, Stage: true, MinBlocks: 5},
		Concat:              ConcatTuning{Variant: 2, Rows: 1, BlocksPerSM: 0, Items: 4, RowsKernel: true},
		ScatterVariant:      2,
		SearchVariant:       2,
		SearchShared:        kernel.SearchTreeShared + 1,
		SearchSwizzle:       true,
		SearchHints:         2,
		SearchPair:          true,
		TopKVariant:         3,
		UniqueDenseMax:      1 << 21,
		QuantileSelect:      1 << 16,
		QuantileSelectTotal: 1 << 20,
		GatherVariant:       1,
		PutVariant:          1,
	}
	envVariant(getenv, "GPU_SEARCH_VARIANT", 2, &t.SearchVariant)
	envInt(getenv, "GPU_SEARCH_SHARED", 0, kernel.SearchTreeShared+1, &t.SearchShared)
	envChoice(getenv, "GPU_SEARCH_BLOCK", &t.SearchBlock, 256, 512, 1024)
	envInt(getenv, "GPU_SEARCH_QUERIES", 1, kernel.SearchTreeQueries, &t.SearchQueries)
	envInt(getenv, "GPU_SEARCH_BLOCKS_PER_SM", 1, 64, &t.SearchBlocksPerSM)
	envBool(getenv, "GPU_SEARCH_SWIZZLE", &t.SearchSwizzle)
	table := -1 // (1 to 3 are not taken)
	envInt(getenv, "GPU_SEARCH_TABLE", 0, kernel.SearchTableMaxBits, &table)
	if table == 0 || table >= 4 {
		t.SearchTable = table
	}
	tableGlobal := -1
	envInt(getenv, "GPU_SEARCH_TABLE_GLOBAL", 0, kernel.SearchTableGlobalMaxBits, &tableGlobal)
	if tableGlobal == 0 || tableGlobal >= 4 {
		t.SearchTableGlobal = tableGlobal
	}
	envInt(getenv, "GPU_SEARCH_HINTS", 0, 4, &t.SearchHints)
	envInt(getenv, "GPU_SEARCH_CARVEOUT", 0, 100, &t.SearchCarveout)
	envBool(getenv, "GPU_SEARCH_PAIR", &t.SearchPair)
	envVariant(getenv, "GPU_TOPK_VARIANT", 3, &t.TopKVariant)
	envInt(getenv, "GPU_UNIQUE_DENSE_MAX", 0, 1<<21, &t.UniqueDenseMax)
	envInt(getenv, "GPU_QUANTILE_SELECT", 0, math.MaxInt, &t.QuantileSelect)
	envInt(getenv, "GPU_QUANTILE_SELECT_TOTAL", 0, math.MaxInt, &t.QuantileSelectTotal)
	envChoice(getenv, "GPU_REDUCE_HALF_UNROLL", &t.ReduceHalfUnroll, 1, 2, 4, 8)
	envChoice(getenv, "GPU_REDUCE_HALF_ACCS", &t.ReduceHalfAccs, 1, 2, 4, 8)
	envChoice(getenv, "GPU_CONCAT_ROWS", &t.Concat.Rows, 1, 2)
	envInt(getenv, "GPU_CONCAT_BLOCKS_PER_SM", 0, 1024, &t.Concat.BlocksPerSM)
	envVariant(getenv, "GPU_CONCAT_VARIANT", 2, &t.Concat.Variant)
	envChoice(getenv, "GPU_CONCAT_ITEMS", &t.Concat.Items, 4, 8)
	envBool(getenv, "GPU_CONCAT_STREAM", &t.Concat.Stream)
	switch getenv("GPU_CONCAT_AXIS0") {
	case "kernel":
		t.Concat.Axis0Kernel = true
	case "memcpy":
		t.Concat.Axis0Kernel = false
	}
	switch getenv("GPU_CONCAT_AXIS1") {
	case "kernel":
		t.Concat.RowsKernel = true
	case "memcpy", "memcpy2d":
		t.Concat.RowsKernel = false
	}
	switch getenv("GPU_SCAN_VARIANT") {
	case "v1", "1":
		t.Scan.Variant = 1
	case "v4", "4":
		t.Scan.Stage = true
	}
	envBool(getenv, "GPU_SCAN_STAGE", &t.Scan.Stage)
	envChoice(getenv, "GPU_SCAN_LOOKBACK", &t.Scan.Lookback, 0, 1, 2, 4, 8)
	envInt(getenv, "GPU_SCAN_MINBLOCKS", 0, 8, &t.Scan.MinBlocks)
	envVariant(getenv, "GPU_PERMUTE_VARIANT", 3, &t.PermuteVariant)
	envVariant(getenv, "GPU_SCATTER_VARIANT", 3, &t.ScatterVariant)
	envBool(getenv, "GPU_EW_PDL", &t.ElementwisePDL)
	envBool(getenv, "GPU_GATHER_STREAM", &t.GatherStream)
	envVariant(getenv, "GPU_GATHER_VARIANT", 2, &t.GatherVariant)
	envVariant(getenv, "GPU_PUT_VARIANT", 2, &t.PutVariant)
	envInt(getenv, "GPU_REDUCE_BLOCKS_PER_SM", 0, 64, &t.ReduceBlocksPerSM)
	envInt(getenv, "GPU_RANDOM_WAVES", 1, math.MaxInt, &t.RandomWaves)
	envInt(getenv, "GPU_RANDOM_UNIFORM_WAVES", 1, math.MaxInt, &t.RandomUniformWaves)
	envVariant(getenv, "GPU_RANDOM_HALF_UNIFORM", 3, &t.RandomHalfUniform)
	if getenv("GPU_STAT_EXACT_EXP") == "1" {
		t.StatExactExp = true
	}
	envInt(getenv, "GPU_MATMUL_TILE", 0, len(kernel.MatMulTiles()), &t.MatMulTile)
	return t
}

// validate checks the values a field can take.
func (t Tuning) validate() error {
	s := t.Scan
	switch {
	case t.ReduceSplitMin < 0:
		return fmt.Errorf("gpu: tuning: ReduceSplitMin %d < 0: %w", t.ReduceSplitMin, ErrInvalidValue)
	case t.ReduceBlocksPerSM < 0 || t.ReduceBlocksPerSM > 64:
		return fmt.Errorf("gpu: tuning: ReduceBlocksPerSM %d, want 0 to 64: %w", t.ReduceBlocksPerSM, ErrInvalidValue)
	case !pow2upTo8(t.ReduceHalfUnroll) || !pow2upTo8(t.ReduceHalfAccs):
		return fmt.Errorf("gpu: tuning: ReduceHalfUnroll %d, ReduceHalfAccs %d: want 1, 2, 4 or 8: %w", t.ReduceHalfUnroll, t.ReduceHalfAccs, ErrInvalidValue)
	case s.Variant != 1 && s.Variant != 2:
		return fmt.Errorf("gpu: tuning: scan variant %d, want 1 or 2: %w", s.Variant, ErrInvalidValue)
	case s.Lookback != 0 && s.Lookback != 1 && s.Lookback != 2 && s.Lookback != 4 && s.Lookback != 8:
		return fmt.Errorf("gpu: tuning: scan look-back %d, want 0, 1, 2, 4 or 8: %w", s.Lookback, ErrInvalidValue)
	case s.MinBlocks < 0 || s.MinBlocks > 8:
		return fmt.Errorf("gpu: tuning: scan MinBlocks %d, want 0 to 8: %w", s.MinBlocks, ErrInvalidValue)
	case t.CompactEagerMax < 0:
		return fmt.Errorf("gpu: tuning: CompactEagerMax %d < 0: %w", t.CompactEagerMax, ErrInvalidValue)
	case t.PermuteVariant < 1 || t.PermuteVariant > 3:
		return fmt.Errorf("gpu: tuning: permute variant %d, want 1, 2 or 3: %w", t.PermuteVariant, ErrInvalidValue)
	case t.ScatterVariant < 1 || t.ScatterVariant > 3:
		return fmt.Errorf("gpu: tuning: scatter variant %d, want 1, 2 or 3: %w", t.ScatterVariant, ErrInvalidValue)
	case t.GatherVariant < 0 || t.GatherVariant > 2:
		return fmt.Errorf("gpu: tuning: gather variant %d, want 1 or 2: %w", t.GatherVariant, ErrInvalidValue)
	case t.PutVariant < 0 || t.PutVariant > 2:
		return fmt.Errorf("gpu: tuning: put variant %d, want 1 or 2: %w", t.PutVariant, ErrInvalidValue)
	case t.RandomWaves < 1:
		return fmt.Errorf("gpu: tuning: RandomWaves %d < 1: %w", t.RandomWaves, ErrInvalidValue)
	case t.RandomUniformWaves < 1:
		return fmt.Errorf("gpu: tuning: RandomUniformWaves %d < 1: %w", t.RandomUniformWaves, ErrInvalidValue)
	case t.RandomHalfUniform < 1 || t.RandomHalfUniform > 3:
		return fmt.Errorf("gpu: tuning: RandomHalfUniform %d, want 1, 2 or 3: %w", t.RandomHalfUniform, ErrInvalidValue)
	case t.Concat.Rows != 1 && t.Concat.Rows != 2:
		return fmt.Errorf("gpu: tuning: concat rows %d, want 1 or 2: %w", t.Concat.Rows, ErrInvalidValue)
	case t.Concat.BlocksPerSM < 0 || t.Concat.BlocksPerSM > 1024:
		return fmt.Errorf("gpu: tuning: concat BlocksPerSM %d, want 0 to 1024: %w", t.Concat.BlocksPerSM, ErrInvalidValue)
	case t.Concat.Variant < 0 || t.Concat.Variant > 2:
		return fmt.Errorf("gpu: tuning: concat variant %d, want 1 or 2: %w", t.Concat.Variant, ErrInvalidValue)
	case t.Concat.Items != 0 && t.Concat.Items != 4 && t.Concat.Items != 8:
		return fmt.Errorf("gpu: tuning: concat items %d, want 4 or 8: %w", t.Concat.Items, ErrInvalidValue)
	case t.SearchVariant < 1 || t.SearchVariant > 2:
		return fmt.Errorf("gpu: tuning: search variant %d, want 1 or 2: %w", t.SearchVariant, ErrInvalidValue)
	case t.SearchShared < 0 || t.SearchShared > kernel.SearchTreeShared+1:
		return fmt.Errorf("gpu: tuning: SearchShared %d, want 0 to %d: %w", t.SearchShared, kernel.SearchTreeShared+1, ErrInvalidValue)
	case t.SearchBlock != 0 && t.SearchBlock != 256 && t.SearchBlock != 512 && t.SearchBlock != 1024:
		return fmt.Errorf("gpu: tuning: SearchBlock %d, want 0, 256, 512 or 1024: %w", t.SearchBlock, ErrInvalidValue)
	case t.SearchQueries < 0 || t.SearchQueries > kernel.SearchTreeQueries:
		return fmt.Errorf("gpu: tuning: SearchQueries %d, want 0 to %d: %w", t.SearchQueries, kernel.SearchTreeQueries, ErrInvalidValue)
	case t.SearchBlocksPerSM < 0 || t.SearchBlocksPerSM > 64:
		return fmt.Errorf("gpu: tuning: SearchBlocksPerSM %d, want 0 to 64: %w", t.SearchBlocksPerSM, ErrInvalidValue)
	case t.SearchTable != 0 && (t.SearchTable < 4 || t.SearchTable > kernel.SearchTableMaxBits):
		return fmt.Errorf("gpu: tuning: SearchTable %d, want 0 or 4 to %d: %w", t.SearchTable, kernel.SearchTableMaxBits, ErrInvalidValue)
	case t.SearchTableGlobal != 0 && (t.SearchTableGlobal < 4 || t.SearchTableGlobal > kernel.SearchTableGlobalMaxBits):
		return fmt.Errorf("gpu: tuning: SearchTableGlobal %d, want 0 or 4 to %d: %w", t.SearchTableGlobal, kernel.SearchTableGlobalMaxBits, ErrInvalidValue)
	case t.SearchCarveout < 0 || t.SearchCarveout > 100:
		return fmt.Errorf("gpu: tuning: SearchCarveout %d, want 0 to 100: %w", t.SearchCarveout, ErrInvalidValue)
	case t.SearchHints < 0 || t.SearchHints > 4:
		return fmt.Errorf("gpu: tuning: SearchHints %d, want 0 to 4: %w", t.SearchHints, ErrInvalidValue)
	case t.TopKVariant < 1 || t.TopKVariant > 3:
		return fmt.Errorf("gpu: tuning: top-k variant %d, want 1, 2 or 3: %w", t.TopKVariant, ErrInvalidValue)
	case t.UniqueDenseMax < 0:
		return fmt.Errorf("gpu: tuning: UniqueDenseMax %d < 0: %w", t.UniqueDenseMax, ErrInvalidValue)
	case t.QuantileSelect < 0:
		return fmt.Errorf("gpu: tuning: QuantileSelect %d < 0: %w", t.QuantileSelect, ErrInvalidValue)
	case t.QuantileSelectTotal < 0:
		return fmt.Errorf("gpu: tuning: QuantileSelectTotal %d < 0: %w", t.QuantileSelectTotal, ErrInvalidValue)
	case t.MatMulTile < 0 || t.MatMulTile > len(kernel.MatMulTiles()):
		return fmt.Errorf("gpu: tuning: MatMulTile %d, want 0 to %d: %w", t.MatMulTile, len(kernel.MatMulTiles()), ErrInvalidValue)
	}
	return nil
}

func pow2upTo8(n int) bool { return n == 1 || n == 2 || n == 4 || n == 8 }

// reducePlan returns the reductions' planning tuning (kernel.PlanReduce's).
func (t *Tuning) reducePlan() kernel.ReduceTuning {
	return kernel.ReduceTuning{SplitMin: t.ReduceSplitMin, HalfUnroll: t.ReduceHalfUnroll, HalfAccs: t.ReduceHalfAccs}
}

// Tuning returns d's tuning (a zero Tuning for a nil device).
func (d *Device) Tuning() Tuning {
	if d.isNil() {
		return Tuning{}
	}
	return *d.tuning()
}

// SetTuning replaces d's tuning with t and returns the previous one. Operations that
// have started keep the tuning they read. A value a field can't take is an error
// wrapping ErrInvalidValue, and nothing changes.
func (d *Device) SetTuning(t Tuning) (Tuning, error) {
	if d.isNil() {
		return Tuning{}, errNilDevice
	}
	if err := t.validate(); err != nil {
		return d.Tuning(), err
	}
	return *d.tune.Swap(&t), nil
}

// tuning returns d's current tuning (never to be modified).
func (d *Device) tuning() *Tuning {
	if t := d.tune.Load(); t != nil {
		return t
	}
	return &defaultTuning
}

// envVariant sets *v to i when the variable is "vi" or "i", for i from 1 to n; any other
// value leaves it.
func envVariant(getenv func(string) string, name string, n int, v *int) {
	s := getenv(name)
	for i := 1; i <= n; i++ {
		if s == strconv.Itoa(i) || s == "v"+strconv.Itoa(i) {
			*v = i
		}
	}
}

// envChoice sets *v to the variable's value when it is one of choices, written as
// strconv.Itoa writes it; any other value leaves it.
func envChoice(getenv func(string) string, name string, v *int, choices ...int) {
	s := getenv(name)
	for _, c := range choices {
		if s == strconv.Itoa(c) {
			*v = c
		}
	}
}

// envInt sets *v to the variable's value when strconv.Atoi reads it as a number from lo
// to hi; any other value leaves it.
func envInt(getenv func(string) string, name string, lo, hi int, v *int) {
	if n, err := strconv.Atoi(getenv(name)); err == nil && n >= lo && n <= hi {
		*v = n
	}
}

// envBool sets *b from the variable: "1", "true" or "on" sets it, "0", "false" or "off"
// clears it, any other value leaves it.
func envBool(getenv func(string) string, name string, b *bool) {
	switch getenv(name) {
	case "1", "true", "on":
		*b = true
	case "0", "false", "off":
		*b = false
	}
}

// ---- the process-wide settings ----

func init() { startupFromEnv(os.Getenv) }

// startupFromEnv sets the process-wide start-up settings from the variables getenv
// gives (the second part of Tuning's table).
func startupFromEnv(getenv func(string) string) {
	if v, err := time.ParseDuration(getenv("GPU_SPIN_YIELD")); err == nil && v >= 0 {
		spinYield = v
	}
	if v, err := time.ParseDuration(getenv("GPU_WAIT_SPIN")); err == nil && v != 0 {
		defaultSpin = v
		DefaultWaitPolicy.Spin = v
	}
	raceMode = getenv("GPU_RACECHECK")
	kernel.LiftRegCap = getenv("GPU_KERNEL_REGCAP") != "ptxas"
	regCapEnv(getenv, "GPU_COMPACT_REGCAP", &kernel.CompactRegCap)
	regCapEnv(getenv, "GPU_SCAN_REGCAP", &kernel.ScanRegCap)
	c := sortConfigFromEnv(getenv)
	sortCfg.Store(&c)
}

// regCapEnv sets a kernel family's register cap from the variable name: ptxas (0: no
// .maxnreg), lift (-1: blockAttrs' cap) or a count from 24 to 128; other values leave
// it.
func regCapEnv(getenv func(string) string, name string, cap *int) {
	switch v := getenv(name); v {
	case "ptxas":
		*cap = 0
	case "lift":
		*cap = -1
	default:
		if n, err := strconv.Atoi(v); err == nil && n >= 24 && n <= 128 {
			*cap = n
		}
	}
}

// sortConfigFromEnv returns the sort kernels' default configuration with the
// overrides getenv gives: GPU_SORT_ITEMS (pass items for keys of up to 4 bytes, 4 to
// 28; default 16: tiles of 4096 keys), GPU_SORT_ITEMS8 (4 to 16; default 12),
// GPU_SORT_LOOKBACK (1 to 32: the look-back window, predecessors read a round; default
// 4), GPU_SORT_LOOKBACK_VALS (the same for passes that carry indices or payloads;
// default 2; 0: GPU_SORT_LOOKBACK's), GPU_SORT_LONG_LOOKBACK8 (the same for the long
// rows' passes of 8-byte keys alone; default 2; 0: GPU_SORT_LOOKBACK's; on an H100,
// 2026-12-07, processes of each in turn: GPU_SORT_LOOKBACK=2, every pass of keys
// alone, took 0.983x the time of 4 for a sort of 2^27 float64 keys but 1.014x and
// 1.018x for 2^28 float32 and int32 keys (GPU_SORT_LOOKBACK=8: 1.013x, 1.006x,
// 1.006x); GPU_SORT_LONG_LOOKBACK8=0 then took 1.018x the time of the default for
// the float64 sort, 0.998x for float32's:
// docs/benchmarks/h100-2026-12-07-persistent.txt), GPU_SORT_MINBLOCKS (0 to 8:
// .minnctapersm of the passes, which caps their registers; default 4: with the lean
// look-back ptxas 13.0 fits those passes of every key type, with indices or payloads,
// in 64 registers without spills; 0: no cap).
// GPU_SORT_LONG_ITEMS, GPU_SORT_LONG_ITEMS8, GPU_SORT_LONG_ITEMS8_VALS and
// GPU_SORT_LONG_MINBLOCKS (defaults 48, 28, 32 and 2; items up to
// kernel.SortPassMaxItems, tiles past 48 KiB of shared memory keeping their keys or
// values in dynamic shared memory; 0 items: no long configuration for that key width;
// ITEMS8_VALS replaces ITEMS8 in the passes that carry values, 0: ITEMS8's;
// LONG_MINBLOCKS 0: no cap, the wave rule counting one block) take their places for
// long rows (sortPass:
// sortLongRowTiles, sortConfig.LongWaves, 4 waves, set by tests only). The pass is
// instruction-bound (131 instructions a key at 16 items, the ALU pipe 72% busy, H200,
// 2026-12-02), and larger tiles spend fewer of them a key on the look-back and the
// per-tile steps. On the H200 (2026-12-03, one process each in turn, ms):
//
//	                                 16 items, 4 blocks   24, 3       28, 3
//	sort of 2^28 float32                  7.74-7.78        6.46-6.48   6.16-6.18
//	sort of 2^28 int32                    7.71             6.50        6.04
//	argsort of 2^28 float32               9.92-9.93        8.50-8.51   8.07
//	argsort of 2^28 int32                 10.1             8.51-8.55   8.17
//	sort of 16384x16384 rows              6.15-6.16        6.42-6.44   7.17-7.18
//
// with 16 items under 3 blocks 8.09 and 6.56 ms (the first and last rows), and for
// 8-byte keys 12 items under 4 blocks against 16 under 3: sort of 2^27 float64
// 10.7 / 9.62-9.67 ms, argsort 13.2-13.3 / 12.7. ptxas 11.8 spills 8 to 16 bytes in
// passes of 24 items under 3 blocks; the times above are what the driver's compiler
// (CUDA 13) made of them, at a window of 16. The 28-item passes (the defaults then)
// spilled too: CUDA 13's ptxas 72-84 bytes without values, 8-12 with indices at the
// default windows (64-76 and 4 at a window of 16; ptxas 11.8: 84-92 and 8-12); they
// were still the fastest measured then. The figures are the H200's: a GPU with less
// shared memory a multiprocessor (100 KiB on sm_86/89) fits fewer of these blocks than
// MinBlocks asks, and there the passes take the blocks that fit (sortResidentBlocks:
// for the register cap and the long rows' wave rule; not measured). Four blocks for the
// long passes (GPU_SORT_LONG_MINBLOCKS=4) took longer on an H100 (2026-12-06, four
// processes each in turn): sort of 2^28 float32 1.11x, int32 1.14x, argsort
// 1.28-1.29x, float64 1.02x, argsort 1.06x; so did it with the ranks packed three a register, which
// ptxas 13.0 fits in 64 registers without spills for float32 keys alone (1.02x,
// 1.00x, 1.21-1.22x, 0.99x, 1.03x; packing alone 1.00-1.035x, not kept:
// docs/benchmarks/h100-2026-12-06-sort-pass.txt). Larger tiles under two blocks,
// their keys or values past 48 KiB in dynamic shared memory, took less than 28 and 16
// items under three (H100, 2026-12-07, two processes each in turn, medians as ratios
// to those of 28 and 16 under three; docs/benchmarks/h100-2026-12-07-long-tiles.txt):
//
//	items of 4-byte / 8-byte keys  28/16, 3 blocks  28/16   32/24   40/28   48/32
//	sort of 2^28 float32           4.90 ms          1.126   1.072   1.013   0.980
//	sort of 2^28 int32             5.22 ms          1.038   0.989   0.934   0.897
//	argsort of 2^28 float32        8.87 ms          1.047   1.019   0.906   0.886
//	argsort of 2^28 int32          9.10 ms          1.013   1.008   0.897   0.884
//	sort of 2^27 float64           8.68 ms          0.996   0.931   0.929   0.953
//	argsort of 2^27 float64        13.8 ms          0.961   0.873   0.860   0.845
//
// (the rows of 16384x16384, which take the base passes, 1.006-1.015x), hence 48 and 32
// under two: ptxas 11.8 fits them in 128 registers without spills for float32 and
// float64 keys, alone or with indices (int32 keys alone spill 16 bytes, int64 4 with
// the prefetch; CUDA 13's ptxas: none for float32 and float64 keys alone, 8 bytes for
// 4-byte keys with indices, 16 for int32 keys alone, 4 for int64 without the
// prefetch). A second H100 run (docs/benchmarks/h100-2026-12-07-defaults.txt) gave
// the same ratios, and around them 28 items of 8-byte keys 0.977x (sort) and 1.021x
// (argsort), 56 of 4-byte keys (up to kernel.SortPassMaxItems) 0.999-1.016x: hence
// 28 items for 8-byte keys alone and 32 for the passes with values
// (GPU_SORT_LONG_ITEMS8_VALS). Smaller windows then took less
// (H200, 2026-12-03, one process each in turn, two or three rounds, ms):
//
//	window                         16         8          4          2          1
//	sort of 2^28 float32          6.22-6.24  6.09-6.11  6.08-6.10  6.17-6.18  6.51
//	sort of 2^28 int32            6.12-6.13  5.95-5.98  5.85-5.87  5.93-5.94  6.23-6.24
//	argsort of 2^28 float32       8.20-8.21  7.98-8.01  7.99-8.01  7.94-7.95  8.12-8.13
//	argsort of 2^28 int32         8.30       8.12-8.13  8.05-8.07  7.97      8.09-8.14
//	sort of 2^27 float64          9.76-9.80  9.17-9.18  8.95-8.97  9.00-9.02  9.55-9.56
//	argsort of 2^27 float64       12.9       12.2       12.0       11.3      11.5
//	sort of 16384x16384 rows      6.19       5.96       5.88-5.89  5.84-5.85
//
// hence 4 for the keys alone and 2 with values.
// Also GPU_SORT_RANK (the ranking's peer search in every pass: ballot, eight
// ballots, the default for the passes with values; ballot3, the same ANDed three at
// a time, the default for the passes of keys alone; match, match.any.sync; or,
// shared-memory atomic OR; GPU_SORT_MATCH=1 is match) and GPU_SORT_RANK_ALONE (the
// same for the passes of keys alone, after GPU_SORT_RANK). On an H100 (2026-12-07,
// two processes of each in turn, docs/benchmarks/h100-2026-12-07-prmt.txt) ballot3
// in every pass took 0.999x the time of ballot for the sort of 2^28 float32 keys,
// 0.996x for int32, 0.996x for 2^27 float64 and 0.985x for the rows of 16384x16384,
// but 1.001x for the argsorts of 2^28 float32 and int32 and 1.038x for 2^27
// float64's (whose 32-item pass spills 64 bytes under ballot3, ptxas 11.8 and 13.0):
// hence ballot3 for keys alone only. GPU_SORT_LOADFENCE=0 (let ptxas schedule the key loads
// into the ranking: the default makes them all arrive first), GPU_SORT_SMALL_ITEMS (0
// to 16: pass items of a sort of fewer tiles (of Items4 or Items8) than two per
// multiprocessor, whose blocks all run at once; default 8: with 16 items the
// 512000-key sort's 125 tiles of 4096 keys kept 12% of the H200's warps busy; 0 keeps
// Items4/Items8), GPU_SORT_SMALL_LOOKBACK (1 to 32: the look-back window of those
// sorts; default 8: 512000 float32 keys plus a synchronize took 62.7-69.7 µs against
// 71.9-76.1 at 32, the median of three processes each in turn, H200, 2026-12-03; it
// applies with values too, though small argsorts are not measured at other windows; 0:
// GPU_SORT_LOOKBACK's, or GPU_SORT_LOOKBACK_VALS's with values),
// GPU_SORT_LOOKBACK_LEAN=0 (the first look-back: windows doubling from one predecessor
// with word-by-word stop logic, 71 of the 179 instructions a warp spent per key in the
// H200's profile of 2^28 float32 keys, 2026-12-02; default 1: sortGen.lookbackLean),
// GPU_SORT_HIST_LEAN=0 (the first histogram kernel: unpadded copies, whose lanes
// counting one digit meet on one bank; default 1: RadixHist.Lean), GPU_SORT_PDL=1
// (the plan and the passes with programmatic dependent launch on compute capability
// 9.0+: sortConfig.PDL; default 0: on the H200, 2026-12-03, two processes each way in
// turn, no sort row moved; 512000 keys plus a synchronize took 64.1 and 63.8 µs
// without it, 65.9 and 61.9 µs with it: the passes' look-back sets that time, not the
// launches between them), GPU_SORT_FUSED (0 to 2^24: the most keys of a one-row sort
// of keys alone that runs as one cooperative launch, sortConfig.FusedMax, where its
// tiles fit one wave; 0: never; default 2^24: the tiles decide), GPU_SORT_FUSED_ITEMS
// (4 to 28: the largest tiles' keys a thread, sortConfig.FusedItems4, where
// GPU_SORT_FUSED_BLOCKS blocks' tiles of Items4 keys don't hold a row of keys of up to
// 4 bytes; at most Items4: no larger tiles; default 26: on the H200 two blocks a
// multiprocessor hold 1,757,184 keys, and ptxas 13.0 spills 8 bytes;
// 2026-12-04, BenchmarkSortFusedLarge, µs, float32 keys plus a synchronize: 1,250,000
// keys 55.6-58.0 fused (19 items) against 84.3-90.9 through the passes, 1,500,000
// 61.0-64.8 (23) against 88.4-88.6, 1,750,000 68.4 (26) against 109.4-111.5; 2^20 keys
// took the default 16 items under two blocks either way, 51.5-55.0 against 103.9-105.1;
// sizes up to two blocks' tiles of Items4 keep those), GPU_SORT_FUSED_BLOCKS (1 or 2: the most
// blocks a multiprocessor it takes, the fewest that hold the row; default 2: two at
// every size, with the smallest tiles that hold the row, took longer on the H200,
// 2026-12-04: 512000 float32 keys 39.2-40.1 µs of kernel in Nsight Compute against
// 38.0-38.6, 100,000 keys plus a synchronize 38.1 against 31.9 µs),
// GPU_SORT_FUSED_SPLIT (arrive at a pass's counts barrier when they are published,
// wait once the tile is staged: sortConfig.FusedSplit; default on),
// GPU_SORT_FUSED_EARLY (rank pass 0 between step 1's arrival and wait:
// sortConfig.FusedEarly; default on) and GPU_SORT_FUSED_RANK (ballot or or: the
// ranking's peer search, sortConfig.FusedRank; default or, the atomic-OR match words,
// where the passes keep their ballots: GPU_SORT_RANK, GPU_SORT_RANK_ALONE). On the H200 (2026-12-03, one process,
// 1000 calls each plus a synchronize, BenchmarkSortFused, µs; the machine's figures
// move by a few µs from run to run):
//
//	float32 keys                    100,000   262,144   512,000   1,048,576
//	the passes (FUSED=0)              50.2      57.4      68.4       115.8
//	fused (the defaults)              34.1      38.1      45.3        57.2
//	GPU_SORT_FUSED_RANK=ballot        32.1      37.2      50.0        57.7
//	GPU_SORT_FUSED_EARLY=off          32.2      39.6      48.6        61.1
//
// and gpubench's 512000 + synchronize 41.2-43.5 µs against 61.3-70.4 for the passes
// (four rounds in turn); in an earlier run the ballot ranking took 44.2-44.4 µs
// against 40.4-43.7 with the default (docs/benchmarks/h200-2026-12-03-session6.txt).
// The fused kernel's sums are stream scratch that it leaves zero, with no memset a
// call (3-4 µs of that row: 41.4-45.5 against 44.9-49.6 µs, builds in turn).
// GPU_SORT_FULL_TILES (off, long, narrow or all: which passes give full tiles, every
// tile but a row's partial last one, a copy of the key loads and the ranking without
// the per-item bounds tests: none, the long rows', those and every pass of keys and
// values of at most 4 bytes, or every pass; sortConfig.FullTiles and
// RadixPass.FullTiles; default narrow).
// ptxas 11.8 for sm_90 drops the long rows' 28-item passes' spills with it (keys of
// up to 4 bytes: 84-92 bytes without values, 8-12 with indices, to none), and the SASS
// a full tile of float32 keys alone runs through is 2413 instructions against the
// whole default kernel's 2663 (static counts of the kernels' straight-line code; the
// full copy also skips the ballot of the items' validity); but 8-byte keys' 12-item
// passes under four blocks spill more (24-56 bytes against 0-8). On the H200
// (2026-12-05, gpubench, six processes of each in turn, medians, ms, off against
// long): sort of 2^28 float32 5.83 against 5.11, int32 5.79 against 5.05, argsort
// 7.84 against 7.40 (int32 8.02 against 7.66), sort of 2^27 float64 8.64 against 8.09,
// argsort 11.22 against 10.94; BenchmarkSortTuned at 2^28 float32, three runs, sort
// 6.10-6.25 against 5.31-5.56 (all: 5.31-5.52), argsort 8.09-8.14 against 7.59-7.68.
// Below the long rows (BenchmarkSortFullTilesMid, 2026-12-05, two runs, µs, long
// against all): float32 sorts of 2^21, 2^22, 2^23 and 2^24 keys 124-124 against
// 113-118, 191-194 against 168-175, 303-309 against 286-286, 426-439 against
// 437-541; argsorts 146-148 against 131-140, 246-246 against 223-234, 397-624
// against 361-372, 574-585 against 573-582; but float64 argsorts of 2^23 and 2^24
// 839-844 against 834-871 and 1669-1682 against 1722-1757 (sorts 656-659 against
// 662-667, 1258-1270 against 1239-1246): hence narrow. gpubench's sort of the rows of
// 16384x16384 float32 (rows below the long passes) took 5.74 ms without full tiles and
// 5.26 ms with narrow, in two runs of that day.
// GPU_SORT_FUSED_FULL (on: a fused sort whose row is a whole number of its tiles, as
// 512000 keys are of 4096, leaves out the bounds tests, sortConfig.FusedFull and
// RadixFused.Full; default off) cuts that float32 kernel's static SASS from 2960
// instructions to 2424 (ptxas 11.8, sm_90), and at 26 items a thread from 4296 to
// 3312, its 8 bytes of spills gone; but on the H200 (2026-12-05) no row moved past
// the machine's noise: BenchmarkSortFused, three runs, µs, off against on, 262,144
// keys 32.4-32.7 against 33.4-35.3, 512,000 38.8-42.0 against 37.5-37.8, 1,048,576
// 51.2-52.6 against 50.9-51.9; gpubench's 512000 + synchronize, ten processes of
// each in turn, medians 38.4 against 37.7 µs (new/old 0.98, 95% interval 0.94-1.01).
// GPU_SORT_SECTORS has the passes write their keys and values so that each store of a
// warp covers whole 32-byte sectors but at the runs' ends (sortConfig.Sectors and
// RadixPass.Sectors): off; values, the default: the passes that carry values
// (argsorts' and SortByKey's) of keys of up to 4 bytes; on or all: every pass. On an
// H100 (2026-12-06, gpubench, two processes of each in turn) the argsorts of 2^28
// float32 and int32 took 0.980x and 0.982x the time without, 2^27 float64's 1.026x
// (so not for 8-byte keys); on every pass it made the sorts of keys alone slower
// (2^28 float32 1.062x, int32 1.042x, rows of 16384x16384 1.061x, 2^27 float64
// 1.070x): a middle pass of the int32 sort wrote 46.1 M sectors against 51.8 M but
// executed 831 M warp instructions against 701 M. Partly written sectors cost a whole
// sort little: BenchmarkSortRunsAligned sorts 2^26 int32 keys whose every pass writes
// runs of 32 keys on lines of their own in 1.468 ms, the same keys shuffled in 1.526
// ms (1.04x). The passes are bound by their instructions and latencies, not by their
// writes (docs/benchmarks/h100-2026-12-06-sort-pass.txt, part 5).
// GPU_SORT_PREFETCH (0 to 64 tiles a multiprocessor; default 1) has each block of a
// pass of keys alone ask L2 (prefetch.global.L2, a 128-byte line a thread) for the
// keys of the tile that many tiles a multiprocessor after its own, which a block takes
// about that many over the blocks a multiprocessor waves later (sortConfig.Prefetch,
// RadixPass.Prefetch); GPU_SORT_PREFETCH_KV (default 0) the same for the passes with
// values; GPU_SORT_PREFETCH_VALS (default off) has those ask for their own tile's
// values, which they load once the keys are written (sortConfig.PrefetchVals). On an
// H100 (2026-12-06, one build under each setting in turn, medians, new/old):
//
//	                               PREFETCH=1  PREFETCH=2  PREFETCH=3  PREFETCH=6  PREFETCH_VALS
//	sort of 2^28 float32              0.947       0.952       1.03        1.16        1.00
//	sort of 2^28 int32                0.975       0.99        1.04        1.15        1.00
//	sort of 2^27 float64              0.974       1.000       1.11        1.20        1.00
//	sort of 16384x16384 rows          0.996       0.996       1.00        1.08        1.00
//	argsort of 2^28 float32           1.005       1.07        1.11        1.11        1.05
//	argsort of 2^28 int32             1.000       1.07        1.11        1.12        1.08
//	argsort of 2^27 float64           1.000       1.06        1.14        1.15        1.04
//
// (the build measured applied GPU_SORT_PREFETCH to every pass: its argsort rows are
// what GPU_SORT_PREFETCH_KV does now; four processes of each for PREFETCH=1 and 2 on
// the sorts, three on the argsorts at 1, two for the rest:
// docs/benchmarks/h100-2026-12-06-sort-pass.txt, part 7). The keys
// of the tile a third of a wave ahead (one tile a multiprocessor at three blocks a
// multiprocessor) arrive in time and stay in L2; farther ahead they compete with the
// passes' own traffic, and the argsorts' passes, moving twice the bytes, gain nothing.
// Half a tile, a quarter and one and a half a multiprocessor ahead did the same as one
// or slightly worse (the same H100, three processes each: part 8 of that file).
// GPU_SORT_PRMT (default on) has the passes of keys of up to 4 bytes take each key's
// digit by one prmt rather than a shift and a mask (sortConfig.Prmt, RadixPass.Prmt):
// ptxas 11.8 (sm_90) gives the long passes of float32 keys alone 1.5% fewer
// instructions, of int32 keys 3.2%, of int32 keys with indices 1.3% (under the
// ballot ranking; int32 keys alone under ballot3 about 0.9%); for 8-byte keys
// (a word picked first) it gave more, with spills, so they keep the shift. On an H100
// (2026-12-07, two processes each way in turn, docs/benchmarks/h100-2026-12-07-prmt.txt)
// the shift and mask took 1.002x the time (sort of 2^28 float32), 1.006x (int32),
// 1.007x (rows of 16384x16384) and 1.000x (the argsorts).
func sortConfigFromEnv(getenv func(string) string) sortConfig {
	c := sortConfig{Items4: 16, Items8: 12, Block4: 16, Block8: 12, Lookback: 4, LookbackVals: 2, HistItems: 8, SegMax: kernel.SortSegmentMax,
		LoadFence: true, MinBlocks: 4, SmallItems: 8, SmallLookback: 8, LeanLookback: true, HistLean: true,
		LongItems4: 48, LongItems8: 28, LongItems8Vals: 32, LongMinBlocks: 2, LongLookback8: 2, LongWaves: 4, FusedMax: 1 << 24, FusedItems4: 26, FusedBlocks: 2, FusedSplit: true,
		FusedEarly: true, FusedRank: kernel.RankAtomicOr, FullTiles: sortFullNarrow, Sectors: sortSectorsValues, Prefetch: 1, Prmt: true, RankAlone: kernel.RankBallot3}
	envInt(getenv, "GPU_SORT_FUSED", 0, 1<<24, &c.FusedMax)
	envInt(getenv, "GPU_SORT_FUSED_ITEMS", 4, 28, &c.FusedItems4)
	envInt(getenv, "GPU_SORT_FUSED_BLOCKS", 1, 2, &c.FusedBlocks)
	envBool(getenv, "GPU_SORT_FUSED_SPLIT", &c.FusedSplit)
	envBool(getenv, "GPU_SORT_FUSED_EARLY", &c.FusedEarly)
	envBool(getenv, "GPU_SORT_FUSED_FULL", &c.FusedFull)
	envInt(getenv, "GPU_SORT_ITEMS", 4, 28, &c.Items4)
	envInt(getenv, "GPU_SORT_ITEMS8", 4, 16, &c.Items8)
	envChoice(getenv, "GPU_SORT_LOOKBACK", &c.Lookback, 1, 2, 4, 8, 16, 32)
	envChoice(getenv, "GPU_SORT_LOOKBACK_VALS", &c.LookbackVals, 0, 1, 2, 4, 8, 16, 32)
	envChoice(getenv, "GPU_SORT_LONG_LOOKBACK8", &c.LongLookback8, 0, 1, 2, 4, 8, 16, 32)
	envInt(getenv, "GPU_SORT_MINBLOCKS", 0, 8, &c.MinBlocks)
	var match bool
	envBool(getenv, "GPU_SORT_MATCH", &match)
	if match {
		c.Rank, c.RankAlone = kernel.RankMatch, kernel.RankMatch
	}
	envInt(getenv, "GPU_SORT_SMALL_ITEMS", 0, 16, &c.SmallItems)
	envBool(getenv, "GPU_SORT_LOADFENCE", &c.LoadFence)
	envChoice(getenv, "GPU_SORT_SMALL_LOOKBACK", &c.SmallLookback, 0, 1, 2, 4, 8, 16, 32)
	envBool(getenv, "GPU_SORT_LOOKBACK_LEAN", &c.LeanLookback)
	envBool(getenv, "GPU_SORT_HIST_LEAN", &c.HistLean)
	envBool(getenv, "GPU_SORT_PDL", &c.PDL)
	envInt(getenv, "GPU_SORT_PREFETCH", 0, 64, &c.Prefetch)
	envInt(getenv, "GPU_SORT_PREFETCH_KV", 0, 64, &c.PrefetchKV)
	envBool(getenv, "GPU_SORT_PREFETCH_VALS", &c.PrefetchVals)
	envBool(getenv, "GPU_SORT_PRMT", &c.Prmt)
	switch getenv("GPU_SORT_SECTORS") {
	case "off":
		c.Sectors = sortSectorsOff
	case "values":
		c.Sectors = sortSectorsValues
	case "on", "all":
		c.Sectors = sortSectorsAll
	}
	for _, v := range []struct {
		name string
		hi   int
		p    *int
	}{{"GPU_SORT_LONG_ITEMS", kernel.SortPassMaxItems, &c.LongItems4}, {"GPU_SORT_LONG_ITEMS8", kernel.SortPassMaxItems, &c.LongItems8},
		{"GPU_SORT_LONG_ITEMS8_VALS", kernel.SortPassMaxItems, &c.LongItems8Vals}} {
		n := -1 // (0 turns the long configuration off; 1 to 3 are not taken)
		envInt(getenv, v.name, 0, v.hi, &n)
		if n == 0 || n >= 4 {
			*v.p = n
		}
	}
	envInt(getenv, "GPU_SORT_LONG_MINBLOCKS", 0, 8, &c.LongMinBlocks)
	ranks := map[string]kernel.SortRank{"ballot": kernel.RankBallot, "ballot3": kernel.RankBallot3, "match": kernel.RankMatch, "or": kernel.RankAtomicOr}
	if r, ok := ranks[getenv("GPU_SORT_RANK")]; ok {
		c.Rank, c.RankAlone = r, r
	}
	if r, ok := ranks[getenv("GPU_SORT_RANK_ALONE")]; ok {
		c.RankAlone = r
	}
	switch getenv("GPU_SORT_FUSED_RANK") {
	case "ballot":
		c.FusedRank = kernel.RankBallot
	case "or":
		c.FusedRank = kernel.RankAtomicOr
	}
	switch getenv("GPU_SORT_FULL_TILES") {
	case "off":
		c.FullTiles = sortFullNone
	case "long":
		c.FullTiles = sortFullLong
	case "all":
		c.FullTiles = sortFullAll
	case "narrow":
		c.FullTiles = sortFullNarrow
	}
	return c
}

// ---- the variables read at each call ----

// backendFromEnv reads GPU_BACKEND (Open): "cpu", "cuda" or "cuda:N" (any case,
// spaces around ignored); "" for none.
func backendFromEnv() (name string, ordinal int, err error) {
	v := strings.TrimSpace(strings.ToLower(os.Getenv("GPU_BACKEND")))
	if v == "" {
		return "", 0, nil
	}
	name, idx, found := strings.Cut(v, ":")
	if found {
		n, err := strconv.Atoi(idx)
		if err != nil || n < 0 {
			return "", 0, fmt.Errorf("gpu: GPU_BACKEND=%q: the device index must be a number >= 0: %w", v, ErrInvalidValue)
		}
		ordinal = n
	}
	if name != "cpu" && name != "cuda" {
		return "", 0, fmt.Errorf("gpu: GPU_BACKEND=%q: want cpu, cuda or cuda:N: %w", v, ErrInvalidValue)
	}
	return name, ordinal, nil
}

// mmKernelEnv reads GPU_MATMUL (MatMulAuto's choice).
func mmKernelEnv() (MatMulKernel, error) {
	switch v := strings.ToLower(strings.TrimSpace(os.Getenv("GPU_MATMUL"))); v {
	case "", "auto":
		return MatMulAuto, nil
	case "library", "cublas", "gonum":
		return MatMulLibrary, nil
	case "generated", "fallback":
		return MatMulGenerated, nil
	default:
		return 0, fmt.Errorf("gpu: GPU_MATMUL=%q: want auto, library (cublas, gonum) or generated (fallback): %w", v, ErrInvalidValue)
	}
}
