#!/usr/bin/env bash
# gpubench under several variants (tunings, builds or both), many processes each, in
# turn, on the GPU machine; each variant against the first (scripts/abstats.py):
#   G=.gpa/bin/gpubench ROWS=scripts/sort-rows.txt VARIANTS=variants.txt bash scripts/device-variants.sh
# VARIANTS: a file of lines "name VAR=value ..." (the first line the base; a name alone:
# no settings); a word G=path runs that build instead of $G. N: processes per variant
# (3); CPUS: the cores they are pinned to (2-9); BENCHTIME (150ms); LARGE: gpubench -large
# (full). Progress lines start "run ". Writes
# $OUT/variants.tar.gz (each process's gpubench -json) and $OUT/variants.txt (the tables).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
: "${ROWS:?a file of row names}" "${VARIANTS:?a file of variants}"
N=${N:-3} CPUS=${CPUS:-2-9} BENCHTIME=${BENCHTIME:-150ms} LARGE=${LARGE:-full}
re="^($(grep -v '^\s*$' "$ROWS" | sed 's/[][\.^$*+?(){}|]/\\&/g' | paste -sd'|'))\$"
work=$(mktemp -d); start=$(date +%s)
mapfile -t lines < <(grep -v '^\s*$' "$VARIANTS")
# Each variant's name, build and settings, parsed (and its build checked) before any run.
names=(); bins=(); envss=()
for line in "${lines[@]}"; do
  read -r name envs <<< "$line"; mkdir -p "$work/$name"
  # shellcheck disable=SC2086 # envs: words
  bin=${G:-}; set -- $envs; envs=""
  for w in "$@"; do case $w in G=*) bin=${w#G=} ;; *) envs="$envs $w" ;; esac; done
  : "${bin:?gpubench for variant $name: G or a G= word}"
  names+=("$name"); bins+=("$bin"); envss+=("$envs")
done
for i in $(seq 1 "$N"); do
  for v in "${!names[@]}"; do
    name=${names[$v]}
    # shellcheck disable=SC2086 # envs: words VAR=value
    env ${envss[$v]} taskset -c "$CPUS" timeout 120 "${bins[$v]}" -q -peers none -large "$LARGE" -benchtime "$BENCHTIME" -run "$re" \
      -json "$work/$name/run-$i.json" > "$work/$name/run-$i.txt" 2>&1
    echo "run $name $i: exit $? at $(( $(date +%s) - start )) s"
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
