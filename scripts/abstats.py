#!/usr/bin/env python3
"""Compare two builds' gpubench runs, many processes each (scripts/device-variants.sh
makes such a folder for each variant against the first; scripts/device-ab.sh is its case
of two).

    python3 scripts/abstats.py DIR [THRESHOLD]

DIR holds ab-old-N.json and ab-new-N.json (gpubench -json), one per process, taken in
turn. For each row: the median over processes of each process's median, the range, the
ratio new/old, and a 95% interval for that ratio from resampling the processes
(bootstrap, 4000 draws, fixed seed). The process is the unit: one process's samples
share its placement and clocks, so they are not independent of each other.

Verdict per row, against THRESHOLD (default 0.03):
  slower    the interval lies above 1+THRESHOLD
  faster    the interval lies below 1
  same      the interval lies within [1-THRESHOLD, 1+THRESHOLD]
  unsure    otherwise (the processes' spread is wider than the question)
The raw/ rows (the driver alone, the same code in both builds) show the spread that no
code change explains. Standard library only: it runs on the GPU machine.
"""
import glob
import json
import random
import statistics as st
import sys


def load(path):
    with open(path) as f:
        return {b["name"]: b["median_ns"] for b in json.load(f)["benchmarks"] if b.get("median_ns")}


def interval(old, new, draws=4000, seed=1):
    rng = random.Random(seed)
    rs = []
    for _ in range(draws):
        o = [rng.choice(old) for _ in old]
        n = [rng.choice(new) for _ in new]
        rs.append(st.median(n) / st.median(o))
    rs.sort()
    return rs[int(0.025 * draws)], rs[int(0.975 * draws) - 1]


def main():
    d = sys.argv[1]
    thr = float(sys.argv[2]) if len(sys.argv) > 2 else 0.03
    runs = {b: [load(p) for p in sorted(glob.glob(f"{d}/ab-{b}-*.json"))] for b in ("old", "new")}
    if not runs["old"] or not runs["new"]:
        sys.exit(f"abstats: no ab-old-N.json or ab-new-N.json in {d}")
    names = [n for n in runs["old"][0] if all(n in r for r in runs["old"] + runs["new"])]
    print(f"# {len(runs['old'])} processes of the old build, {len(runs['new'])} of the new; medians in ns")
    print(f"# {'row':52s} {'old':>10s} {'range':>21s} {'new':>10s} {'range':>21s} {'new/old':>7s} {'95% interval':>15s} verdict")
    count = {}
    for name in names:
        o = [r[name] for r in runs["old"]]
        n = [r[name] for r in runs["new"]]
        ratio = st.median(n) / st.median(o)
        lo, hi = interval(o, n)
        if lo > 1 + thr:
            v = "slower"
        elif hi < 1:
            v = "faster"
        elif lo >= 1 - thr and hi <= 1 + thr:
            v = "same"
        else:
            v = "unsure"
        count[v] = count.get(v, 0) + 1
        print(f"{name:54s} {st.median(o):10.1f} [{min(o):9.1f}-{max(o):9.1f}] {st.median(n):10.1f} "
              f"[{min(n):9.1f}-{max(n):9.1f}] {ratio:7.3f} [{lo:.3f}, {hi:.3f}] {v}")
    print("# verdicts:", ", ".join(f"{k} {count[k]}" for k in sorted(count)))


if __name__ == "__main__":
    main()
