#!/usr/bin/env bash
# The matrix-product measurements of issue 19 on the device machine, in one command: the
# peers' matmul figures, then gpubench's cuBLAS rows under each way of calling cuBLAS
# (GPU_CUBLAS_API, GPU_CUBLAS_WORKSPACE, PyTorch's own libcublas) and the generated
# kernel's rows under each tiling (GPU_MATMUL_TILE), back to back, the default run again
# at the end to show the drift; then the GPU tests of the products under the cublasLt
# engines. Build here first (the device has no Go):
#   mkdir -p .gpu-perf && go build -o .gpu-perf/gpubench ./cmd/gpubench &&
#   go test -c -o .gpu-perf/root.test . && tar -cJf .gpu-perf.tar.xz .gpu-perf
# then there, carrying .gpu-perf.tar.xz:
#   xz -dc .gpu-perf.tar.xz | tar -x && bash scripts/device-matmul.sh
# Results go to $OUT: one table per setting (mm-<name>.table) and summary.txt, the rows
# that matter side by side (EXTRA=1 adds tune16 and three workspace sizes). About 5 minutes (under the 10-minute limit of one command).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
P=.gpu-perf
clocks() { nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader; }
clocks

PYTHONUNBUFFERED=1 timeout "${PEERS_T:-120}" python3 peers/peers.py --select '^(matmul/|bmm/)' --time-per-bench 0.3 \
  --max-time "$(( ${PEERS_T:-120} - 20 ))" -o "$OUT/peers.json" > "$OUT/peers.log" 2>&1
echo "peers exit $?"; tail -n 2 "$OUT/peers.log"
peers=$OUT/peers.json; [ -s "$peers" ] || peers=none

# PyTorch's libcublas (its nvidia wheel), to load ours from the same file.
torchlib=$(python3 -c 'import glob, nvidia; print(([p for d in nvidia.__path__ for p in sorted(glob.glob(d + "/*/lib/libcublas.so.1[23]"))] + [""])[0])' 2>/dev/null)
echo "torch's libcublas: ${torchlib:-not found}"

LIB='^matmul/(bfloat16|float16|float64|float32|tf32)/(4096|8192)$|^matmul/float32/512x1000x512(\+sync)?$|^matmul/batched/bfloat16/'
GEN='^matmul/(generated/)?(bfloat16|float16|tf32)/4096$'
run() { # name rows env...
  local name=$1 rows=$2; shift 2
  env "$@" timeout 60 $P/gpubench -q -peers "$peers" -run "$rows" -benchtime 300ms -json "$OUT/mm-$name.json" \
    > "$OUT/mm-$name.table" 2> "$OUT/mm-$name.err"
  echo "== $name ($*): exit $? $(clocks)"
}
run default "$LIB"
run lt "$LIB" GPU_CUBLAS_API=lt
run tune "$LIB" GPU_CUBLAS_API=tune GPU_CUBLAS_TUNE_LOG=1
[ "${EXTRA:-0}" = 1 ] && run tune16 "$LIB" GPU_CUBLAS_API=tune GPU_CUBLAS_TUNE_ALGOS=16
run classic "$LIB" GPU_CUBLAS_API=classic
if [ "${EXTRA:-0}" = 1 ]; then # the workspace sizes (PyTorch gives 32 MiB on sm90, as we do)
  run ws0 "$LIB" GPU_CUBLAS_WORKSPACE=0
  run ws4 "$LIB" GPU_CUBLAS_WORKSPACE=4
  run ws128 "$LIB" GPU_CUBLAS_WORKSPACE=128
fi
[ -n "$torchlib" ] && run torchlib "$LIB" GPU_CUBLAS_LIBRARY="$torchlib"
for t in 1 2 3 4 5 6; do run "tile$t" "$GEN" GPU_MATMUL_TILE=$t; done
run default-again "$LIB"

# Side by side: each row's median under each setting (the table's second column).
{
  echo "median per setting (rows: gpubench names; columns: the settings run above)"
  for f in "$OUT"/mm-*.table; do
    n=${f##*/mm-}; n=${n%.table}
    awk -v n="$n" '$1 ~ /^matmul\// {printf "%-44s %-14s %s %s\n", $1, n, $2, $3}' "$f"
  done | sort -k1,1 -s
  echo; grep -h '^libraries:' "$OUT"/mm-default.table "$OUT"/mm-torchlib.table 2>/dev/null
  echo; grep -h 'tuning' "$OUT"/mm-tune.err | sort | uniq -c | head -20
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"

# Correctness of the other engines: the matrix-product tests on CUDA with each.
for api in lt tune classic; do
  GPU_CUBLAS_API=$api timeout 90 $P/root.test -test.run '^(TestMatMulTypes|TestMatMulTF32|TestGemm|TestDotVdot|TestMatMulStreams)$' \
    > "$OUT/test-$api.log" 2>&1
  echo "tests with GPU_CUBLAS_API=$api: exit $? $(tail -n 1 "$OUT/test-$api.log")"
done
timeout 90 $P/root.test -test.run '^TestMatMulGeneratedTiles$' > "$OUT/test-tiles.log" 2>&1
echo "TestMatMulGeneratedTiles: exit $? $(tail -n 1 "$OUT/test-tiles.log")"
