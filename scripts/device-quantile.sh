#!/usr/bin/env bash
# The quantile selection's device call, in one call under the device's 10 minutes:
# the root package's sorting, selection and AddAt NaN tests (the GPU and the
# simulator), the conformance suite, BenchmarkQuantileSelect (selection against the
# sort, one long row to 4096 short rows), CuPy's and PyTorch's median and nanmedian
# (peers.py) and gpubench's median, nanmedian and sort rows against them. Build here:
#   ../shared/tools/gpu-pack -o .gpa . ./...   and carry it as .gpa.tar.xz (tar | xz);
# then on the device: tar -xJf .gpa.tar.xz && bash scripts/device-quantile.sh.
# Environment: A (the pack, .gpa), RT (the root tests' seconds, 240), SKIPTESTS=1.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
A=${A:-.gpa}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
if [ -z "${SKIPTESTS:-}" ]; then
  tests='^(TestAddAtNaN|TestDeterministicAddAtNaN|TestQuantile.*|TestMedian.*|TestSortSizes|TestSortPatterns|TestSortAxes|TestSortRows|TestSortSegments|TestSortByKey|TestArgsortStable|TestPartition|TestTopK.*|TestUnique.*|TestSearchSorted.*)$'
  s=$(date +%s)
  timeout "${RT:-240}" "$A/root.test" -test.count=1 -test.timeout "$(( ${RT:-240} - 5 ))s" -test.v -test.run "$tests" > "$OUT/root.log" 2>&1
  echo "== root tests: exit $? in $(( $(date +%s) - s ))s, $(grep -c -- '^--- PASS' "$OUT/root.log") passed, $(grep -c -- '--- FAIL' "$OUT/root.log") failed"
  grep -E -- '--- FAIL|^panic:|Test killed|timed out' "$OUT/root.log" | head -20
  grep -E -- '^=== RUN   Test[^/]*$' "$OUT/root.log" | tail -1
  rel=$(awk '$1=="conformance" {print $2}' "$A/packages.txt")
  s=$(date +%s)
  (cd "$rel" && timeout 130 "$root/$A/conformance.test" -test.count=1 -test.timeout 125s -test.v) > "$OUT/conformance.log" 2>&1
  echo "== conformance: exit $? in $(( $(date +%s) - s ))s, $(grep -c -- '--- PASS' "$OUT/conformance.log") passed, $(grep -c -- '--- FAIL' "$OUT/conformance.log") failed"
  grep -E -- '--- FAIL|^panic:' "$OUT/conformance.log" | head -12
fi
timeout 100 "$A/root.test" -test.run XXX -test.bench QuantileSelect -test.benchtime 100x > "$OUT/qselect.txt" 2>&1
echo "== BenchmarkQuantileSelect: exit $?"; grep -E '^Benchmark|FAIL|panic' "$OUT/qselect.txt"
timeout 90 python3 peers/peers.py -k '^(nan)?median/' --sizes L --no-ceilings --time-per-bench 0.3 \
  -o "$OUT/peers-median.json" 2> "$OUT/peers-median.err"
echo "== peers: exit $?"; tail -2 "$OUT/peers-median.err"
python3 - "${PEERS:-peers/h200-2026-12-03.json}" "$OUT/peers-median.json" "$OUT/peers-merged.json" <<'PY'
import json, sys
old = json.load(open(sys.argv[1]))
try:
    new = json.load(open(sys.argv[2]))
except Exception as e:
    new = {}
    print("no new peers:", e)
for k, v in new.items():
    if isinstance(v, dict) and k not in ("meta", "ceilings"):
        old.setdefault(k, {}).update(v)
        for name, ns in v.items():
            print(f"peer {k} {name}: {ns/1e3:.1f} us")
json.dump(old, open(sys.argv[3], "w"))
PY
timeout 100 "$A/bin/gpubench" -q -benchtime 300ms -peers "$OUT/peers-merged.json" \
  -run '^array/(median|nanmedian|sort/float32|topk)/' -json "$OUT/rows.json" > "$OUT/rows.table" 2> "$OUT/rows.err"
echo "== gpubench rows: exit $?"; cat "$OUT/rows.table"; tail -2 "$OUT/rows.err"
