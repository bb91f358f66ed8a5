#!/usr/bin/env bash
# One device call for the elementwise fmod change (7a429c6: x % y, remainder and floor_divide of
# floats by the math library's fmod): the GPU tests of the packages it touches, then its A/B and the
# 512000+sync sort row against a813e0a's build, both builds in turn on the same card. Build here:
#   ../shared/tools/gpu-pack -o .gpf . ./internal/kernel ./expr ./ptx ./gokernel
#   go build -ldflags='-s -w' -o .gpf/gpubench ./cmd/gpubench
#   git worktree add /tmp/wt-old 7a429c6^ && (cd /tmp/wt-old && go build -ldflags='-s -w' -o "$OLDPWD/.gpf/gpubench-old" ./cmd/gpubench)
#   git worktree add /tmp/wt-a813 a813e0a && (cd /tmp/wt-a813 && go build -ldflags='-s -w' -o "$OLDPWD/.gpf/gpubench-a813" ./cmd/gpubench)
#   XZ_OPT=-T0 tar -cJf .gpf.tar.xz .gpf
# then on the device (carry .gpf.tar.xz): bash scripts/device-fmod.sh
# With AB_ONLY=1 and G naming an unpacked folder holding the three gpubench builds, it runs the
# A/B alone (a call that also runs every package's tests: scripts/device-par.sh after it).
set -u
root=$(pwd)
G=${G:-.gpf}
nvidia-smi --query-gpu=name --format=csv,noheader
if [ -z "${AB_ONLY:-}" ]; then
tar -xJf .gpf.tar.xz
(cd expr && timeout 100 ../$G/expr.test -test.count=1 2>&1 | tail -2) &
(cd ptx && timeout 150 ../$G/ptx.test -test.count=1 2>&1 | tail -2) &
(cd gokernel && timeout 150 ../$G/gokernel.test -test.count=1 2>&1 | tail -2) &
(cd internal/kernel && timeout 200 ../../$G/internal_kernel.test -test.count=1 -test.run 'Elementwise|Ew|Expr' 2>&1 | grep -E -- '--- FAIL|^ok|^FAIL|^PASS|panic' | head) &
(timeout 200 $G/root.test -test.count=1 -test.run 'FloorDivide|Remainder|NaNPolicy|Divmod|Elementwise|Eval|TestExpr|Norm' 2>&1 | grep -E -- '--- FAIL|^ok|^FAIL|^PASS|panic' | head) &
wait
echo "== tests done"
fi
peers=$root/docs/benchmarks/h200-2026-12-07-divmod-peers.json
for r in 1 2; do
  for b in gpubench-old gpubench; do echo "== $b"; timeout 60 $G/$b -q -benchtime 300ms -large full -peers "$peers" -run '^array/(floor_divide|remainder)/' 2>&1 | grep '^array'; done
  for b in gpubench-a813 gpubench; do echo "== $b"; timeout 60 $G/$b -q -benchtime 1s -peers none -run '^array/sort/float32/512000' 2>&1 | grep '^array'; done
done
