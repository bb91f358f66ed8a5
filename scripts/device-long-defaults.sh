#!/usr/bin/env bash
# The long rows' default passes (48 keys a thread; 28 of 8 bytes alone, 32 with values; two blocks) in one
# short call on the GPU machine: on an H200 first CuPy's and PyTorch's figures and
# gpubench's sorting rows (scripts/device-h200-sort.sh), then the settings around the
# defaults (scripts/variants-long-defaults.txt) and the long sorting tests under the best
# (scripts/device-long-tiles.sh); on another card the settings first. Build here:
#   ../shared/tools/gpu-pack -o .gpd . && go build -ldflags='-s -w' -o .gpd/bin/gpubench ./cmd/gpubench
# carry .gpd as tar.xz; then on the device: bash scripts/device-long-defaults.sh. About
# 260 s. Results in $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
export B=${B:-.gpd}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "== $gpu"
rows() { NCU=0 G=$B/bin/gpubench bash scripts/device-h200-sort.sh; }
variants() { VARIANTS=scripts/variants-long-defaults.txt bash scripts/device-long-tiles.sh; }
case $gpu in
*H200*) rows; variants ;;
*) variants; rows ;;
esac
