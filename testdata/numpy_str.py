# Writes numpy_str.json: str() of int64 arrays as NumPy prints them, the reference of
# format_test.go's TestPrintLikeNumPy (python3 testdata/numpy_str.py, with NumPy).
import json

import numpy as np

cases = []


def add(shape, start=0, scale=1, neg=False):
    n = int(np.prod(shape)) if len(shape) else 1
    vals = np.arange(n, dtype=np.int64) * scale + start
    if neg:
        vals = vals * np.where(np.arange(n) % 3 == 0, -1, 1)
    a = vals.reshape(shape)
    cases.append({"shape": list(shape), "start": start, "scale": scale, "neg": neg, "str": str(a)})


for sh in [(), (0,), (2, 0), (0, 3), (1,), (5,), (30,), (2, 3), (3, 1), (1, 3), (2, 3, 4), (2, 2, 3, 4),
           (1, 1, 1, 1), (1000,), (1001,), (10, 100), (100, 10), (7, 7, 7), (3, 400), (400, 3), (1, 1001),
           (1001, 1), (2, 3, 200), (2, 10, 100), (6, 6, 6, 6), (8, 8, 8), (2,) * 10, (13, 80)]:
    add(sh)
add((40,), start=-20)
add((4, 30), scale=1000001, neg=True)
add((3, 2, 200), scale=7, neg=True)
add((12, 12, 12), scale=123456789)
json.dump({"numpy": np.__version__, "cases": cases}, open("testdata/numpy_str.json", "w"), indent=1)
