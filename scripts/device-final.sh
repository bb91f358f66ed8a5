#!/usr/bin/env bash
# One device call that checks and times the array kernels' variants, measures the peers
# (CuPy, PyTorch) and runs gpubench with them, all on the same machine. Carry .gpu with
# root.test and bin/gpubench (../shared/tools/gpu-pack, then keep those two).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
t0=$(date +%s)
# 1. Both variants of the scan and transpose kernels against the CPU, then their timings
#    and the runtime's launch and copy benchmarks.
timeout 100 .gpu/root.test -test.run 'TestPermute|TestCumSumSizes|TestScanAxes|TestScanRepeatCUDA' -test.v > "$OUT/variants.log" 2>&1
echo "variant tests exit $?: $(grep -c -- '--- PASS' "$OUT/variants.log") passed"; grep -E -- '--- FAIL|panic:' "$OUT/variants.log" | head
timeout 90 .gpu/root.test -test.run '^$' -test.bench 'CumSum/1d|Permute/(transpose|permutedims)|TrackedLaunch|EvalLaunch|Launch$|BenchmarkAlloc|ArrayBandwidth' -test.benchtime 0.3s > "$OUT/bench.log" 2>&1
grep -E '^Bench' "$OUT/bench.log"
# 2. The peers, on the same machine, in the same command; figures not reached in the
#    time are taken from the earlier file of the same machine type.
PYTHONUNBUFFERED=1 timeout 200 python3 peers/peers.py --max-time 170 --time-per-bench 0.25 -o "$OUT/peers-new.json" > "$OUT/peers.log" 2>&1
echo "peers exit $?"; tail -2 "$OUT/peers.log"
python3 - "$OUT/peers-new.json" peers/h200-2026-11-30.json "$OUT/peers.json" <<'PY'
import json, sys
new, old, out = sys.argv[1:]
try:
    n = json.load(open(new))
except Exception:
    n = {}
o = json.load(open(old))
for k, v in o.items():
    if isinstance(v, dict):
        n.setdefault(k, {})
        for kk, vv in v.items():
            n[k].setdefault(kk, vv)
json.dump(n, open(out, "w"), indent=1)
PY
# 3. gpubench with those peers (SIGINT at the limit writes what was measured).
left=$(( 575 - ($(date +%s) - t0) ))
timeout -s INT "$left" .gpu/bin/gpubench -q -benchtime 250ms -peers "$OUT/peers.json" -json "$OUT/gpubench.json" \
  -gobench "$OUT/gpubench.txt" -plot "$OUT/gpubench.svg" > "$OUT/gpubench.table" 2> "$OUT/gpubench.err"
echo "gpubench exit $? after $(( $(date +%s) - t0 )) s"; cat "$OUT/gpubench.table"; tail -3 "$OUT/gpubench.err"
