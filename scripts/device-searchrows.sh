#!/usr/bin/env bash
# SearchSorted's gpubench rows against PyTorch's and CuPy's (peers.py) measured in the
# same call, on whatever card this is (issue 21 asks 2.0 ms on the H200):
#   bash scripts/device-searchrows.sh GPUBENCH        (results in $OUT)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
bench=${1:?gpubench binary}
timeout 60 python3 peers/peers.py -k '^searchsorted/' --sizes L --no-ceilings --time-per-bench 0.3 \
  -o "$OUT/peers-search.json" 2> "$OUT/peers-search.err"
echo "== peers searchsorted: exit $?"; tail -3 "$OUT/peers-search.err"
timeout 60 "$bench" -q -benchtime 300ms -large full -peers "$OUT/peers-search.json" \
  -run '^(raw/)?array/searchsorted/' -json "$OUT/rows-search.json" > "$OUT/rows-search.table" 2> "$OUT/rows-search.err"
echo "== gpubench searchsorted: exit $?"; cat "$OUT/rows-search.table"; tail -2 "$OUT/rows-search.err"
