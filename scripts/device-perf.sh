#!/usr/bin/env bash
# A focused speed run on the device machine: the peers' figures for a set of keys, then
# gpubench's matching rows (cgo build) against them, the no-cgo build's launch and
# synchronization rows against the cgo build's, and the tracked-launch Go benchmark, all
# in one command (one machine, back to back). Build here first (the device has no Go):
#   mkdir -p .gpu-perf && go build -o .gpu-perf/gpubench ./cmd/gpubench &&
#   CGO_ENABLED=0 go build -o .gpu-perf/gpubench-nocgo ./cmd/gpubench &&
#   go test -c -o .gpu-perf/root.test . && tar -cJf .gpu-perf.tar.xz .gpu-perf
# then there, carrying .gpu-perf.tar.xz:
#   xz -dc .gpu-perf.tar.xz | tar -x && bash scripts/device-perf.sh
# Environment: ROWS (gpubench -run regexp), KEYS (peers.py --select regexp), SLOW (rows run
# last under their own timeout: a hang there costs only that), GOBENCH (root.test -bench),
# VARIANTS (runs of gpubench under other settings, separated by ';', each
# 'NAME ROWS_REGEXP [VAR=value ...]'), P (the folder of the binaries: .gpu-perf, or a
# gpu-pack folder: its root.test and bin/gpubench). SLOW= or GOBENCH= (set, empty) skips
# that part. Results go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
P=${P:-.gpu-perf}
gb=$P/gpubench; [ -x "$gb" ] || gb=$P/bin/gpubench
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader

ROWS=${ROWS:-'^(reference/|array/copy/16k$|array/construct|kernel/launch$|array/axpb/|array/(copy|broadcast)/(BFloat16|Float16)/|array/(reductions/reduce|accumulate)/(BFloat16|Float16)/|array/random/randn?/(BFloat16|Float16)/|array/permutedims/|array/reductions/reduce/Int64/dims=2|array/stats/|index/|matmul/)'}
KEYS=${KEYS:-'^(copy$|construct$|kernel/launch$|axpb/|(copy|broadcast)/(BFloat16|Float16)|reductions/reduce/(BFloat16|Float16|Int64/dims=2$)|accumulate/(BFloat16|Float16)|random/randn?/(BFloat16|Float16)|permutedims/|stats/|take/|put/|bincount/|concat/|scatter_add/|matmul/|bmm/|sort/|argsort/|topk/|unique/|searchsorted/)'}
SLOW=${SLOW-'^array/(sort|argsort|topk|unique|searchsorted)/'}
GOBENCH=${GOBENCH-'^BenchmarkTrackedLaunchInterleaved$'}

PYTHONUNBUFFERED=1 timeout "${PEERS_T:-240}" python3 peers/peers.py --select "$KEYS" --time-per-bench 0.3 \
  --max-time "$(( ${PEERS_T:-240} - 30 ))" -o "$OUT/peers.json" > "$OUT/peers.log" 2>&1
echo "peers exit $?"; tail -n 3 "$OUT/peers.log"
peers=$OUT/peers.json; [ -s "$peers" ] || peers=none

timeout "${ROWS_T:-240}" $gb -q -peers "$peers" -run "$ROWS" -benchtime 300ms -json "$OUT/gpubench.json" \
  -gobench "$OUT/gpubench.txt" > "$OUT/gpubench.table" 2> "$OUT/gpubench.err"
echo "gpubench exit $?"; cat "$OUT/gpubench.table"; tail -n 5 "$OUT/gpubench.err"

if [ -n "$SLOW" ]; then
  timeout "${SLOW_T:-120}" $gb -q -peers "$peers" -run "$SLOW" -benchtime 300ms -json "$OUT/gpubench-slow.json" \
    > "$OUT/gpubench-slow.table" 2> "$OUT/gpubench-slow.err"
  echo "gpubench (slow rows) exit $?"; cat "$OUT/gpubench-slow.table"; tail -n 5 "$OUT/gpubench-slow.err"
fi

if [ -n "${VARIANTS:-}" ]; then
  IFS=';' read -ra vs <<< "$VARIANTS"
  for v in "${vs[@]}"; do
    read -ra w <<< "$v"
    [ ${#w[@]} -ge 2 ] || continue
    env "${w[@]:2}" timeout "${VARIANT_T:-90}" $gb -q -peers "$peers" -run "${w[1]}" -benchtime 300ms \
      -json "$OUT/variant-${w[0]}.json" > "$OUT/variant-${w[0]}.table" 2>&1
    echo "== variant ${w[0]} (${w[*]:2}): exit $?"; grep -E '^[a-z]+/' "$OUT/variant-${w[0]}.table"
  done
fi

NG=${NG:-$P/gpubench-nocgo}
if [ -x "$NG" ]; then
  rows='^(sync/|kernel/launch$|array/construct|array/copyto/|array/copy/16k$|reference/dtod_copy$)'
  timeout 90 $gb -q -peers none -run "$rows" -benchtime 200ms -json "$OUT/cgo.json" > "$OUT/cgo.table" 2>&1
  echo "cgo rows exit $?"
  timeout 90 $NG -q -peers none -run "$rows" -benchtime 200ms -compare "$OUT/cgo.json" \
    -json "$OUT/nocgo.json" > "$OUT/nocgo.table" 2>&1
  echo "no-cgo rows (old = cgo) exit $?"; cat "$OUT/nocgo.table"
fi

if [ -n "$GOBENCH" ]; then
  timeout "${GOBENCH_T:-90}" $P/root.test -test.run '^$' -test.bench "$GOBENCH" -test.benchtime 1s -test.count 1 > "$OUT/gobench.txt" 2>&1
  echo "go bench exit $?"; grep -E '^(Benchmark|FAIL|panic)' "$OUT/gobench.txt"
fi
