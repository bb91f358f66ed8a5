#!/usr/bin/env bash
# SearchSorted's bucket table (Tuning.SearchTable) on the GPU machine: the searchsorted
# row and its raw floor with GPU_SEARCH_TABLE=0 (none) against each of TABLES in turn,
# N processes a side (scripts/device-ab.sh), then the table's tests on the device.
# Build here:
#   rm -rf .gpu && ../shared/tools/gpu-pack -o .gpu . ./internal/kernel
#   tar -cf - .gpu | xz -6 -T4 > .gpu.tar.xz          (carry .gpu.tar.xz)
# then on the device: tar -xJf .gpu.tar.xz && bash scripts/device-searchtable.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
TABLES=${TABLES:-14 12 10} N=${N:-4} G=${G:-.gpu}
rows=$(mktemp)
printf '%s\n' 'array/searchsorted/2^26_in_2^24/16k' 'raw/array/searchsorted/2^26_in_2^24/16k' > "$rows"
for b in $TABLES; do
  OLD=$G/bin/gpubench NEW=$G/bin/gpubench OLDENV=GPU_SEARCH_TABLE=0 NEWENV=GPU_SEARCH_TABLE=$b \
    ROWS=$rows N=$N OUT=$OUT/table$b bash scripts/device-ab.sh
done
for b in 0 $TABLES; do
  (cd "$root" && GPU_SEARCH_TABLE=$b timeout 300 "$G/root.test" -test.count=1 -test.run 'TestSearchSorted' -test.v) \
    > "$OUT/test-root-table$b.log" 2>&1
  echo "root SearchSorted tests, GPU_SEARCH_TABLE=$b: exit $? ($(grep -c -- '--- FAIL' "$OUT/test-root-table$b.log") failed)"
done
rel=$(awk '$1=="internal_kernel" {print $2}' "$G/packages.txt")
(cd "$root/$rel" && timeout 300 "$root/$G/internal_kernel.test" -test.count=1 -test.run 'TestSearchTable|TestSearchTree' -test.v) \
  > "$OUT/test-kernel.log" 2>&1
echo "internal/kernel search tests: exit $? ($(grep -c -- '--- FAIL' "$OUT/test-kernel.log") failed)"
