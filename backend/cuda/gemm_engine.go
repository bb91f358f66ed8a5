package cuda

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/go-gpu/gpu/backend/cuda/cu"
	"github.com/go-gpu/gpu/backend/cuda/cublas"
	"github.com/go-gpu/gpu/dtype"
)

// Which cuBLAS routine computes a product, and with how much workspace: the knobs of the
// measurements against PyTorch (issue 19), read once from the environment.
//
//	GPU_CUBLAS_API=<engine> or a list <type>=<engine>,... (types float16, bfloat16,
//	    float32, tf32, float64; a bare engine sets every type)
//	  gemmex   cublasGemmEx / cublasGemmStridedBatchedEx (the default): cuBLAS's
//	           heuristic picks the kernel on every call, as PyTorch's default backend
//	           calls it for float16 and bfloat16
//	  classic  cublasSgemm / cublasDgemm for float32 (and tf32) and float64 products of
//	           one matrix, as PyTorch and CuPy call them (others: gemmex)
//	  lt       cublasLtMatmul with the first algorithm of cublasLtMatmulAlgoGetHeuristic,
//	           its descriptors and choice made once per shape, layout and alignment and
//	           kept (PyTorch's cublaslt backend, TORCH_BLAS_PREFER_CUBLASLT=1)
//	  tune     lt, but the first product of each shape with beta == 0 runs each of up to
//	           GPU_CUBLAS_TUNE_ALGOS (default 8) of the heuristic's algorithms and keeps
//	           the fastest (device events, 3 runs each; PyTorch's TunableOp): that first
//	           call waits for the device, once per shape
//	GPU_CUBLAS_WORKSPACE=<MiB>  each stream handle's workspace (default: 32 on compute
//	    capability 9.0 and later, 4 before, cuBLAS's recommendations); cublasLt gets the
//	    same buffer.
//	GPU_CUBLAS_REPLAY=0  call cuBLAS for every product: no CUDA graphs of repeated small
//	    products (gemm_replay.go; default 1).
//
// A routine that is missing, or that refuses a product (no cublasLt algorithm for it),
// falls back to gemmex.

// gemmEngine is a way of calling cuBLAS.
type gemmEngine uint8

const (
	engineGemmEx gemmEngine = iota
	engineClassic
	engineLt
	engineTune
)

var engineNames = map[string]gemmEngine{"gemmex": engineGemmEx, "classic": engineClassic, "lt": engineLt, "tune": engineTune}

// String returns the engine's name in GPU_CUBLAS_API.
func (e gemmEngine) String() string {
	for n, v := range engineNames {
		if v == e {
			return n
		}
	}
	return "engine(" + strconv.Itoa(int(e)) + ")"
}

// blasConfig is the environment's choices.
type blasConfig struct {
	engine    map[string]gemmEngine // by type name: float16, bfloat16, float32, tf32, float64
	workspace int64                 // bytes; -1: the default by compute capability
	tuneAlgos int
	replay    bool // graphs of repeated small products
}

var blasEnv = sync.OnceValue(func() blasConfig { return parseBlasConfig(os.Getenv) })

// parseBlasConfig reads the variables through getenv; values it can't parse are ignored.
func parseBlasConfig(getenv func(string) string) blasConfig {
	c := blasConfig{engine: map[string]gemmEngine{}, workspace: -1, tuneAlgos: 8, replay: true}
	for _, item := range strings.Split(getenv("GPU_CUBLAS_API"), ",") {
		item = strings.ToLower(strings.TrimSpace(item))
		if item == "" {
			continue
		}
		typ, name, found := strings.Cut(item, "=")
		if !found {
			typ, name = "", typ
		}
		e, ok := engineNames[name]
		if !ok {
			continue
		}
		if typ == "" {
			for _, t := range []string{"float16", "bfloat16", "float32", "tf32", "float64"} {
				c.engine[t] = e
			}
			continue
		}
		c.engine[typ] = e
	}
	if mb, err := strconv.Atoi(strings.TrimSpace(getenv("GPU_CUBLAS_WORKSPACE"))); err == nil && mb >= 0 {
		c.workspace = int64(mb) << 20
	}
	if n, err := strconv.Atoi(getenv("GPU_CUBLAS_TUNE_ALGOS")); err == nil && n >= 1 {
		c.tuneAlgos = min(n, cublas.MaxLtAlgos)
	}
	if on, err := strconv.ParseBool(strings.TrimSpace(getenv("GPU_CUBLAS_REPLAY"))); err == nil {
		c.replay = on
	}
	return c
}

// engineFor returns the engine for a product of type t (tf32: float32 on TF32).
func (c blasConfig) engineFor(t dtype.DType, tf32 bool) gemmEngine {
	name := t.String()
	switch t {
	case dtype.Float16:
		name = "float16"
	case dtype.BFloat16:
		name = "bfloat16"
	case dtype.Float32:
		name = "float32"
		if tf32 {
			name = "tf32"
		}
	case dtype.Float64:
		name = "float64"
	}
	return c.engine[name]
}

// ltKey identifies a product for cublasLt: everything its descriptors, the heuristic's
// choice and the measured choice depend on.
type ltKey struct {
	ta, tb        cublas.Operation
	m, n, k       int
	lda, ldb, ldc int
	sa, sb, sc    int64
	batch         int
	dt            cublas.DataType
	compute       cublas.ComputeType
	alA, alB, alC uint32
	ws            uint64
}

// ltEntry is a product's plan and algorithms: algos[best] is used.
type ltEntry struct {
	mu    sync.Mutex
	plan  *cublas.LtPlan
	algos []cublas.LtAlgo
	best  int
	tuned bool
	err   error // the plan or the heuristic failed: use GemmEx
}

// blasLt is a device's cuBLASLt state.
type blasLt struct {
	once  sync.Once
	h     cublas.LtHandle
	err   error
	plans sync.Map // ltKey -> *ltEntry
}

var blasLts sync.Map // *Device -> *blasLt

func (d *Device) lt() (*blasLt, error) {
	v, _ := blasLts.LoadOrStore(d, &blasLt{})
	l := v.(*blasLt)
	l.once.Do(func() {
		if !cublas.LtAvailable() {
			l.err = fmt.Errorf("cuda: cuBLASLt is not available: %w", cublas.ErrUnavailable)
			return
		}
		l.h, l.err = cublas.LtCreate(d.ctx)
	})
	return l, l.err
}

// errFallBack says that an engine cannot do a product: GemmEx does it.
var errFallBack = errors.New("cuda: fall back to cublasGemmEx")

// gemmLt enqueues call on hs (s's stream, or the stream a replay captures on) with
// cublasLt (tune: measuring the candidates on s the first time), or returns
// errFallBack.
func (d *Device) gemmLt(s *Stream, st *blasStream, hs cu.Stream, call *gemmCall, tune bool, wsBytes uint64) error {
	l, err := d.lt()
	if err != nil {
		return errFallBack
	}
	scale := cublas.R32F
	if call.compute == cublas.Compute64F {
		scale = cublas.R64F
	}
	key := ltKey{ta: call.ta, tb: call.tb, m: call.m, n: call.n, k: call.k,
		lda: call.a.LD, ldb: call.b.LD, ldc: call.c.LD, sa: call.a.Stride, sb: call.b.Stride, sc: call.c.Stride,
		batch: call.batch, dt: call.a.Type, compute: call.compute,
		alA: cublas.Alignment(call.a.Ptr), alB: cublas.Alignment(call.b.Ptr), alC: cublas.Alignment(call.c.Ptr), ws: wsBytes}
	v, ok := l.plans.Load(key)
	if !ok {
		v, _ = l.plans.LoadOrStore(key, &ltEntry{})
	}
	e := v.(*ltEntry)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.plan == nil && e.err == nil {
		p := &cublas.LtProblem{TransA: call.ta, TransB: call.tb, M: call.m, N: call.n, K: call.k,
			A: call.a, B: call.b, C: call.c, Batch: call.batch, Compute: call.compute, Scale: scale}
		e.plan, e.err = l.h.Plan(p)
		if e.err == nil {
			e.algos, e.err = e.plan.Heuristics(blasEnv().tuneAlgos, wsBytes, key.alA, key.alB, key.alC)
		}
	}
	if e.err != nil {
		return errFallBack
	}
	run := func(i int) error {
		return e.plan.Matmul(call.alpha, call.a.Ptr, call.b.Ptr, call.beta, call.c.Ptr, &e.algos[i], uintptr(st.ws), wsBytes, uintptr(hs))
	}
	if tune && !e.tuned && call.beta == 0 && len(e.algos) > 1 {
		// beta == 0: C is only written, so every candidate may write it; the best runs
		// last, so that C holds its result.
		if best, err := d.tuneLt(s, len(e.algos), run); err == nil {
			e.best, e.tuned = best, true
		}
	}
	err = run(e.best)
	if errors.Is(err, cublas.ErrNotSupported) || errors.Is(err, cublas.ErrInvalidValue) || errors.Is(err, cublas.ErrArchMismatch) {
		// The algorithm refuses the product after all: GemmEx from now on.
		e.err = err
		return errFallBack
	}
	return err
}

// tuneLt times run(i) for i < n on s (a warm-up run, then 3 between two events) and
// returns the fastest i that ran without error.
func (d *Device) tuneLt(s *Stream, n int, run func(int) error) (int, error) {
	ev := [2]cu.Event{}
	for i := range ev {
		e, err := d.ctx.EventCreate(0)
		if err != nil {
			return 0, err
		}
		ev[i] = e
		defer d.ctx.EventDestroy(e)
	}
	best, bestMs := -1, float32(0)
	for i := range n {
		if run(i) != nil {
			continue
		}
		if err := d.ctx.EventRecord(ev[0], s.h); err != nil {
			return 0, err
		}
		failed := false
		for range 3 {
			if run(i) != nil {
				failed = true
				break
			}
		}
		if err := d.ctx.EventRecord(ev[1], s.h); err != nil {
			return 0, err
		}
		if err := d.ctx.EventSynchronize(ev[1]); err != nil {
			return 0, err
		}
		ms, err := d.ctx.EventElapsedTime(ev[0], ev[1])
		if err != nil || failed {
			continue
		}
		if best < 0 || ms < bestMs {
			best, bestMs = i, ms
		}
	}
	if best < 0 {
		return 0, errFallBack
	}
	if os.Getenv("GPU_CUBLAS_TUNE_LOG") != "" {
		fmt.Fprintf(os.Stderr, "cuda: cublasLt tuning: algorithm %d of %d, %.1f us a product\n", best, n, bestMs*1000/3)
	}
	return best, nil
}
