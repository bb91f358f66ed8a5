#!/usr/bin/env bash
# Two builds of gpubench, many processes each, in turn, on the GPU machine: whether a row
# got slower beyond the spread that separate processes of one build show. Build here:
#   ../shared/tools/gpu-pack -z -o .gpa ./cmd/gpubench        (this build; carry .gpa.tar.xz)
# and the other build's gpubench the same way in a worktree of its commit (renamed and
# packed, as .gpo.tar.xz holding gpo/bin/gpubench-old); then on the device:
#   OLD=./gpo/bin/gpubench-old NEW=./.gpa/bin/gpubench ROWS=rows.txt bash scripts/device-ab.sh
# ROWS: a file of row names (whole names, one a line); N: processes per build (8);
# CPUS: the cores both are pinned to (taskset; 2-9, on the GPU's NUMA node on the H200
# machine); BENCHTIME: per row and process (150ms); LARGE: gpubench -large (full).
# OLDENV, NEWENV: environment settings (VAR=value, space-separated) for each side: one
# build against itself under two tunings, e.g. OLD=.gpa/bin/gpubench NEW=.gpa/bin/gpubench
# OLDENV=GPU_SEARCH_TABLE=0 NEWENV=GPU_SEARCH_TABLE=14.
# Writes $OUT/ab-old-N.json and ab-new-N.json, and prints scripts/abstats.py's table.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
: "${OLD:?the old build's gpubench}" "${NEW:?this build's gpubench}" "${ROWS:?a file of row names}"
N=${N:-8} CPUS=${CPUS:-2-9} BENCHTIME=${BENCHTIME:-150ms} LARGE=${LARGE:-full}
re="^($(grep -v '^\s*$' "$ROWS" | sed 's/[][\.^$*+?(){}|]/\\&/g' | paste -sd'|'))\$"
start=$(date +%s)
for i in $(seq 1 "$N"); do
  for b in old new; do
    bin=$NEW; envs=${NEWENV:-}; [ $b = old ] && bin=$OLD && envs=${OLDENV:-}
    # shellcheck disable=SC2086 # envs: words VAR=value
    env $envs taskset -c "$CPUS" timeout 120 "$bin" -q -peers none -large "$LARGE" -benchtime "$BENCHTIME" -run "$re" \
      -json "$OUT/ab-$b-$i.json" > "$OUT/ab-$b-$i.txt" 2>&1
    echo "ab $b $i: exit $? at $(( $(date +%s) - start )) s"
  done
done
python3 scripts/abstats.py "$OUT" | tee "$OUT/abstats.txt"
