#!/usr/bin/env bash
# The GPU checks of the CGO_ENABLED=0 build (issue #25), on the device machine. Build
# both variants here first (the device machine has no Go):
#   ../shared/tools/gpu-pack -z                          # the cgo build, in .gpu
#   CGO_ENABLED=0 ../shared/tools/gpu-pack -z -o .gpu-nocgo
# then there, from the repository root, carrying .gpu.tar.xz and .gpu-nocgo.tar.xz
# (unpack first: xz -dc .gpu.tar.xz | tar -x && xz -dc .gpu-nocgo.tar.xz | tar -x):
#   bash scripts/device-nocgo.sh check     # ~2 min: what the binaries are, the binding,
#                                          #   conformance (10,000 waiters, threads), fault,
#                                          #   the other packages with GPU or C-library tests
#   bash scripts/device-nocgo.sh tests     # ~7 min: the root package's tests (arrays, runtime)
#   bash scripts/device-nocgo.sh compare   # ~5 min: cgo and no-cgo interleaved, same command
#   bash scripts/device-nocgo.sh gpubench  # ~9 min: the whole gpubench suite, no-cgo build
#   bash scripts/device-nocgo.sh matmul    # ~3 min: the matrix products (cuBLAS) in both builds
#   bash scripts/device-nocgo.sh nccl      # on nvidia-h200-x2: NCCL tests, no-cgo build
# Logs and results go to $OUT. The no-cgo binaries name their binding ("purego") in the
# tests' -v output and in gpubench's header ("driver 13.0 purego").
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
C=${C:-.gpu} N=${N:-.gpu-nocgo}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader

# pkgtest DIR NAME REGEX [ARGS...]: one packed test binary of build DIR, from its package
# folder (so that testdata/ resolves), log in $OUT/DIR-NAME.log.
pkgtest() {
  local d=$1 name=$2 re=$3; shift 3
  local rel; rel=$(awk -v n="$name" '$1 == n {print $2}' "$d/packages.txt")
  local log="$OUT/${d#.}-$name.log"
  (cd "${rel:-.}" && timeout "${T:-300}" "$root/$d/$name.test" -test.count=1 -test.run "$re" -test.v "$@") > "$log" 2>&1
  local rc=$?
  echo "== $d $name ($re): exit $rc, $(grep -c -- '--- PASS' "$log") passed, $(grep -c -- '--- SKIP' "$log") skipped"
  grep -E -- '--- FAIL|^panic:|FAIL$' "$log" | head -20
  return 0
}

case "${1:-check}" in
check)
  for d in $C $N; do
    echo "== $d/bin/gpubench"; file "$d/bin/gpubench"; ldd "$d/bin/gpubench" 2>&1 | sed 's/^/    /'
  done
  T=60 pkgtest $N backend_cuda_cu 'TestLoad$'
  grep -E 'binding' "$OUT/gpu-nocgo-backend_cuda_cu.log"
  T=240 pkgtest $N conformance 'TestCUDA$|TestCUDAFault'
  grep -E 'waiters:|leaked|fault error' "$OUT/gpu-nocgo-conformance.log" | head
  # The other packages whose tests open the GPU or load a C library (fake libraries
  # need a C compiler there; without one those tests skip).
  for name in internal_dl backend_cuda_cu backend_cuda_cublas nccl_internal_ncclapi nccl cmd_gpubench; do
    T=120 pkgtest $N "$name" '.' -test.short
  done
  ;;
tests)
  # The root package's tests (every array operation and the runtime on the GPU).
  T=540 pkgtest $N root '.'
  ;;
compare)
  # The same rows from both builds, alternating, three rounds: gpubench's launch,
  # construct, synchronization and copy rows (each with its raw baseline), and the
  # runtime's Go benchmarks. Each no-cgo gpubench run compares itself with the cgo run
  # just before it (-compare: the "old" column is cgo, the ratio is no-cgo/cgo).
  rows=${ROWS:-'^(sync/|kernel/launch$|array/construct|array/copyto/|array/copy/16k$|reference/dtod_copy$)'}
  gob='^(BenchmarkDriverCall|BenchmarkLaunch|BenchmarkTrackedLaunch|BenchmarkSync)$'
  : > "$OUT/cgo-gotest.txt"; : > "$OUT/nocgo-gotest.txt"
  for i in 1 2 3; do
    timeout 150 $C/bin/gpubench -q -peers none -run "$rows" -benchtime 200ms \
      -json "$OUT/cgo-$i.json" -gobench "$OUT/cgo-gpubench-$i.txt" > "$OUT/cgo-$i.table" 2>&1
    echo "cgo gpubench round $i: exit $?"
    timeout 150 $N/bin/gpubench -q -peers none -run "$rows" -benchtime 200ms -compare "$OUT/cgo-$i.json" \
      -json "$OUT/nocgo-$i.json" -gobench "$OUT/nocgo-gpubench-$i.txt" > "$OUT/nocgo-$i.table" 2>&1
    echo "no-cgo gpubench round $i: exit $?"
    cat "$OUT/nocgo-$i.table"
    timeout 60 $C/root.test -test.run '^$' -test.bench "$gob" -test.benchtime 0.3s -test.count 1 -test.benchmem >> "$OUT/cgo-gotest.txt" 2>&1
    timeout 60 $N/root.test -test.run '^$' -test.bench "$gob" -test.benchtime 0.3s -test.count 1 -test.benchmem >> "$OUT/nocgo-gotest.txt" 2>&1
  done
  echo "== Go benchmarks, cgo then no-cgo (benchstat cgo-gotest.txt nocgo-gotest.txt offline)"
  grep -hE '^Benchmark' "$OUT/cgo-gotest.txt" | sed 's/^/cgo    /'
  grep -hE '^Benchmark' "$OUT/nocgo-gotest.txt" | sed 's/^/no-cgo /'
  ;;
gpubench)
  peers=auto; [ -s "$OUT/peers.json" ] && peers=$OUT/peers.json
  timeout 560 $N/bin/gpubench -q -peers "$peers" -json "$OUT/nocgo-gpubench.json" -gobench "$OUT/nocgo-gpubench.txt" \
    ${GPUBENCH_ARGS:-} > "$OUT/nocgo-gpubench.table" 2> "$OUT/nocgo-gpubench.err"
  echo "no-cgo gpubench exit $?"; cat "$OUT/nocgo-gpubench.table"; tail -5 "$OUT/nocgo-gpubench.err"
  ;;
matmul)
  # The matrix products on the GPU from both builds: cuBLAS through the cgo and the
  # purego binding, the generated kernel, the fallback without cuBLAS, the binding's
  # fake-library tests; then gpubench's cuBLAS rows from the no-cgo build.
  for d in $C $N; do
    T=280 pkgtest $d root 'MatMul|Gemm|Dot'
    grep -E 'library: ' "$OUT/${d#.}-root.log" | head -2
    T=60 pkgtest $d backend_cuda_cublas '.'
    T=60 pkgtest $d backend_cuda '.'
  done
  timeout 200 $N/bin/gpubench -q -peers none -run '^matmul/(float32|tf32|bfloat16|float16|float64)/4096$' \
    > "$OUT/nocgo-matmul.table" 2>&1
  echo "no-cgo gpubench matmul exit $?"; cat "$OUT/nocgo-matmul.table"
  ;;
nccl)
  T=200 pkgtest $N nccl 'NCCL|Multi'
  T=60 pkgtest $N conformance 'TestMulti'
  T=60 pkgtest $N nccl_internal_ncclapi '.'
  ;;
esac
