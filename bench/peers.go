package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// Size says which of the peers' fixture sizes a peer figure is for.
type Size string

const (
	// SizeS is Metal.jl's fixtures: its 512x1000 Julia matrix (a NumPy
	// (1000, 512) array, or its 512000-element vector), and for the dims=1L
	// and dims=2L names its 3x1000000 Julia matrix (NumPy (1000000, 3)).
	SizeS Size = "S"
	// SizeL is our bandwidth size: a 16384x16384 array, 2^28 elements (its
	// flattened vector for the 1d benchmarks). Our names carry LargeSuffix.
	SizeL Size = "L"
)

// LargeSuffix ends the names of our 2^28-element benchmarks.
const LargeSuffix = "/16k"

// LargeSide is the side of the square arrays of the LargeSuffix benchmarks:
// 16384x16384, 2^28 elements (1 GiB of float32).
const LargeSide = 16384

// ReducedLargeSide is the side the LargeSuffix benchmarks use instead on the
// CPU backend (and with -large reduced): 4096x4096, 2^24 elements (64 MiB of
// float32), still far larger than a CPU's caches, so that the whole suite runs
// in a minute or two on a few cores. The names keep LargeSuffix; the report
// records the side (Meta.LargeSide) and the bytes.
const ReducedLargeSide = 4096

// PeerName maps one of our benchmark names onto a key of the peer figures.
type PeerName struct {
	// Ours is our benchmark's full name.
	Ours string
	// Key is the peers' key: Metal.jl's name without "array/" (and without
	// the storage level "private/" or "shared/", and with copyto! as copyto);
	// kernel/, integration/ and sync/ keys keep their group.
	Key string
	// Size selects the peers' section: cupy_S/torch_S or cupy_L/torch_L.
	Size Size
}

// PeerNames is the one table that maps our benchmark names onto the peer
// figures' keys and sizes. peers/peers.py measures exactly the (Key, Size)
// pairs listed here (a test checks it); several of our names may share one
// pair (variants of a synchronization, say). Add a row when a benchmark with a
// peer counterpart is added to the suite, and the same benchmark to
// peers/peers.py.
//
// The peers' figures are wall times of one call plus a synchronize, launch
// and Python overhead included. A GPU-mode benchmark timed with device events
// over back-to-back calls measures less than that; for a like-for-like ratio
// at S, where that overhead dominates, time the benchmark in Host mode.
//
// What the peers run for each key is documented in peers/peers.py. Notes:
// copyto/*_pinned copy to or from page-locked host memory (the analogue of
// Metal.jl's shared storage); kernel/launch is the host cost of launching an
// empty kernel, without a synchronize (as Metal.jl measures it); sync/stream
// and sync/context synchronize an idle stream or device (ours with each wait
// policy; the after_kernel variants and the raw/ baselines have no peer
// figure); construct at L
// allocates an uninitialized 16384x16384 float32 array (at S, Metal.jl's
// one-element Int64 array); kernel/* (but launch) and integration/* are
// hand-written kernels, the same in CUDA C (CuPy's RawModule) as in
// gpubench's PTX (and, for the .../go names, in gpubench's Go kernels of package
// gokernel), and the integration keys exist at S only (Metal.jl's
// 3072x1536 matrix). Our array/shared/... names (unified memory) have no row:
// the peers have no unified-memory figures.
var PeerNames = []PeerName{
	{"array/construct", "construct", SizeS},
	{"array/copy", "copy", SizeS},
	{"array/copyto/cpu_to_gpu", "copyto/cpu_to_gpu", SizeS},
	{"array/copyto/gpu_to_cpu", "copyto/gpu_to_cpu", SizeS},
	{"array/copyto/gpu_to_gpu", "copyto/gpu_to_gpu", SizeS},
	{"array/copyto/cpu_to_gpu_pinned", "copyto/cpu_to_gpu_pinned", SizeS},
	{"array/copyto/gpu_to_cpu_pinned", "copyto/gpu_to_cpu_pinned", SizeS},
	{"array/iteration/scalar", "iteration/scalar", SizeS},
	{"array/iteration/logical", "iteration/logical", SizeS},
	{"array/iteration/findall/bool", "iteration/findall/bool", SizeS},
	{"array/iteration/findall/int", "iteration/findall/int", SizeS},
	{"array/iteration/findfirst/bool", "iteration/findfirst/bool", SizeS},
	{"array/iteration/findfirst/int", "iteration/findfirst/int", SizeS},
	{"array/iteration/findmin/1d", "iteration/findmin/1d", SizeS},
	{"array/iteration/findmin/2d", "iteration/findmin/2d", SizeS},
	{"array/broadcast", "broadcast", SizeS},
	{"array/floor_divide/int32", "floor_divide/int32", SizeS},
	{"array/remainder/float32", "remainder/float32", SizeS},
	{"array/accumulate/Float32/1d", "accumulate/Float32/1d", SizeS},
	{"array/accumulate/Float32/dims=1", "accumulate/Float32/dims=1", SizeS},
	{"array/accumulate/Float32/dims=2", "accumulate/Float32/dims=2", SizeS},
	{"array/accumulate/Float32/dims=1L", "accumulate/Float32/dims=1L", SizeS},
	{"array/accumulate/Float32/dims=2L", "accumulate/Float32/dims=2L", SizeS},
	{"array/accumulate/Int64/1d", "accumulate/Int64/1d", SizeS},
	{"array/accumulate/Int64/dims=1", "accumulate/Int64/dims=1", SizeS},
	{"array/accumulate/Int64/dims=2", "accumulate/Int64/dims=2", SizeS},
	{"array/accumulate/Int64/dims=1L", "accumulate/Int64/dims=1L", SizeS},
	{"array/accumulate/Int64/dims=2L", "accumulate/Int64/dims=2L", SizeS},
	{"array/reductions/reduce/Float32/1d", "reductions/reduce/Float32/1d", SizeS},
	{"array/reductions/reduce/Float32/dims=1", "reductions/reduce/Float32/dims=1", SizeS},
	{"array/reductions/reduce/Float32/dims=2", "reductions/reduce/Float32/dims=2", SizeS},
	{"array/reductions/reduce/Float32/dims=1L", "reductions/reduce/Float32/dims=1L", SizeS},
	{"array/reductions/reduce/Float32/dims=2L", "reductions/reduce/Float32/dims=2L", SizeS},
	{"array/reductions/reduce/Int64/1d", "reductions/reduce/Int64/1d", SizeS},
	{"array/reductions/reduce/Int64/dims=1", "reductions/reduce/Int64/dims=1", SizeS},
	{"array/reductions/reduce/Int64/dims=2", "reductions/reduce/Int64/dims=2", SizeS},
	{"array/reductions/reduce/Int64/dims=1L", "reductions/reduce/Int64/dims=1L", SizeS},
	{"array/reductions/reduce/Int64/dims=2L", "reductions/reduce/Int64/dims=2L", SizeS},
	{"array/reductions/mapreduce/Float32/1d", "reductions/mapreduce/Float32/1d", SizeS},
	{"array/reductions/mapreduce/Float32/dims=1", "reductions/mapreduce/Float32/dims=1", SizeS},
	{"array/reductions/mapreduce/Float32/dims=2", "reductions/mapreduce/Float32/dims=2", SizeS},
	{"array/reductions/mapreduce/Float32/dims=1L", "reductions/mapreduce/Float32/dims=1L", SizeS},
	{"array/reductions/mapreduce/Float32/dims=2L", "reductions/mapreduce/Float32/dims=2L", SizeS},
	{"array/reductions/mapreduce/Int64/1d", "reductions/mapreduce/Int64/1d", SizeS},
	{"array/reductions/mapreduce/Int64/dims=1", "reductions/mapreduce/Int64/dims=1", SizeS},
	{"array/reductions/mapreduce/Int64/dims=2", "reductions/mapreduce/Int64/dims=2", SizeS},
	{"array/reductions/mapreduce/Int64/dims=1L", "reductions/mapreduce/Int64/dims=1L", SizeS},
	{"array/reductions/mapreduce/Int64/dims=2L", "reductions/mapreduce/Int64/dims=2L", SizeS},
	{"array/random/rand/Float32", "random/rand/Float32", SizeS},
	{"array/random/rand/Int64", "random/rand/Int64", SizeS},
	{"array/random/rand!/Float32", "random/rand!/Float32", SizeS},
	{"array/random/rand!/Int64", "random/rand!/Int64", SizeS},
	{"array/random/randn/Float32", "random/randn/Float32", SizeS},
	{"array/random/randn!/Float32", "random/randn!/Float32", SizeS},
	{"array/permutedims/2d", "permutedims/2d", SizeS},
	{"array/permutedims/3d", "permutedims/3d", SizeS},
	{"array/permutedims/4d", "permutedims/4d", SizeS},
	{"kernel/launch", "kernel/launch", SizeS},
	{"kernel/indexing", "kernel/indexing", SizeS},
	{"kernel/indexing_checked", "kernel/indexing_checked", SizeS},
	{"kernel/rand", "kernel/rand", SizeS},
	{"integration/byval/reference", "integration/byval/reference", SizeS},
	{"integration/byval/slices=1", "integration/byval/slices=1", SizeS},
	{"integration/byval/slices=2", "integration/byval/slices=2", SizeS},
	{"integration/byval/slices=3", "integration/byval/slices=3", SizeS},
	{"integration/metaldevrt", "integration/metaldevrt", SizeS},
	{"kernel/indexing/go", "kernel/indexing", SizeS},
	{"gokernel/func2", "func2", SizeS},
	{"kernel/indexing_checked/go", "kernel/indexing_checked", SizeS},
	{"kernel/rand/go", "kernel/rand", SizeS},
	{"integration/byval/reference/go", "integration/byval/reference", SizeS},
	{"integration/byval/slices=1/go", "integration/byval/slices=1", SizeS},
	{"integration/byval/slices=2/go", "integration/byval/slices=2", SizeS},
	{"integration/byval/slices=3/go", "integration/byval/slices=3", SizeS},
	{"integration/metaldevrt/go", "integration/metaldevrt", SizeS},
	{"sync/stream", "sync/stream", SizeS},
	{"sync/stream/blocking", "sync/stream", SizeS},
	{"sync/stream/spinning", "sync/stream", SizeS},
	{"sync/context", "sync/context", SizeS},
	{"sync/context/blocking", "sync/context", SizeS},
	{"sync/context/spinning", "sync/context", SizeS},
	{"array/construct/16k", "construct", SizeL},
	{"array/copy/16k", "copy", SizeL},
	{"array/copyto/cpu_to_gpu/16k", "copyto/cpu_to_gpu", SizeL},
	{"array/copyto/gpu_to_cpu/16k", "copyto/gpu_to_cpu", SizeL},
	{"array/copyto/gpu_to_gpu/16k", "copyto/gpu_to_gpu", SizeL},
	{"array/copyto/cpu_to_gpu_pinned/16k", "copyto/cpu_to_gpu_pinned", SizeL},
	{"array/copyto/gpu_to_cpu_pinned/16k", "copyto/gpu_to_cpu_pinned", SizeL},
	{"array/iteration/scalar/16k", "iteration/scalar", SizeL},
	{"array/iteration/logical/16k", "iteration/logical", SizeL},
	{"array/iteration/findall/bool/16k", "iteration/findall/bool", SizeL},
	{"array/iteration/findall/int/16k", "iteration/findall/int", SizeL},
	{"array/iteration/findfirst/bool/16k", "iteration/findfirst/bool", SizeL},
	{"array/iteration/findfirst/int/16k", "iteration/findfirst/int", SizeL},
	{"array/iteration/findmin/1d/16k", "iteration/findmin/1d", SizeL},
	{"array/iteration/findmin/2d/16k", "iteration/findmin/2d", SizeL},
	{"array/broadcast/16k", "broadcast", SizeL},
	{"array/floor_divide/int32/16k", "floor_divide/int32", SizeL},
	{"array/remainder/float32/16k", "remainder/float32", SizeL},
	{"array/accumulate/Float32/1d/16k", "accumulate/Float32/1d", SizeL},
	{"array/accumulate/Float32/dims=1/16k", "accumulate/Float32/dims=1", SizeL},
	{"array/accumulate/Float32/dims=2/16k", "accumulate/Float32/dims=2", SizeL},
	{"array/accumulate/Int64/1d/16k", "accumulate/Int64/1d", SizeL},
	{"array/accumulate/Int64/dims=1/16k", "accumulate/Int64/dims=1", SizeL},
	{"array/accumulate/Int64/dims=2/16k", "accumulate/Int64/dims=2", SizeL},
	{"array/reductions/reduce/Float32/1d/16k", "reductions/reduce/Float32/1d", SizeL},
	{"array/reductions/reduce/Float32/dims=1/16k", "reductions/reduce/Float32/dims=1", SizeL},
	{"array/reductions/reduce/Float32/dims=2/16k", "reductions/reduce/Float32/dims=2", SizeL},
	{"array/reductions/reduce/Int64/1d/16k", "reductions/reduce/Int64/1d", SizeL},
	{"array/reductions/reduce/Int64/dims=1/16k", "reductions/reduce/Int64/dims=1", SizeL},
	{"array/reductions/reduce/Int64/dims=2/16k", "reductions/reduce/Int64/dims=2", SizeL},
	{"array/reductions/mapreduce/Float32/1d/16k", "reductions/mapreduce/Float32/1d", SizeL},
	{"array/reductions/mapreduce/Float32/dims=1/16k", "reductions/mapreduce/Float32/dims=1", SizeL},
	{"array/reductions/mapreduce/Float32/dims=2/16k", "reductions/mapreduce/Float32/dims=2", SizeL},
	{"array/reductions/mapreduce/Int64/1d/16k", "reductions/mapreduce/Int64/1d", SizeL},
	{"array/reductions/mapreduce/Int64/dims=1/16k", "reductions/mapreduce/Int64/dims=1", SizeL},
	{"array/reductions/mapreduce/Int64/dims=2/16k", "reductions/mapreduce/Int64/dims=2", SizeL},
	{"array/random/rand/Float32/16k", "random/rand/Float32", SizeL},
	{"array/random/rand/Int64/16k", "random/rand/Int64", SizeL},
	{"array/random/rand!/Float32/16k", "random/rand!/Float32", SizeL},
	{"array/random/rand!/Int64/16k", "random/rand!/Int64", SizeL},
	{"array/random/randn/Float32/16k", "random/randn/Float32", SizeL},
	{"array/random/randn!/Float32/16k", "random/randn!/Float32", SizeL},
	{"array/permutedims/2d/16k", "permutedims/2d", SizeL},
	{"array/permutedims/3d/16k", "permutedims/3d", SizeL},
	{"array/permutedims/4d/16k", "permutedims/4d", SizeL},
	{"array/stats/var", "stats/var", SizeS},
	{"array/stats/logsumexp", "stats/logsumexp", SizeS},
	{"array/stats/softmax", "stats/softmax", SizeS},
	{"array/stats/layernorm", "stats/layernorm", SizeS},
	{"array/stats/var/16k", "stats/var", SizeL},
	{"array/stats/logsumexp/16k", "stats/logsumexp", SizeL},
	{"array/stats/softmax/16k", "stats/softmax", SizeL},
	{"array/stats/layernorm/16k", "stats/layernorm", SizeL},
	{"kernel/indexing/16k", "kernel/indexing", SizeL},
	{"kernel/indexing_checked/16k", "kernel/indexing_checked", SizeL},
	{"kernel/rand/16k", "kernel/rand", SizeL},
	{"kernel/indexing/go/16k", "kernel/indexing", SizeL},
	{"gokernel/func2/16k", "func2", SizeL},
	{"kernel/indexing_checked/go/16k", "kernel/indexing_checked", SizeL},
	{"kernel/rand/go/16k", "kernel/rand", SizeL},
	// Indexing and concatenation (cmd/gpubench/suite_index.go): /16k rows onto the
	// anchors' keys at L (GPU time by events), Metal.jl-sized rows onto "+sync" keys
	// at S.
	{"index/take/float32/random/16k", "take/float32/2^26 of 2^28 random", SizeL},
	{"index/take/float32/stride4/16k", "take/float32/2^26 of 2^28 stride4", SizeL},
	{"index/put/float32/random/16k", "put/float32/2^26 into 2^28", SizeL},
	{"index/addat/float32/many/16k", "scatter_add/float32/2^26 into 2^20", SizeL},
	{"index/addat/float32/8bins/16k", "scatter_add/float32/2^26 into 8", SizeL},
	{"index/bincount/many/16k", "bincount/2^26 into 2^20", SizeL},
	{"index/concat/float32/axis0/16k", "concat/float32/2x2^27", SizeL},
	{"index/concat/float32/axis1/16k", "concat/float32/8192^2 x2 axis1", SizeL},
	{"index/take/float32/random", "take/float32/512000 of 512000 random+sync", SizeS},
	{"index/take/float32/stride4", "take/float32/128000 of 512000 stride4+sync", SizeS},
	{"index/put/float32/random", "put/float32/128000 into 512000+sync", SizeS},
	{"index/addat/float32/many", "scatter_add/float32/512000 into 8192+sync", SizeS},
	{"index/addat/float32/8bins", "scatter_add/float32/512000 into 8+sync", SizeS},
	{"index/bincount/many", "bincount/512000 into 8192+sync", SizeS},
	{"index/concat/float32/axis0", "concat/float32/2x256000+sync", SizeS},
	{"index/concat/float32/axis1", "concat/float32/1000x512 x2 axis1+sync", SizeS},
	// Half precision (cmd/gpubench/suite_half.go), at L only; axpb/bfloat16 at L is
	// the anchor axpb/bfloat16/2^28 of ../shared/peers/h200-2026-12-01-extra.md.
	{"array/copy/BFloat16/16k", "copy/BFloat16", SizeL},
	{"array/broadcast/BFloat16/16k", "broadcast/BFloat16", SizeL},
	{"array/axpb/bfloat16/16k", "axpb/bfloat16", SizeL},
	{"array/reductions/reduce/BFloat16/1d/16k", "reductions/reduce/BFloat16/1d", SizeL},
	{"array/reductions/reduce/BFloat16/dims=1/16k", "reductions/reduce/BFloat16/dims=1", SizeL},
	{"array/reductions/reduce/BFloat16/dims=2/16k", "reductions/reduce/BFloat16/dims=2", SizeL},
	{"array/accumulate/BFloat16/1d/16k", "accumulate/BFloat16/1d", SizeL},
	{"array/accumulate/BFloat16/dims=1/16k", "accumulate/BFloat16/dims=1", SizeL},
	{"array/random/rand/BFloat16/16k", "random/rand/BFloat16", SizeL},
	{"array/random/randn/BFloat16/16k", "random/randn/BFloat16", SizeL},
	{"array/copy/Float16/16k", "copy/Float16", SizeL},
	{"array/broadcast/Float16/16k", "broadcast/Float16", SizeL},
	{"array/axpb/float16/16k", "axpb/float16", SizeL},
	{"array/reductions/reduce/Float16/1d/16k", "reductions/reduce/Float16/1d", SizeL},
	{"array/reductions/reduce/Float16/dims=1/16k", "reductions/reduce/Float16/dims=1", SizeL},
	{"array/reductions/reduce/Float16/dims=2/16k", "reductions/reduce/Float16/dims=2", SizeL},
	{"array/accumulate/Float16/1d/16k", "accumulate/Float16/1d", SizeL},
	{"array/accumulate/Float16/dims=1/16k", "accumulate/Float16/dims=1", SizeL},
	{"array/random/rand/Float16/16k", "random/rand/Float16", SizeL},
	{"array/random/randn/Float16/16k", "random/randn/Float16", SizeL},
	{"array/axpb/float32/16k", "axpb/float32", SizeL},
	// Matrix products (cmd/gpubench/suite_matmul.go): the keys of the peers'
	// anchors, whatever the size (S); the generated kernel's rows compare with
	// the same figures.
	{"matmul/float32/512", "matmul/float32/512", SizeS},
	{"matmul/tf32/512", "matmul/float32/tf32/512", SizeS},
	{"matmul/bfloat16/512", "matmul/bfloat16/512", SizeS},
	{"matmul/float16/512", "matmul/float16/512", SizeS},
	{"matmul/float64/512", "matmul/float64/512", SizeS},
	{"matmul/float32/4096", "matmul/float32/4096", SizeS},
	{"matmul/tf32/4096", "matmul/float32/tf32/4096", SizeS},
	{"matmul/bfloat16/4096", "matmul/bfloat16/4096", SizeS},
	{"matmul/float16/4096", "matmul/float16/4096", SizeS},
	{"matmul/float64/4096", "matmul/float64/4096", SizeS},
	{"matmul/float32/8192", "matmul/float32/8192", SizeS},
	{"matmul/tf32/8192", "matmul/float32/tf32/8192", SizeS},
	{"matmul/bfloat16/8192", "matmul/bfloat16/8192", SizeS},
	{"matmul/float16/8192", "matmul/float16/8192", SizeS},
	{"matmul/float64/8192", "matmul/float64/8192", SizeS},
	{"matmul/batched/float32/256x128^3", "bmm/float32/256x128^3", SizeS},
	{"matmul/batched/bfloat16/256x128^3", "bmm/bfloat16/256x128^3", SizeS},
	{"matmul/float32/512x1000x512+sync", "matmul/float32/512x1000x512+sync", SizeS},
	{"matmul/generated/float32/512", "matmul/float32/512", SizeS},
	{"matmul/generated/tf32/512", "matmul/float32/tf32/512", SizeS},
	{"matmul/generated/bfloat16/512", "matmul/bfloat16/512", SizeS},
	{"matmul/generated/float16/512", "matmul/float16/512", SizeS},
	{"matmul/generated/float64/512", "matmul/float64/512", SizeS},
	{"matmul/generated/float32/4096", "matmul/float32/4096", SizeS},
	{"matmul/generated/tf32/4096", "matmul/float32/tf32/4096", SizeS},
	{"matmul/generated/bfloat16/4096", "matmul/bfloat16/4096", SizeS},
	{"matmul/generated/float16/4096", "matmul/float16/4096", SizeS},
	{"matmul/generated/float64/4096", "matmul/float64/4096", SizeS},
	{"matmul/generated/float32/8192", "matmul/float32/8192", SizeS},
	{"matmul/generated/tf32/8192", "matmul/float32/tf32/8192", SizeS},
	{"matmul/generated/bfloat16/8192", "matmul/bfloat16/8192", SizeS},
	{"matmul/generated/float16/8192", "matmul/float16/8192", SizeS},
	{"matmul/generated/float64/8192", "matmul/float64/8192", SizeS},
	{"matmul/generated/batched/float32/256x128^3", "bmm/float32/256x128^3", SizeS},
	{"matmul/generated/batched/bfloat16/256x128^3", "bmm/bfloat16/256x128^3", SizeS},
	{"matmul/generated/float32/512x1000x512+sync", "matmul/float32/512x1000x512+sync", SizeS},
	{"graph/launch/10ops/512x1000", "graph/launch/10ops/512x1000", SizeS},
	{"graph/eager/10ops/512x1000", "graph/eager/10ops/512x1000", SizeS},
	{"hostfunc/round_trip", "hostfunc/round_trip", SizeS},
	// Sorting and selection (cmd/gpubench/suite_sort.go; the sizes are in the keys, at
	// a side of 16384; anchors in peers/h200-2026-12-01-extra.md).
	{"array/sort/float32/2^28/16k", "sort/float32/2^28", SizeL},
	{"array/sort/int32/2^28/16k", "sort/int32/2^28", SizeL},
	{"array/argsort/float32/2^28/16k", "argsort/float32/2^28", SizeL},
	{"array/argsort/int32/2^28/16k", "argsort/int32/2^28", SizeL},
	{"array/sort/float64/2^27/16k", "sort/float64/2^27", SizeL},
	{"array/argsort/float64/2^27/16k", "argsort/float64/2^27", SizeL},
	{"array/sort/float32/512000+sync", "sort/float32/512000+sync", SizeS},
	{"array/sort/rows/float32/16384x16384/16k", "sort/rows/float32/16384x16384", SizeL},
	{"array/topk/100/float32/2^24/16k", "topk/100/float32/2^24", SizeL},
	{"array/unique/int64/2^26/2^20_distinct/16k", "unique/int64/2^26/2^20_distinct", SizeL},
	{"array/searchsorted/2^26_in_2^24/16k", "searchsorted/2^26_in_2^24", SizeL},
	{"array/median/float32/2^24/16k", "median/float32/2^24", SizeL},
	{"array/nanmedian/float32/2^24/16k", "nanmedian/float32/2^24", SizeL},
	// The examples' workloads (cmd/gpubench/suite_workload.go, issue 24): one call plus a
	// synchronize at the examples' full sizes (in the keys), the keys our names.
	{"workload/kmeans/1e7x16/k64/20it", "workload/kmeans/1e7x16/k64/20it", SizeS},
	{"workload/transformer/bf16/16x1024/d768", "workload/transformer/bf16/16x1024/d768", SizeS},
	{"workload/options/european/1e8", "workload/options/european/1e8", SizeS},
	{"workload/options/asian/1e8x64", "workload/options/asian/1e8x64", SizeS},
	{"workload/columns/1e8/1000keys", "workload/columns/1e8/1000keys", SizeS},
	{"workload/image/8192x8192/sigma3", "workload/image/8192x8192/sigma3", SizeS},
}

var (
	peerIndexOnce sync.Once
	peerIndex     map[string]PeerName
)

// PeerKey returns the peer key and size our benchmark name maps onto.
func PeerKey(name string) (key string, size Size, ok bool) {
	peerIndexOnce.Do(func() {
		peerIndex = make(map[string]PeerName, len(PeerNames))
		for _, p := range PeerNames {
			if _, dup := peerIndex[p.Ours]; dup {
				panic("bench: PeerNames lists " + p.Ours + " twice")
			}
			peerIndex[p.Ours] = p
		}
	})
	p, ok := peerIndex[name]
	return p.Key, p.Size, ok
}

// Peers holds the peers' figures: the JSON written by peers/peers.py. Times
// are the median wall time of one call plus a synchronize, in nanoseconds.
type Peers struct {
	// Ceilings are the machine's bandwidth ceilings in GB/s
	// ("d2d_copy_GBps(read+write)", "torch_sum_4GiB_GBps", ...).
	Ceilings map[string]float64 `json:"ceilings"`
	// CupyS, TorchS, CupyL and TorchL map peer keys to times, per library and size.
	CupyS  map[string]float64 `json:"cupy_S"`
	TorchS map[string]float64 `json:"torch_S"`
	CupyL  map[string]float64 `json:"cupy_L"`
	TorchL map[string]float64 `json:"torch_L"`
	// Meta is the "meta" object peers.py adds (date, device, versions, ...);
	// nil for files without one.
	Meta map[string]any `json:"meta,omitempty"`
	// Path is the file the figures were read from.
	Path string `json:"-"`
}

// Date returns meta.date, or "" when the file has none.
func (p *Peers) Date() string {
	if d, ok := p.Meta["date"].(string); ok {
		return d
	}
	return ""
}

// PeerFigures are the peers' times for one of our benchmarks.
type PeerFigures struct {
	// Key and Size are where the figures were found (see PeerNames).
	Key  string `json:"key"`
	Size Size   `json:"size"`
	// CuPyNs and TorchNs are the peers' median times in nanoseconds; 0 when
	// that peer has no figure.
	CuPyNs  float64 `json:"cupy_ns,omitempty"`
	TorchNs float64 `json:"torch_ns,omitempty"`
}

// Best returns the lower of the two peers' times and the peer's name
// ("CuPy" or "PyTorch"); 0 and "" when neither has a figure.
func (f PeerFigures) Best() (ns float64, peer string) {
	switch {
	case f.CuPyNs > 0 && (f.TorchNs <= 0 || f.CuPyNs <= f.TorchNs):
		return f.CuPyNs, "CuPy"
	case f.TorchNs > 0:
		return f.TorchNs, "PyTorch"
	}
	return 0, ""
}

// Lookup returns the peers' figures for our benchmark name. ok is false when
// the name has no row in PeerNames or neither peer has a figure for it.
func (p *Peers) Lookup(name string) (f PeerFigures, ok bool) {
	if p == nil {
		return f, false
	}
	key, size, ok := PeerKey(name)
	if !ok {
		return f, false
	}
	f = PeerFigures{Key: key, Size: size}
	if size == SizeL {
		f.CuPyNs, f.TorchNs = p.CupyL[key], p.TorchL[key]
	} else {
		f.CuPyNs, f.TorchNs = p.CupyS[key], p.TorchS[key]
	}
	return f, f.CuPyNs > 0 || f.TorchNs > 0
}

// LookupIn is Lookup for a result of rep: the peers' L figures do not apply
// when rep's LargeSuffix benchmarks ran at another side (Meta.LargeSide).
func (p *Peers) LookupIn(rep *Report, name string) (f PeerFigures, ok bool) {
	f, ok = p.Lookup(name)
	if ok && f.Size == SizeL && rep != nil && rep.Meta.LargeSide > 0 && rep.Meta.LargeSide != LargeSide {
		return PeerFigures{}, false
	}
	return f, ok
}

// Annotate sets Result.Peer on every result of r that has peer figures (see
// LookupIn), and records p's path in r.Meta.Peers.
func (p *Peers) Annotate(r *Report) {
	if p == nil {
		return
	}
	r.Meta.Peers = p.Path
	for i := range r.Results {
		if f, ok := p.LookupIn(r, r.Results[i].Name); ok {
			r.Results[i].Peer = &f
		}
	}
}

// ReadPeers reads a peer-figures JSON file.
func ReadPeers(path string) (*Peers, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p Peers
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if p.CupyS == nil && p.TorchS == nil && p.CupyL == nil && p.TorchL == nil {
		return nil, fmt.Errorf("%s: no cupy_S, torch_S, cupy_L or torch_L section", path)
	}
	p.Path = path
	return &p, nil
}

// FindPeersFile looks for peers/h200-*.json in dir and its parents, up to the
// first directory holding a go.mod, and returns the last such file in name
// order (the latest date), or "" if there is none.
func FindPeersFile(dir string) string {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		m, _ := filepath.Glob(filepath.Join(dir, "peers", "h200-*.json"))
		if len(m) > 0 {
			slices.Sort(m)
			return m[len(m)-1]
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
