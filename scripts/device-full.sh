#!/usr/bin/env bash
# The whole gpubench suite from both builds in one command (issues #17 and #25): the cgo
# build against an earlier full run (-compare OLD), then the no-cgo build against the cgo
# run just made, group by group (a timeout loses one group, not the run); then two more
# interleaved rounds of the launch, construct, synchronization and copy rows, and the
# runtime's launch and synchronization Go benchmarks from both builds. Build here first:
#   ../shared/tools/gpu-pack -z -o .gpa . ./conformance
#   CGO_ENABLED=0 ../shared/tools/gpu-pack -z -o .gpn . ./conformance
# then on the device, carrying .gpa.tar.xz and .gpn.tar.xz:
#   bash scripts/device-full.sh
# Environment: OLD (default docs/benchmarks/h200-2026-11-30-s3.json), BT (benchtime,
# default 200ms), GRPS (space-separated -run regexps), LIMIT (seconds, default 580).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
start=$(date +%s); LIMIT=${LIMIT:-580}
left() { echo $(( LIMIT - ($(date +%s) - start) )); }
C=${C:-.gpa} N=${N:-.gpn}
for d in $C $N; do [ -d "$d" ] || xz -dc "$d.tar.xz" | tar -x; done
OLD=${OLD:-docs/benchmarks/h200-2026-11-30-s3.json}
BT=${BT:-200ms}
GRPS=${GRPS:-'^array/[a-m] ^array/[n-z] ^[b-l] ^[m-z]'}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
g=0
for re in $GRPS; do
  g=$((g+1))
  t=$(( $(left) / 2 - 10 )); [ "$t" -gt 200 ] && t=200
  [ "$t" -lt 30 ] && { echo "group $g ($re): no time left"; continue; }
  s=$(date +%s)
  timeout "$t" $C/bin/gpubench -q -benchtime "$BT" -run "$re" -compare "$OLD" -threshold 0.03 \
    -json "$OUT/cgo-$g.json" > "$OUT/cgo-$g.table" 2> "$OUT/cgo-$g.err"
  echo "cgo group $g ($re): exit $? in $(( $(date +%s) - s ))s, $(grep -c . "$OUT/cgo-$g.table") lines"
  s=$(date +%s)
  timeout "$t" $N/bin/gpubench -q -benchtime "$BT" -run "$re" -compare "$OUT/cgo-$g.json" -threshold 0.03 \
    -json "$OUT/nocgo-$g.json" > "$OUT/nocgo-$g.table" 2> "$OUT/nocgo-$g.err"
  echo "no-cgo group $g ($re): exit $? in $(( $(date +%s) - s ))s"
  tail -3 "$OUT/cgo-$g.err" "$OUT/nocgo-$g.err"
done
rows='^(sync/|kernel/launch$|raw/kernel/launch$|array/construct|raw/array/construct|array/copy/16k$|reference/dtod_copy$)'
gob='^(BenchmarkDriverCall|BenchmarkLaunch|BenchmarkTrackedLaunch|BenchmarkSync)$'
: > "$OUT/cgo-gotest.txt"; : > "$OUT/nocgo-gotest.txt"
for i in 2 3; do
  [ "$(left)" -lt 60 ] && break
  timeout 60 $C/bin/gpubench -q -peers none -run "$rows" -benchtime 200ms -json "$OUT/cgo-r$i.json" > "$OUT/cgo-r$i.table" 2>&1
  timeout 60 $N/bin/gpubench -q -peers none -run "$rows" -benchtime 200ms -compare "$OUT/cgo-r$i.json" \
    -json "$OUT/nocgo-r$i.json" > "$OUT/nocgo-r$i.table" 2>&1
  echo "round $i: $(left)s left"; cat "$OUT/nocgo-r$i.table"
  [ "$(left)" -lt 50 ] && break
  (cd "$(awk '$1=="root"{print $2}' $C/packages.txt)" && timeout 40 "$root/$C/root.test" -test.run '^$' -test.bench "$gob" -test.benchtime 0.2s -test.count 1) >> "$OUT/cgo-gotest.txt" 2>&1
  (cd "$(awk '$1=="root"{print $2}' $N/packages.txt)" && timeout 40 "$root/$N/root.test" -test.run '^$' -test.bench "$gob" -test.benchtime 0.2s -test.count 1) >> "$OUT/nocgo-gotest.txt" 2>&1
done
grep -hE '^Benchmark' "$OUT/cgo-gotest.txt" | sed 's/^/cgo    /'
grep -hE '^Benchmark' "$OUT/nocgo-gotest.txt" | sed 's/^/no-cgo /'
echo "done in $(( $(date +%s) - start ))s"
