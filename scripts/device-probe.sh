#!/usr/bin/env bash
# Where a gpubench row's time goes, kernel by kernel, with Nsight Compute: for each row, the
# duration of every kernel it launches (one pass of ncu per kernel, gpu__time_duration), then
# a full profile (every section, and the SASS with its stall samples) of the kernel it
# launches most often, or of the kernels whose names match KREGEX. Build here first:
#   ../shared/tools/gpu-pack -z -o .gpa ./cmd/gpubench     (carry .gpa.tar.xz)
# then on the device: bash scripts/device-probe.sh 'ROW[@KREGEX]' ...
# ROW is a gpubench name (matched whole). Reports: $OUT/probe-N-times.csv, probe-N.txt (the
# sections) and probe-N-sass.csv (the source page). Environment: P (the pack, default .gpa),
# SKIP (launches of the chosen kernel to skip before profiling, default 2).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
P=${P:-.gpa}
[ -d "$P" ] || xz -dc "$P.tar.xz" | tar -x
bench=(./"$P"/bin/gpubench -q -backend cuda -large full -peers none -ref-gbps 4200 -benchtime 1ms -warmup 0 -warmup-count 1 -count 5)
i=0
for spec in "$@"; do
  i=$((i+1)); row=${spec%%@*}; kre=""; [ "$spec" != "$row" ] && kre=${spec#*@}
  esc=$(printf '%s' "$row" | sed 's/[][\.^$*+?(){}|]/\\&/g')
  echo "== $row"
  timeout 200 ncu --clock-control none --csv --metrics gpu__time_duration.sum --launch-count 200 \
    "${bench[@]}" -run "^$esc\$" > "$OUT/probe-$i-times.csv" 2> "$OUT/probe-$i-times.err"
  echo "times: exit $?"
  pick=$(python3 - "$OUT/probe-$i-times.csv" "$kre" <<'EOF'
import csv, re, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows:
    sys.exit(0)
h = rows[0]
k, v = h.index("Kernel Name"), h.index("Metric Value")
n, t = collections.Counter(), collections.defaultdict(list)
for r in rows[1:]:
    try:
        t[r[k]].append(float(r[v].replace(",", "")))
    except ValueError:
        continue
    n[r[k]] += 1
for name, c in n.most_common():
    ts = sorted(t[name])
    print(f"  {c:4d} x {ts[len(ts)//2]:10.2f} (median, {rows[1][h.index('Metric Unit')]})  {name[:110]}", file=sys.stderr)
kre = sys.argv[2]
if kre:
    print(kre)
elif n:
    print("regex:^" + re.escape(n.most_common(1)[0][0].split("(")[0]) + "$")
EOF
  2> "$OUT/probe-$i-summary.txt")
  cat "$OUT/probe-$i-summary.txt" | head -25
  echo "profiling kernel $pick"
  [ -n "$pick" ] || continue
  timeout 200 ncu --clock-control none --set full --import-source no -k "$pick" --launch-skip "${SKIP:-2}" --launch-count 1 \
    -o "$OUT/probe-$i" "${bench[@]}" -run "^$esc\$" > "$OUT/probe-$i.log" 2>&1
  echo "full: exit $?"
  ncu -i "$OUT/probe-$i.ncu-rep" > "$OUT/probe-$i.txt" 2>&1
  ncu -i "$OUT/probe-$i.ncu-rep" --page source --csv --print-source sass > "$OUT/probe-$i-sass.csv" 2>&1
  rm -f "$OUT/probe-$i.ncu-rep"
  grep -E 'Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|No Eligible' "$OUT/probe-$i.txt" | head -14
done
