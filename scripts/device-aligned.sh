#!/usr/bin/env bash
# One device call, in order of need, each step under its own limit: SearchSorted's rows
# and peers on an H200 (issue 21's last unmeasured figure); BenchmarkSortRunsAligned (the
# same keys sorted with every run on a line of its own and shuffled), with Nsight
# Compute's time, L2 write sectors and instructions of the first two passes of each;
# scripts/probe-scatter.cu (padded runs); scripts/device-sectors.sh (N rounds, default 2).
# Build here:
#   ../shared/tools/gpu-pack -z -o .gpb ./cmd/gpubench .        (carry .gpb.tar.xz)
# then on the device: bash scripts/device-aligned.sh. Results in $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
[ -d .gpb ] || xz -dc .gpb.tar.xz | tar -x
s=$(date +%s)
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); echo "$gpu"
if [[ "$gpu" == *H200* ]]; then
  SKIPSEARCH= N=0 bash scripts/device-sectors.sh search-only 2>&1 | tail -20
fi
echo "== at $(( $(date +%s) - s )) s: BenchmarkSortRunsAligned"
timeout 150 .gpb/root.test -test.run XXX -test.bench SortRunsAligned -test.benchtime 20x -test.count 3 > "$OUT/aligned.txt" 2>&1
echo "exit $?"; grep -E '^Benchmark|FAIL|panic' "$OUT/aligned.txt"
M=lts__t_sectors_srcunit_tex_op_write.sum,gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum
for c in aligned shuffled; do
  timeout 100 ncu --clock-control none --metrics $M -k regex:'^radix_pass$' --launch-count 4 \
    .gpb/root.test -test.run XXX -test.bench "SortRunsAligned/.*/.*/$c" -test.benchtime 1x > "$OUT/ncu-aligned-$c.txt" 2>&1
  echo "== ncu $c (passes 0-3 of the first sort): exit $?"; grep -E "lts__|gpu__time|inst_executed|dram__" "$OUT/ncu-aligned-$c.txt"
done
echo "== at $(( $(date +%s) - s )) s: probe"
(nvcc -O3 -arch=sm_90 -o /tmp/scatter scripts/probe-scatter.cu && timeout 90 /tmp/scatter) > "$OUT/probe.txt" 2>&1
echo "exit $?"; cat "$OUT/probe.txt"
echo "== at $(( $(date +%s) - s )) s: sectors"
SKIPSEARCH=1 SKIPTESTS=1 N=${N:-2} bash scripts/device-sectors.sh 2>&1 | tail -40
echo "== done at $(( $(date +%s) - s )) s"
