#!/usr/bin/env python3
"""The variant of a variants.txt (scripts/device-variants.sh's tables) whose rows, but
the rows' sort (/rows/), take the least time against the base by the geometric mean of
their new/old; prints its settings (VAR=value ...), or nothing where no variant's mean
is below 0.99. Means go to stderr.

    python3 scripts/pickvariant.py variants.txt
"""
import math
import re
import sys
best, bestg, cur, rs = None, 0.99, None, []
def done():
    global best, bestg
    if cur and rs:
        g = math.exp(sum(map(math.log, rs)) / len(rs))
        print(f"# {cur[0]}: geometric mean {g:.3f}", file=sys.stderr)
        if g < bestg:
            best, bestg = cur, g
for line in open(sys.argv[1]):
    m = re.match(r"## (\S+) \((.*)\) against", line)
    if m:
        done(); cur, rs = (m.group(1), m.group(2).strip()), []
        continue
    f = line.split()
    if cur and len(f) > 8 and f[0].startswith("array/") and "/rows/" not in f[0]:
        rs.append(float(f[-4]))
done()
if best:
    print(best[1])
