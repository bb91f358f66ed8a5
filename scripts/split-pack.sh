#!/usr/bin/env bash
# Splits a gpu-pack folder of every package (about 59 MB as tar.xz, which with the
# working tree passes the 64 MiB a device call carries) into two, each packed as
# tar.xz: A keeps the root package, conformance, internal/... and the small packages
# (about 19 MB packed), B takes the commands, gokernel, nccl, expr, ptx, random, bench
# and the examples (about 37 MB; gpubench is left out). Carry one a call:
#   ../shared/tools/gpu-pack -o .gpa && bash scripts/split-pack.sh .gpa .gpb
#   call 1 (carry .gpa.tar.xz): xz -dc .gpa.tar.xz | tar -x && A=.gpa bash scripts/device-final.sh tests
#   call 2 (carry .gpb.tar.xz): xz -dc .gpb.tar.xz | tar -x && G=.gpb bash scripts/device-par.sh
# (device-final.sh runs conformance first, then the rest of A through device-par.sh.)
set -euo pipefail
A=${1:-.gpa} B=${2:-.gpb}
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
move=" cmd_gpubench gokernel bench nccl nccl_rendezvous nccl_internal_ncclapi expr ptx random "
# (A split already has none of B's packages: refuse, rather than leave B empty.)
grep -qE '^(cmd_gpubench|gokernel|nccl|examples_columns) ' "$A/packages.txt" || { echo "split-pack: $A holds none of the packages B takes (split already?)" >&2; exit 1; }
rm -rf "$B"; mkdir -p "$B"; cp "$A/run.sh" "$B/"
: > "$B/packages.txt"; : > "$A/packages.new"
while read -r name rel; do
  if [[ $move == *" $name "* || $name == examples_* && $name != examples_transformer_decoder ]]; then
    mv "$A/$name.test" "$B/"; echo "$name $rel" >> "$B/packages.txt"
  else
    echo "$name $rel" >> "$A/packages.new"
  fi
done < "$A/packages.txt"
mv "$A/packages.new" "$A/packages.txt"
rm -rf "$A/bin" # (gpubench: not a test; build it into the measuring call's pack)
pids=()
for d in "$A" "$B"; do XZ_OPT=-T0 tar -cJf "$d.tar.xz" "$d" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p"; done # (set -e: a failed archive fails the script)
ls -l "$A.tar.xz" "$B.tar.xz"
