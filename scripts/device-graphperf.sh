#!/usr/bin/env bash
# Issue #22's figures in one device call: the graph rows against the raw graph baselines
# (with and without programmatic dependent launch), the host function's round trip, the
# race checker's cost on the conformance suite, and the launch benchmarks with the race
# checker off against the root package as it was before the race checker (main before the
# graphs merge, ccf08c2^1). Build here first (the device has no Go):
#   P=.gpu-graph; mkdir -p $P && go build -o $P/gpubench ./cmd/gpubench &&
#   go test -c -o $P/root.test . && go test -c -o $P/conformance.test ./conformance &&
#   rm -rf /tmp/prerace && mkdir -p /tmp/prerace && git archive ccf08c2^1 | tar -x -C /tmp/prerace &&
#   (cd /tmp/prerace && go test -c -o "$OLDPWD/$P/root-pre.test" .) && tar -cJf $P.tar.xz $P
# then there, carrying .gpu-graph.tar.xz:
#   xz -dc .gpu-graph.tar.xz | tar -x && bash scripts/device-graphperf.sh
# About 4 minutes. Results go to $OUT. PARTS (default "rows pdl gobench launch racecost")
# picks the parts.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
P=${P:-.gpu-graph}
PARTS=${PARTS:-rows pdl gobench launch racecost}
has() { [[ " $PARTS " == *" $1 "* ]]; }
unset GPU_RACECHECK GPU_EW_PDL
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader

rows='^(raw/)?(kernel/launch$|graph/|hostfunc/)'
if has rows; then
  timeout 150 $P/gpubench -q -peers none -run "$rows" -benchtime 500ms -json "$OUT/graph.json" > "$OUT/graph.table" 2> "$OUT/graph.err"
  echo "gpubench exit $?"; cat "$OUT/graph.table"; tail -n 3 "$OUT/graph.err"
fi
if has pdl; then
  GPU_EW_PDL=1 timeout 90 $P/gpubench -q -peers none -run '^(raw/)?graph/' -benchtime 500ms \
    -json "$OUT/graph-pdl.json" > "$OUT/graph-pdl.table" 2>&1
  echo "== GPU_EW_PDL=1: exit $?"; grep -E '^(raw/)?graph/' "$OUT/graph-pdl.table"
fi
if has gobench; then
  timeout 120 $P/root.test -test.run '^TestElementwisePDL$' -test.v > "$OUT/pdl-test.txt" 2>&1
  echo "TestElementwisePDL exit $?"; grep -E '^(--- |ok|FAIL|panic)' "$OUT/pdl-test.txt"
  timeout 120 $P/root.test -test.run '^$' -test.bench '^(BenchmarkGraph|BenchmarkHostFunc|BenchmarkRaceCheck)$' \
    -test.benchtime 1s > "$OUT/gobench-graph.txt" 2>&1
  echo "go bench exit $?"; grep -E '^(Benchmark|FAIL|panic)' "$OUT/gobench-graph.txt"
fi
if has launch; then
  # Race checker off (now) against before it existed, alternating binaries.
  for i in 1 2 3; do
    for b in root root-pre; do
      timeout 60 $P/$b.test -test.run '^$' -test.bench '^(BenchmarkLaunch|BenchmarkTrackedLaunch)$' -test.benchtime 1s \
        > "$OUT/launch-$b-$i.txt" 2>&1
      echo "== $b pass $i: exit $?"; grep -E '^Benchmark' "$OUT/launch-$b-$i.txt" | sed "s/^/$b /"
    done
  done
fi
if has racecost; then
  GPU_RACE_COST=1 timeout 420 $P/conformance.test -test.run '^TestCUDARaceCost$' -test.v -test.timeout 400s \
    > "$OUT/racecost.txt" 2>&1
  echo "TestCUDARaceCost exit $?"; grep -E 'racecost_test|^(--- |ok|FAIL|panic)|^    --- |race checker:' "$OUT/racecost.txt"
fi
