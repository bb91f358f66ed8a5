#!/usr/bin/env bash
# Every packed test binary (gpu-pack) on the device machine, several at once, each from
# its package folder with its own log; the logs come back as one archive ($OUT/logs.tar.xz)
# because the device tool returns at most 8 files. The root package and conformance
# (timing-sensitive: cancellation, thread counts) go first, conformance alone.
#
#   bash scripts/device-par.sh [ROOT_REGEX] [OTHER_REGEX]      (defaults: every test)
#
# Environment: G (the packed folder, default .gpu), T (seconds per binary, default 400), J (parallel binaries, default 6),
# PKGS (space-separated package names from $G/packages.txt to run; default all),
# SHARDS (regexes separated by ';': the root package's tests in that many processes at
# once, plus one for the rest).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/logs"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
rootre=${1:-.}; otherre=${2:-.}
T=${T:-400}; J=${J:-6}; G=${G:-.gpu}
want() { [ -z "${PKGS:-}" ] || [[ " $PKGS " == *" $1 "* ]]; }
one() { # name rel regex
  local name=$1 rel=$2 re=$3 start rc
  start=$(date +%s)
  # -test.timeout before timeout's kill: a stuck test binary panics with every
  # goroutine's stack (which wait, on what) instead of dying silently.
  (cd "$root/$rel" && timeout "$T" "$root/$G/$name.test" -test.count=1 -test.timeout "$((T > 60 ? T - 20 : T))s" \
    -test.run "$re" ${SKIP:+-test.skip "$SKIP"} -test.v) > "$OUT/logs/$name.log" 2>&1
  rc=$?
  printf '%-4s %-28s %4ss pass=%-4s fail=%-3s skip=%s\n' "$([ $rc = 0 ] && echo ok || echo FAIL)" "$name" \
    "$(( $(date +%s) - start ))" "$(grep -c -- '--- PASS' "$OUT/logs/$name.log")" \
    "$(grep -c -- '--- FAIL' "$OUT/logs/$name.log")" "$(grep -c -- '--- SKIP' "$OUT/logs/$name.log")"
  [ $rc = 0 ] || grep -E -- '--- FAIL|^panic:|timed out|FAIL$' "$OUT/logs/$name.log" | head -${FAILLINES:-15}
}
export -f one; export root OUT T G
# conformance alone first (timing-sensitive), then the root package beside the others,
# which run J at a time at a lower priority.
for p in conformance; do
  rel=$(awk -v n=$p '$1==n {print $2}' $G/packages.txt)
  [ -n "$rel" ] && want $p && one $p "$rel" "$otherre"
done
# The root package in shards run at once (its GPU tests take longer than one device
# call allows in a row): each regex of SHARDS (separated by ';') is one shard, and one
# more runs everything the others don't.
rel=$(awk '$1=="root" {print $2}' $G/packages.txt)
if [ -n "$rel" ] && want root; then
  if [ -n "${SHARDS:-}" ]; then
    i=0; skip=""
    IFS=';' read -ra shards <<< "$SHARDS"
    for re in "${shards[@]}"; do
      # Each shard skips the earlier shards' tests (unanchored regexes overlap:
      # TestSort matches TestSortLargeGPU).
      i=$((i+1)); prev=$skip; skip="${skip:+$skip|}$re"
      (cd "$root/$rel" && ln -sf "$root/$G/root.test" "$root/$G/root$i.test"; SKIP="$prev" one "root$i" "$rel" "$re") &
    done
    (ln -sf "$root/$G/root.test" "$root/$G/root0.test"; SKIP="$skip" one root0 "$rel" "$rootre") &
  else
    one root "$rel" "$rootre" &
  fi
fi
awk '$1!="conformance" && $1!="root" {print $1, $2}' $G/packages.txt | while read -r n rel; do
  want "$n" && echo "$n $rel"
done | nice -n 10 xargs -r -P "$J" -L 1 bash -c 'one "$0" "$1" "'"$otherre"'"'
wait
tar -C "$OUT" -cf - logs | xz -T0 > "$OUT/logs.tar.xz" && rm -rf "$OUT/logs"
