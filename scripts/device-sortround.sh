#!/usr/bin/env bash
# The sorting issue's device call: CuPy's and PyTorch's median and nanmedian (peers.py),
# merged into the stored peer figures; gpubench's sorting rows against them; SearchSorted's
# bucket table against none (scripts/device-searchtable.sh); the median by selection against
# the sort (GPU_QUANTILE_SELECT=0); the race-checked no-cgo
# conformance suite. Build here:
#   a folder .gpb with bin/gpubench, root.test, internal_kernel.test and packages.txt
#   (from ../shared/tools/gpu-pack -o .gpa . ./...), and
#   CGO_ENABLED=0 ../shared/tools/gpu-pack -o .gpm ./conformance; carry both as tar.xz.
# then on the device: bash scripts/device-sortround.sh. Results in $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
B=${B:-.gpb} M=${M:-.gpm} PEERS=${PEERS:-peers/h200-2026-12-03.json}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
timeout 120 python3 peers/peers.py -k '^(nan)?median/' --sizes L --no-ceilings --time-per-bench 0.3 \
  -o "$OUT/peers-median.json" 2> "$OUT/peers-median.err"
echo "== peers: exit $?"; tail -3 "$OUT/peers-median.err"
python3 - "$PEERS" "$OUT/peers-median.json" "$OUT/peers-merged.json" <<'PY'
import json, sys
old, new = (json.load(open(p)) for p in sys.argv[1:3])
for k, v in new.items():
    if isinstance(v, dict) and k != "meta" and k != "ceilings":
        old.setdefault(k, {}).update(v)
        for name, ns in v.items():
            print(f"peer {k} {name}: {ns/1e3:.1f} us")
json.dump(old, open(sys.argv[3], "w"))
PY
rows='^array/(sort|argsort|topk|unique|searchsorted|median|nanmedian)/'
timeout 200 "$B/bin/gpubench" -q -benchtime 300ms -peers "$OUT/peers-merged.json" -run "$rows" \
  -json "$OUT/sort-rows.json" > "$OUT/sort-rows.table" 2> "$OUT/sort-rows.err"
echo "== sorting rows: exit $?"; cat "$OUT/sort-rows.table"; tail -3 "$OUT/sort-rows.err"
# Median and quantile by selection (Tuning.QuantileSelect) against the sort.
mrows=$(mktemp); printf '%s\n' 'array/median/float32/2^24/16k' > "$mrows"
OLD=$B/bin/gpubench NEW=$B/bin/gpubench OLDENV=GPU_QUANTILE_SELECT=0 NEWENV= ROWS=$mrows N=${N:-3} \
  OUT=$OUT/qselect bash scripts/device-ab.sh
G=$B TABLES=${TABLES:-14 10} N=${N:-3} bash scripts/device-searchtable.sh
if [ -d "$M" ]; then
  rel=$(awk '$1=="conformance" {print $2}' "$M/packages.txt")
  (cd "$rel" && timeout 120 "$root/$M/conformance.test" -test.count=1 -test.run '^TestCUDARaceChecked$' -test.v) \
    > "$OUT/race.log" 2>&1
  echo "== no-cgo race-checked conformance: exit $? ($(grep -c -- '--- FAIL' "$OUT/race.log") failed)"
fi
