#!/usr/bin/env bash
# The second of two closing device calls where every package's binaries don't fit one
# call's 64 MiB: the packages left out of the first call's pack (G, default .gpy: every
# package but those of `A=.gpx bash scripts/device-final.sh tests`), then two builds of
# gpubench on the sorting rows (scripts/device-ab.sh: OLD and NEW, ROWS default
# scripts/sort-rows.txt, N rounds, default 3), then on an H200 SearchSorted's rows against
# PyTorch's and CuPy's (issue 21's figure). Carry .gpy.tar.xz and the two gpubench packs
# (.gpo.tar.xz: gpo/bin/gpubench-old; .gpn.tar.xz: gpn/bin/gpubench-new).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
G=${G:-.gpy}
[ -d "$G" ] || xz -dc "$G.tar.xz" | tar -x
[ -d gpo ] || xz -dc .gpo.tar.xz | tar -x
[ -d gpn ] || xz -dc .gpn.tar.xz | tar -x
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); echo "$gpu"
s=$(date +%s)
G=$G T=${T:-200} J=6 bash scripts/device-par.sh 2>&1 | tail -45
echo "== packages done at $(( $(date +%s) - s )) s"
OLD=${OLD:-gpo/bin/gpubench-old} NEW=${NEW:-gpn/bin/gpubench-new} ROWS=${ROWS:-scripts/sort-rows.txt} N=${N:-3} \
  bash scripts/device-ab.sh 2>&1 | grep -v "^run " | tail -25
echo "== A/B done at $(( $(date +%s) - s )) s"
if [[ "$gpu" == *H200* ]]; then
  bash scripts/device-searchrows.sh "${NEW:-gpn/bin/gpubench-new}"
fi
