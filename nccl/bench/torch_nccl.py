#!/usr/bin/env python3
"""Times NCCL collectives through torch.distributed, as nccl's Go benchmarks do.

The baseline of BenchmarkNCCL (package nccl): the same collectives, sizes, element type
(float32) and in-place choices, timed the same way, in the same command:

    python3 nccl/bench/torch_nccl.py [--sizes 8M,32M,...] [--ops allreduce,...] [--world 2]

One process per GPU, spawned with torch.multiprocessing (no torchrun); they meet over
TCP on 127.0.0.1. Each collective: 3 warm-up calls, then N back-to-back calls between
two torch.cuda.synchronize() (wall clock; N = max(20, min(500, 16 GiB / size))), the
slowest rank's time. Bandwidths as nccl-tests defines them (doc/PERFORMANCE.md):
algbw = S / t, busbw = algbw * 2(n-1)/n for allreduce, (n-1)/n for allgather and
reducescatter, 1 for broadcast; S is the bytes of the largest buffer of the call;
GB = 1e9 bytes. all_reduce and broadcast run in place, all_gather_into_tensor and
reduce_scatter_tensor out of place, like the Go benchmarks.

Then, in the parent process, a 1 GiB peer copy GPU 0 -> GPU 1 (dst.copy_(src)), the
baseline of BenchmarkPeerCopy.

Prints one JSON object on stdout. NVLink multicast stays off: NCCL_NVLS_ENABLE=0 is
set here, before torch (and NCCL) load, and the spawned processes inherit it.
"""

import os

os.environ["NCCL_NVLS_ENABLE"] = "0"  # never anything else on our machines

import argparse
import json
import socket
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

OPS = ["allreduce", "allgather", "reducescatter", "broadcast"]
DEFAULT_SIZES = "8M,32M,128M,512M,1G,4G"


def parse_size(s):
    s = s.strip().upper().rstrip("B").rstrip("I")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(s)


def size_name(n):
    return f"{n >> 30}GiB" if n >= 1 << 30 else f"{n >> 20}MiB"


def bus_factor(op, n):
    if op == "allreduce":
        return 2 * (n - 1) / n
    if op in ("allgather", "reducescatter"):
        return (n - 1) / n
    return 1.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_call(op, n, world, dev):
    """Returns a function making one call of op on n float32 elements (S = 4n bytes)."""
    if op in ("allreduce", "broadcast"):
        x = torch.zeros(n, dtype=torch.float32, device=dev)
        if op == "allreduce":
            return lambda: dist.all_reduce(x)
        return lambda: dist.broadcast(x, src=0)
    per = n // world
    if op == "allgather":
        inp = torch.zeros(per, dtype=torch.float32, device=dev)
        out = torch.zeros(per * world, dtype=torch.float32, device=dev)
        return lambda: dist.all_gather_into_tensor(out, inp)
    inp = torch.zeros(per * world, dtype=torch.float32, device=dev)
    out = torch.zeros(per, dtype=torch.float32, device=dev)
    return lambda: dist.reduce_scatter_tensor(out, inp)


def worker(rank, world, port, sizes, ops, out_path):
    torch.cuda.set_device(rank)
    dev = torch.device(f"cuda:{rank}")
    dist.init_process_group(
        "nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world, device_id=dev
    )
    results = []
    for op in ops:
        for size in sizes:
            fn = make_call(op, size // 4, world, dev)
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
            dist.barrier()
            iters = max(20, min(500, (16 << 30) // size))
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(iters):
                fn()
            torch.cuda.synchronize()
            t = (time.perf_counter() - t0) / iters
            tt = torch.tensor([t], dtype=torch.float64, device=dev)
            dist.all_reduce(tt, op=dist.ReduceOp.MAX)
            t = tt.item()
            algbw = size / t / 1e9
            results.append(
                {
                    "op": op,
                    "size": size_name(size),
                    "bytes": size,
                    "iters": iters,
                    "time_us": t * 1e6,
                    "algbw_GBps": algbw,
                    "busbw_GBps": algbw * bus_factor(op, world),
                }
            )
            del fn  # frees the tensors the call holds
            torch.cuda.empty_cache()
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump(results, f)
    dist.barrier()
    dist.destroy_process_group()


def peer_copy(size=1 << 30, iters=20):
    if torch.cuda.device_count() < 2:
        return None
    src = torch.empty(size, dtype=torch.uint8, device="cuda:0")
    dst = torch.empty(size, dtype=torch.uint8, device="cuda:1")
    for _ in range(3):
        dst.copy_(src, non_blocking=True)
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)
    t0 = time.perf_counter()
    for _ in range(iters):
        dst.copy_(src, non_blocking=True)
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)
    t = (time.perf_counter() - t0) / iters
    return {"op": "peercopy", "size": size_name(size), "bytes": size, "iters": iters,
            "time_us": t * 1e6, "GBps": size / t / 1e9}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default=DEFAULT_SIZES, help="comma-separated sizes (8M, 1G, bytes)")
    ap.add_argument("--ops", default=",".join(OPS), help="comma-separated: " + ",".join(OPS))
    ap.add_argument("--world", type=int, default=0, help="ranks (default: every GPU)")
    ap.add_argument("--no-peer-copy", action="store_true")
    args = ap.parse_args()
    world = args.world or torch.cuda.device_count()
    if world < 2:
        print(json.dumps({"error": f"needs 2 GPUs, found {torch.cuda.device_count()}"}))
        sys.exit(1)
    sizes = [parse_size(s) for s in args.sizes.split(",") if s]
    ops = [o.strip().lower() for o in args.ops.split(",") if o.strip()]
    for o in ops:
        if o not in OPS:
            sys.exit(f"unknown op {o}; want {OPS}")
    with tempfile.TemporaryDirectory() as d:
        out_path = os.path.join(d, "results.json")
        mp.spawn(worker, args=(world, free_port(), sizes, ops, out_path), nprocs=world, join=True)
        with open(out_path) as f:
            results = json.load(f)
    if not args.no_peer_copy:
        pc = peer_copy()
        if pc:
            results.append(pc)
    print(
        json.dumps(
            {
                "torch": torch.__version__,
                "nccl": ".".join(map(str, torch.cuda.nccl.version())),
                "world": world,
                "devices": [torch.cuda.get_device_name(i) for i in range(world)],
                "NCCL_NVLS_ENABLE": os.environ.get("NCCL_NVLS_ENABLE"),
                "results": results,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
