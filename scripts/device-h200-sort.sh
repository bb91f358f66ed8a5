#!/usr/bin/env bash
# The sorting issue's figures on this card: PyTorch's and CuPy's (peers.py) measured in
# this call, gpubench's sorting and searchsorted rows against them, then the passes' L2
# prefetch tunings against the defaults (scripts/device-variants.sh, VARIANTS). Build here:
#   go build -ldflags='-s -w' -o .gpa/bin/gpubench ./cmd/gpubench; carry .gpa as tar.xz
# then on the device: bash scripts/device-h200-sort.sh [VARIANTS]. Results in $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
G=${G:-.gpa/bin/gpubench}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,temperature.gpu --format=csv,noheader
timeout 200 python3 peers/peers.py -k '^(sort|argsort|topk|unique|searchsorted)/' --sizes S,L --no-ceilings \
  --time-per-bench 0.3 -o "$OUT/peers-sort.json" 2> "$OUT/peers-sort.err"
echo "== peers: exit $?"; tail -3 "$OUT/peers-sort.err"
timeout 200 "$G" -q -benchtime 300ms -large full -peers "$OUT/peers-sort.json" \
  -run '^(raw/)?array/(sort|argsort|topk|unique|searchsorted)/' -json "$OUT/sort-rows.json" > "$OUT/sort-rows.table" 2> "$OUT/sort-rows.err"
echo "== rows: exit $?"; cat "$OUT/sort-rows.table"; tail -3 "$OUT/sort-rows.err"
# Each kernel's time in one sort and one argsort of 2^28 float32 (Nsight Compute, the
# GPU's own clocks): the histogram, the plan and the four passes.
# NCU=0 leaves this out.
n=0
[ "${NCU:-1}" = 0 ] || for row in 'array/sort/float32/2\^28/16k$' 'array/argsort/float32/2\^28/16k$'; do
  n=$((n+1))
  timeout 120 ncu --clock-control none --kernel-name regex:radix --launch-skip 6 --launch-count 6 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    "$G" -q -backend cuda -large full -peers none -benchtime 20ms -run "$row" > "$OUT/ncu-$n.txt" 2>&1
  echo "== kernels of $row: exit $?"
  grep -E '^  radix|gpu__time_duration|dram__bytes' "$OUT/ncu-$n.txt" | sed 's/  */ /g'; tail -2 "$OUT/ncu-$n.txt"
done
if [ -n "${1:-}" ]; then
  ROWS=${ROWS:-scripts/sort-long-rows.txt} VARIANTS=$1 G=$G bash scripts/device-variants.sh
fi
