#!/usr/bin/env bash
# The sorting rows with CuPy's and PyTorch's figures in one call (scripts/device-h200-sort.sh;
# PROF=1 adds Nsight Compute per-kernel durations and the profiles of one middle pass of the
# sort and argsort of 2^28 float32), then BenchmarkSortShortRows. Build here:
#   ../shared/tools/gpu-pack -o .gpd . ./internal/kernel && go build -ldflags='-s -w' -o .gpd/bin/gpubench ./cmd/gpubench
#   XZ_OPT=-T0 tar -cJf .gpd.tar.xz .gpd
# then on the device (carry .gpd.tar.xz): bash scripts/device-rowsprof.sh. Results in $OUT.
set -u
tar -xJf .gpd.tar.xz
nvidia-smi --query-gpu=name --format=csv,noheader
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
NCU=${PROF:-0} G=.gpd/bin/gpubench bash scripts/device-h200-sort.sh 2>&1 | tail -60
[ "${PROF:-0}" = 1 ] && for row in 'array/argsort/float32/2\^28/16k$' 'array/sort/float32/2\^28/16k$'; do
  name=$(echo "$row" | cut -d/ -f2)
  timeout 100 ncu --clock-control none --kernel-name regex:radix_pass --launch-skip 5 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
    --section LaunchStats --section SchedulerStats \
    .gpd/bin/gpubench -q -backend cuda -large full -peers none -benchtime 20ms -run "$row" > "$OUT/prof-$name.txt" 2>&1
  echo "== profile $row: $?"
  grep -E 'Duration|Throughput|Registers|Achieved Occ|Eligible|Issued Warp|Block Limit|Dynamic Shared|Bank' "$OUT/prof-$name.txt" | sed 's/  */ /g' | head -30
done
.gpd/root.test -test.run XXX -test.bench 'SortShortRows' -test.benchtime 20x 2>&1 | grep -E 'Benchmark|^ok|FAIL'
# TESTS: a -test.run regexp of the root package's tests to run after (on this GPU).
[ -n "${TESTS:-}" ] && timeout 200 .gpd/root.test -test.run "$TESTS" -test.count 1 2>&1 | grep -E -- '--- FAIL|^ok|^FAIL|^PASS|panic' | head -20
# GOKERNEL=1: package gokernel's tests (packed with it: gpu-pack -o .gpd . ./internal/kernel ./gokernel).
[ "${GOKERNEL:-0}" = 1 ] && (cd gokernel && timeout 200 ../.gpd/gokernel.test -test.count 1 2>&1 | grep -E -- '--- FAIL|^ok|^FAIL|^PASS|panic' | head -20)
