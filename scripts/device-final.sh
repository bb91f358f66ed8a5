#!/usr/bin/env bash
# A session's closing checks on the device machine, in two calls (each under the
# device's 10 minutes; the second while the machine is still warm):
#   bash scripts/device-final.sh tests   # conformance alone (cgo), the race-checked suite
#                                        # and the decoder example from the no-cgo build,
#                                        # then every package's tests (cgo), sharded
#   bash scripts/device-final.sh nocgo   # the no-cgo build's two checks alone (where the
#                                        # two packs don't fit one call's 64 MiB)
#   bash scripts/device-final.sh bench   # chosen rows with their variants and raw
#                                        # baselines, then the whole suite against an
#                                        # earlier full run (-compare, 3% threshold)
# Build here first: ../shared/tools/gpu-pack -o .gpa (every package, cgo) and
# CGO_ENABLED=0 ../shared/tools/gpu-pack -o .gpm ./conformance ./examples/transformer/decoder;
# carry them packed (tar | xz) and unpack there. Environment: A, M (the two folders),
# OLD (the earlier full run), PEERS (stored peer figures for the chosen rows), ROWS.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
A=${A:-.gpa} M=${M:-.gpm}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
# t DIR NAME TIMEOUT ARGS...: one test binary from its package folder, log in $OUT.
t() {
  local d=$1 name=$2 to=$3; shift 3
  local rel; rel=$(awk -v n="$name" '$1 == n {print $2}' "$d/packages.txt")
  local log="$OUT/${d#.}-$name${TAG:-}.log" start=$(date +%s)
  (cd "${rel:-.}" && timeout "$to" "$root/$d/$name.test" -test.timeout "$((to - 10))s" -test.v "$@") > "$log" 2>&1
  local rc=$?
  echo "== ${d#.} $name${TAG:-}: exit $rc in $(( $(date +%s) - start ))s, $(grep -c -- '--- PASS' "$log") passed, $(grep -c -- '--- FAIL' "$log") failed, $(grep -c -- '--- SKIP' "$log") skipped"
  grep -E -- '--- FAIL|^panic:|largest difference|waiters:' "$log" | head -${LINES_:-12}
}
case "${1:-tests}" in
tests)
  t "$A" conformance 320 -test.count=1 # (TestCUDASort alone took 101 s on an H100, 2026-12-06)
  if [ -d "$M" ]; then # (else: bash scripts/device-final.sh nocgo, in a call that carries it)
    TAG=-race t "$M" conformance 100 -test.count=2 -test.run '^TestCUDARaceChecked$'
    LINES_=40 t "$M" examples_transformer_decoder 60 -test.count=5 -test.run '^TestForwardMatchesReference$'
  fi
  LINES_=40 t "$A" examples_transformer_decoder 60 -test.count=10 -test.run '^TestForwardMatchesReference$'
  G=$A T=${T:-380} J=6 FAILLINES=25 PKGS="$(awk '$1!="conformance"{print $1}' "$A/packages.txt" | tr '\n' ' ')" \
    SHARDS='TestSortLargeGPU;TestCumProd;TestCumSum|TestScan|TestCum;TestReduce;TestSort|TestArgsort;TestTopK|TestUnique|TestSearch|TestPartition|TestQuantile|TestMedian;TestMatMul|TestHalf|TestRandom|TestGemm|TestDot;TestScatter|TestGraph|TestConcat|TestIndex|TestTake|TestPut|TestPermute' \
    bash scripts/device-par.sh
  cd "$OUT" && tar -cf - *.log | xz -T0 > tests.tar.xz && rm -f *.log
  ;;
nocgo) # the no-cgo build's checks alone (a call that can't carry both packs)
  TAG=-race t "$M" conformance 100 -test.count=2 -test.run '^TestCUDARaceChecked$'
  LINES_=40 t "$M" examples_transformer_decoder 60 -test.count=5 -test.run '^TestForwardMatchesReference$'
  ;;
bench)
  rows=${ROWS:-'^(raw/)?(reference/dtod_copy|gokernel/(saxpy|transpose)(_v1)?/16k|array/permutedims/2d/16k|index/concat/.*16k|index/(take|put)/float32/random(/floor)?/16k|index/addat/float32/many(/floor)?/16k|index/bincount/many/bins(/floor)?/16k|graph/.*|hostfunc/.*|sync/stream/after_kernel|matmul/(float32|tf32|bfloat16|float16|float64)/4096|matmul/generated/.*|matmul/float32/512x1000x512\+sync|array/copyto/(cpu_to_gpu|gpu_to_cpu))$'}
  timeout 240 $A/bin/gpubench -q -benchtime 200ms -peers "${PEERS:-docs/benchmarks/h200-2026-12-02-late-peers.json}" -run "$rows" \
    -json "$OUT/rows.json" > "$OUT/rows.table" 2> "$OUT/rows.err"
  echo "== chosen rows: exit $?"; cat "$OUT/rows.table"; tail -3 "$OUT/rows.err"
  OLD=${OLD:-docs/benchmarks/h200-2026-12-02-full-cgo.json}
  g=0
  for re in '^array/[a-m]' '^array/[n-z]' '^[b-l]' '^[m-z]'; do
    g=$((g+1)); s=$(date +%s)
    timeout 150 $A/bin/gpubench -q -benchtime 200ms -peers none -run "$re" -compare "$OLD" -threshold 0.03 \
      -json "$OUT/full-$g.json" > "$OUT/full-$g.table" 2> "$OUT/full-$g.err"
    echo "== full group $g ($re): exit $? in $(( $(date +%s) - s ))s"; grep -E 'regressions|->' "$OUT/full-$g.table" "$OUT/full-$g.err" | head -30
  done
  cd "$OUT" && tar -cf - *.json *.table *.err | xz -T0 > bench.tar.xz && rm -f *.json *.table *.err
  ;;
esac
