#!/usr/bin/env bash
# The long rows' passes with larger tiles (scripts/variants-long-tiles.txt: 32 to 48 keys
# a thread under two blocks a multiprocessor, past 48 KiB in dynamic shared memory)
# against the defaults, in one call on the GPU machine: the variants (two processes each
# in turn); with the best one's settings, where one beats the defaults
# (scripts/pickvariant.py), the sorting tests that take the long passes; with PEERS=1
# then CuPy's and PyTorch's figures and gpubench's sorting rows under those settings
# (scripts/device-h200-sort.sh, about 100 s more). Build here:
#   ../shared/tools/gpu-pack -o .gpd . && go build -ldflags='-s -w' -o .gpd/bin/gpubench ./cmd/gpubench
# carry .gpd as tar.xz; then on the device: bash scripts/device-long-tiles.sh. About 450 s
# on the H200 (the variants 250, the tests 200). Results in $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
B=${B:-.gpd}
G=$B/bin/gpubench ROWS=scripts/sort-long-rows.txt VARIANTS=${VARIANTS:-scripts/variants-long-tiles.txt} N=${N:-2} \
  bash scripts/device-variants.sh 2>&1 | grep -v '^run '
best=$(python3 scripts/pickvariant.py "$OUT/variants.txt")
echo "== best: ${best:-the defaults}"
t() { # name, then root.test's flags
  local name=$1; shift
  # shellcheck disable=SC2086 # best: words VAR=value
  env $best timeout 300 "$B/root.test" -test.count=1 -test.v "$@" > "$OUT/t-$name.log" 2>&1
  echo "== $name: exit $? ($(grep -c -- '--- PASS' "$OUT/t-$name.log") passed, $(grep -c -- '--- FAIL' "$OUT/t-$name.log") failed)"
  grep -- '--- FAIL' "$OUT/t-$name.log" | head -10
}
t large -test.run '^TestSortLargeGPU$' &
t past -test.run '^TestSortPast2to31GPU$' &
wait
if [ "${PEERS:-0}" = 1 ]; then
  # shellcheck disable=SC2086
  env $best NCU=0 G=$B/bin/gpubench bash scripts/device-h200-sort.sh
fi
