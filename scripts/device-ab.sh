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
# scripts/device-variants.sh with the variants "old" and "new": writes its files to $OUT
# and prints scripts/abstats.py's table.
set -u
: "${OLD:?the old build's gpubench}" "${NEW:?this build's gpubench}" "${ROWS:?a file of row names}"
v=$(mktemp)
trap 'rm -f "$v"' EXIT
printf 'old G=%s %s\nnew G=%s %s\n' "$OLD" "${OLDENV:-}" "$NEW" "${NEWENV:-}" > "$v"
N=${N:-8} VARIANTS=$v bash "$(dirname "$0")/device-variants.sh"
