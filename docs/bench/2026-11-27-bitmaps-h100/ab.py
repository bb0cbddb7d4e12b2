#!/usr/bin/env python3
"""A/B of ours (graph replay, median us per call) from mha_compare.py JSON files.
Usage: ab.py OUTDIR TAG ROUNDS  -- reads OUTDIR/TAG_{a,b}_r{1..ROUNDS}.json (a = old tree, b = new),
prints per row every round and old/new of the best round of each, then the geomean over rows
and per group (pattern, batch, d). Rows missing on either side are left out."""
import json, math, sys
from collections import defaultdict

out, tag, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])

def load(path):
    try:
        res = json.load(open(path))["results"]
    except Exception:
        return {}
    return {r["name"]: r["methods"]["ours"]["graph_latency"]["median_us"]
            for r in res if "methods" in r and "graph_latency" in r["methods"].get("ours", {})}

R = {(t, k): load(f"{out}/{tag}_{t}_r{k}.json") for t in "ab" for k in range(1, rounds + 1)}
names = [n for n in R[("a", 1)] if all(n in R[(t, k)] for t in "ab" for k in range(1, rounds + 1))]
hdr = " ".join(f"old r{k:<3d}" for k in range(1, rounds + 1)) + " " + \
      " ".join(f"new r{k:<3d}" for k in range(1, rounds + 1))
print(f"{'row':34s} {hdr}  old/new")
logs, groups = [], defaultdict(list)
for n in names:
    o = min(R[("a", k)][n] for k in range(1, rounds + 1))
    q = min(R[("b", k)][n] for k in range(1, rounds + 1))
    vals = " ".join(f"{R[('a', k)][n]:8.2f}" for k in range(1, rounds + 1)) + " " + \
           " ".join(f"{R[('b', k)][n]:8.2f}" for k in range(1, rounds + 1))
    print(f"{n:34s} {vals}  {o / q:.3f}")
    logs.append(math.log(o / q))
    parts = n.split("/")
    groups[parts[0]].append(math.log(o / q))
    groups["/".join(parts[2:4])].append(math.log(o / q))
g = lambda v: math.exp(sum(v) / max(1, len(v)))
print(f"geomean old/new (best of {rounds}) {g(logs):.4f} over {len(logs)} rows")
for k in sorted(groups):
    print(f"  {k:20s} {g(groups[k]):.4f} ({len(groups[k])} rows)")
