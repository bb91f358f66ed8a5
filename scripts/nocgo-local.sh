#!/usr/bin/env bash
# Checks of the CGO_ENABLED=0 build that need no GPU, on a Linux x86-64 machine with Go
# and a C compiler (the fake driver and libraries of the tests are compiled with it):
#   bash scripts/nocgo-local.sh arm64     # the arm64 binding's tests under qemu-user
#       (apt-get install qemu-user-static gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
#   bash scripts/nocgo-local.sh root      # as root: gpubench from a root holding only
#       glibc's loader and libraries and the fake libcuda.so.1, and from an empty root
#       (fails: no ELF interpreter) and its -tags gpu_nodlopen build (CPU backend)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

case "${1:-}" in
arm64)
  for p in internal/dl backend/cuda/cu backend/cuda/cublas nccl/internal/ncclapi; do
    GOARCH=arm64 CGO_ENABLED=0 go test -c -o "$tmp/t.test" "./$p"
    # The child-process tests re-execute the binary, which qemu-user does not follow.
    (cd "$p" && CC=aarch64-linux-gnu-gcc QEMU_LD_PREFIX=/usr/aarch64-linux-gnu \
      qemu-aarch64-static "$tmp/t.test" -test.short -test.v \
      -test.skip 'TestLoadFailures|TestMissingLibrary|TestDefaultSearch|TestNotNCCL|TestUserNVLSKept|TestConcurrentFirstUse|TestNotCublas|TestCreateFails|TestLtBeside' 2>&1) |
      grep -E '^(--- |ok|PASS|FAIL|panic)|mechanism|binding'
  done
  ;;
root)
  CGO_ENABLED=0 go build -o "$tmp/gpubench" ./cmd/gpubench
  CGO_ENABLED=0 go build -tags gpu_nodlopen -o "$tmp/gpubench-static" ./cmd/gpubench
  file "$tmp/gpubench" "$tmp/gpubench-static"
  mini=$tmp/mini; mkdir -p "$mini/lib64" "$mini/lib/x86_64-linux-gnu" "$mini/usr/lib" "$mini/tmp"
  cp /lib64/ld-linux-x86-64.so.2 "$mini/lib64/"
  cp /lib/x86_64-linux-gnu/{libc.so.6,libdl.so.2,libpthread.so.0} "$mini/lib/x86_64-linux-gnu/"
  ${CC:-gcc} -shared -fPIC -O2 -o "$mini/usr/lib/libcuda.so.1" backend/cuda/cu/testdata/fakecuda.c
  cp "$tmp/gpubench" "$mini/"
  echo "== a root with glibc and the (fake) driver only:"; find "$mini" -type f | sed "s#$mini##"
  chroot "$mini" /gpubench -backend cuda -run '^kernel/launch$' -benchtime 200ms -count 3
  empty=$tmp/empty; mkdir -p "$empty"; cp "$tmp/gpubench" "$tmp/gpubench-static" "$empty/"
  echo "== an empty root: the CGO_ENABLED=0 build"; chroot "$empty" /gpubench -list || true
  echo "== an empty root: the -tags gpu_nodlopen build"
  chroot "$empty" /gpubench-static -backend cpu -run '^kernel/launch$' -benchtime 100ms -count 2
  ;;
*)
  sed -n '2,9p' "$0"; exit 2 ;;
esac
