#!/usr/bin/env bash
# Profiles the kernels of a few gpubench rows with Nsight Compute (hardware counters:
# pipe utilization, stall reasons, memory throughput). Build first, here:
#   ../shared/tools/gpu-pack .
# then on the device: bash scripts/device-profile.sh 'REGEX' ...   (carry .gpu).
# Each argument is a gpubench -run regexp; reports go to $OUT/prof-N.txt.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
pipes=""
for p in alu fma fmaheavy fmalite fp64 xu lsu adu uniform cbu; do
  pipes+="sm__inst_executed_pipe_$p.avg.pct_of_peak_sustained_active,"
done
pipes+="sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_xu_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active"
i=0
for re in "$@"; do
  i=$((i+1))
  echo "== profile $re"
  timeout 240 ncu --clock-control none --launch-skip 20 --launch-count 2 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
    --section SchedulerStats --section Occupancy --section LaunchStats --section InstructionStats \
    --metrics "$pipes,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
    .gpu/bin/gpubench -q -backend cuda -large full -peers none -ref-gbps 4200 -benchtime 50ms -run "$re" > "$OUT/prof-$i.txt" 2>&1
  echo "exit $?"
  grep -E 'random|scan|Duration|Throughput|pipe_|issue_active|inst_executed.sum|Registers|Achieved Occ|Stall|Warp Cycles|No Eligible|Issued Warp|issue_stalled' "$OUT/prof-$i.txt" | head -70
done
