#!/usr/bin/env bash
# One gpubench build under several tunings (environment settings), many processes each,
# in turn, on the GPU machine; each tuning against the first (scripts/abstats.py):
#   G=.gpa/bin/gpubench ROWS=scripts/sort-rows.txt VARIANTS=variants.txt bash scripts/device-variants.sh
# VARIANTS: a file of lines "name VAR=value ..." (the first line the base; a name alone:
# no settings). N: processes per tuning (3); CPUS: the cores they are pinned to (2-9);
# BENCHTIME (150ms). Writes $OUT/variants.tar.gz (each process's gpubench -json) and
# $OUT/variants.txt (the tables).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
: "${G:?gpubench}" "${ROWS:?a file of row names}" "${VARIANTS:?a file of tunings}"
N=${N:-3} CPUS=${CPUS:-2-9} BENCHTIME=${BENCHTIME:-150ms}
re="^($(grep -v '^\s*$' "$ROWS" | sed 's/[][\.^$*+?(){}|]/\\&/g' | paste -sd'|'))\$"
work=$(mktemp -d); start=$(date +%s)
mapfile -t lines < <(grep -v '^\s*$' "$VARIANTS")
for i in $(seq 1 "$N"); do
  for line in "${lines[@]}"; do
    read -r name envs <<< "$line"; mkdir -p "$work/$name"
    # shellcheck disable=SC2086 # envs: words VAR=value
    env $envs taskset -c "$CPUS" timeout 120 "$G" -q -peers none -large full -benchtime "$BENCHTIME" -run "$re" \
      -json "$work/$name/run-$i.json" > "$work/$name/run-$i.txt" 2>&1
    echo "$name $i: exit $? at $(( $(date +%s) - start )) s"
  done
done
read -r base _ <<< "${lines[0]}"
for line in "${lines[@]:1}"; do
  read -r name envs <<< "$line"; c="$work/cmp-$name"; mkdir -p "$c"
  for i in $(seq 1 "$N"); do
    ln -s "$work/$base/run-$i.json" "$c/ab-old-$i.json"; ln -s "$work/$name/run-$i.json" "$c/ab-new-$i.json"
  done
  { echo "## $name ($envs) against $base"; python3 scripts/abstats.py "$c"; echo; } | tee -a "$OUT/variants.txt"
done
tar -czf "$OUT/variants.tar.gz" -C "$work" $(cd "$work" && ls -d -- * | grep -v '^cmp-')
