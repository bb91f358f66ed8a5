#!/usr/bin/env bash
# SearchSorted's cache hints (Tuning.SearchHints) and global bucket table
# (Tuning.SearchTableGlobal) on the GPU machine, in one call: the searchsorted row and
# its raw floor without hints against each level (N processes a side,
# scripts/device-ab.sh), then without the table against 20 and 22 bits with hints (N2
# a side) (ROUND2=1: with hints 2, against the carveouts 65 and 100 and the shared
# tables of 12 and 14 bits instead; ROUND3=1: with hints 2, against fewer shared
# levels and smaller blocks instead; ROUND4=1: hints 2 against 3 and 4 instead);
# BenchmarkSearchSortedDist (four key distributions,
# three settings); PyTorch's and CuPy's searchsorted (peers.py) and gpubench's row
# against them under both settings; the search tests (the root package's under both
# settings, internal/kernel's with CUDA 13's ptxas). SKIPBENCH=1 leaves out the
# benchmark, the peers and the rows, SKIPTESTS=1 the tests; HINTS sets
# GPU_SEARCH_HINTS for the rows and the tests. Build here:
#   rm -rf .gps && ../shared/tools/gpu-pack -o .gps . ./internal/kernel ./cmd/gpubench
#   tar -cf - .gps | xz -6 -T0 > .gps.tar.xz          (carry .gps.tar.xz)
# then on the device: tar -xJf .gps.tar.xz && bash scripts/device-searchglobal.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
G=${G:-.gps} N=${N:-3} N2=${N2:-2}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
rows=$(mktemp)
printf '%s\n' 'array/searchsorted/2^26_in_2^24/16k' 'raw/array/searchsorted/2^26_in_2^24/16k' > "$rows"
ab() { # name N oldenv newenv
  OLD=$G/bin/gpubench NEW=$G/bin/gpubench OLDENV="$3" NEWENV="$4" ROWS=$rows N=$2 OUT=$OUT/$1 \
    bash scripts/device-ab.sh 2>&1 | grep -v '^run '
}
if [ -n "${ROUND4:-}" ]; then
  echo "== A/B: hints 2 against 3"; ab h3 "$N" GPU_SEARCH_HINTS=2 GPU_SEARCH_HINTS=3
  echo "== A/B: hints 2 against 4"; ab h4 "$N" GPU_SEARCH_HINTS=2 GPU_SEARCH_HINTS=4
elif [ -n "${ROUND3:-}" ]; then
  h="GPU_SEARCH_HINTS=2"
  for v in "GPU_SEARCH_SHARED=4 GPU_SEARCH_BLOCK=1024" "GPU_SEARCH_SHARED=4 GPU_SEARCH_BLOCK=512 GPU_SEARCH_QUERIES=4" \
    "GPU_SEARCH_SHARED=3 GPU_SEARCH_BLOCK=512 GPU_SEARCH_QUERIES=4" "GPU_SEARCH_SHARED=4 GPU_SEARCH_BLOCK=512 GPU_SEARCH_QUERIES=4 GPU_SEARCH_CARVEOUT=16" \
    "GPU_SEARCH_SHARED=4 GPU_SEARCH_BLOCK=256 GPU_SEARCH_QUERIES=4 GPU_SEARCH_BLOCKS_PER_SM=8" "GPU_SEARCH_SHARED=4 GPU_SEARCH_BLOCK=512 GPU_SEARCH_QUERIES=8"; do
    echo "== A/B: hints 2 against hints 2 and $v"; ab "r3-$(echo "$v" | tr -dc '0-9')" "$N2" "$h" "$h $v"
  done
elif [ -n "${ROUND2:-}" ]; then
  h="GPU_SEARCH_HINTS=2"
  echo "== A/B: hints 2 against hints 2 and carveout 65"; ab c65 "$N" "$h" "$h GPU_SEARCH_CARVEOUT=65"
  echo "== A/B: hints 2 against hints 2 and carveout 100"; ab c100 "$N" "$h" "$h GPU_SEARCH_CARVEOUT=100"
  echo "== A/B: hints 2 against hints 2 and a shared table of 12 bits"; ab t12 "$N" "$h" "$h GPU_SEARCH_TABLE=12"
  echo "== A/B: hints 2 against hints 2 and a shared table of 14 bits"; ab t14 "$N" "$h" "$h GPU_SEARCH_TABLE=14"
else
  echo "== A/B: hints 0 against 1"; ab h1 "$N" GPU_SEARCH_HINTS=0 GPU_SEARCH_HINTS=1
  echo "== A/B: hints 0 against 2"; ab h2 "$N" GPU_SEARCH_HINTS=0 GPU_SEARCH_HINTS=2
  echo "== A/B: no table against 20 bits, hints 2"; ab g20h2 "$N2" GPU_SEARCH_TABLE_GLOBAL=0 "GPU_SEARCH_TABLE_GLOBAL=20 GPU_SEARCH_HINTS=2"
  echo "== A/B: no table against 22 bits, hints 2"; ab g22h2 "$N2" GPU_SEARCH_TABLE_GLOBAL=0 "GPU_SEARCH_TABLE_GLOBAL=22 GPU_SEARCH_HINTS=2"
fi
if [ -z "${SKIPBENCH:-}" ]; then
  timeout 150 "$G/root.test" -test.run XXX -test.bench SearchSortedDist -test.benchtime 20x > "$OUT/bench-dist.txt" 2>&1
  echo "== BenchmarkSearchSortedDist: exit $?"; grep -E '^Benchmark|FAIL|panic' "$OUT/bench-dist.txt"
  timeout 60 python3 peers/peers.py -k '^searchsorted/' --sizes L --no-ceilings --time-per-bench 0.3 \
    -o "$OUT/peers-search.json" 2> "$OUT/peers-search.err"
  echo "== peers: exit $?"; tail -3 "$OUT/peers-search.err"
  for b in 0 20; do
    env ${HINTS:+GPU_SEARCH_HINTS=$HINTS} GPU_SEARCH_TABLE_GLOBAL=$b timeout 60 "$G/bin/gpubench" -q -benchtime 300ms -large full -peers "$OUT/peers-search.json" \
      -run '^(raw/)?array/searchsorted/' -json "$OUT/rows-g$b.json" > "$OUT/rows-g$b.table" 2> "$OUT/rows-g$b.err"
    echo "== gpubench, GPU_SEARCH_TABLE_GLOBAL=$b: exit $?"; cat "$OUT/rows-g$b.table"; tail -2 "$OUT/rows-g$b.err"
  done
fi
[ -n "${SKIPTESTS:-}" ] && exit 0
for b in 0 20; do
  env ${HINTS:+GPU_SEARCH_HINTS=$HINTS} GPU_SEARCH_TABLE_GLOBAL=$b timeout 200 "$G/root.test" -test.count=1 -test.run 'TestSearchSorted' -test.v > "$OUT/test-root-g$b.log" 2>&1
  echo "root SearchSorted tests, GPU_SEARCH_TABLE_GLOBAL=$b: exit $? ($(grep -c -- '^--- PASS' "$OUT/test-root-g$b.log") passed, $(grep -c -- '--- FAIL' "$OUT/test-root-g$b.log") failed)"
  grep -E -- '--- FAIL|^panic:' "$OUT/test-root-g$b.log" | head
done
rel=$(awk '$1=="internal_kernel" {print $2}' "$G/packages.txt")
(cd "$root/$rel" && timeout 200 "$root/$G/internal_kernel.test" -test.count=1 -test.run 'TestSearchTable|TestSearchTree|TestSelectPtxas|TestSearchPtxas' -test.v) \
  > "$OUT/test-kernel.log" 2>&1
echo "internal/kernel search tests: exit $? ($(grep -c -- '--- FAIL' "$OUT/test-kernel.log") failed)"
grep -E -- '--- FAIL|^panic:' "$OUT/test-kernel.log" | head
grep -E 't20g|t22g|searchtable' "$OUT/test-kernel.log" | grep registers | head
