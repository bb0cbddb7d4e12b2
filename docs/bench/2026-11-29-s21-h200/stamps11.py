"""Reads stamp_tree.py's stamps (11 per CTA; device run 139) and prints where a split decode
launch's time goes, as run 128's stamps.py did, with the tiles' last chunks' arrival and merge
apart. Usage: python3 stamps11.py FILE [kv_bytes_per_cta]"""
import statistics as st
import sys

rows = [list(map(int, l.split())) for l in open(sys.argv[1]).read().split("\n")[1:] if l.strip()]
kv_bytes = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
g0 = min(r[0] for r in rows)
ghz = st.median((r[8] - r[2]) / (r[1] - r[0]) for r in rows if r[1] > r[0])
us = lambda cycles: cycles / ghz / 1000.0  # noqa: E731


def show(name, vals):
    vals = sorted(vals)
    if vals:
        print(f"  {name:34s} min {vals[0]:7.2f}  median {st.median(vals):7.2f}  max {vals[-1]:7.2f} us")


print(f"{len(rows)} CTAs, SM clock {ghz:.3f} GHz, span {(max(r[1] for r in rows) - g0) / 1000:.2f} us "
      f"(first start to last end, globaltimer)")
last = [r for r in rows if r[9] == 1]
for label, sel in (("all CTAs", rows), ("merging (last) chunks", last)):
    print(label + ":")
    show("start after the first CTA's", [(r[0] - g0) / 1000 for r in sel])
    show("start -> producer past its wait", [us(r[3] - r[2]) for r in sel])
    show("start -> Q full (consumer)", [us(r[4] - r[2]) for r in sel])
    show("Q full -> first K full", [us(r[5] - r[4]) for r in sel])
    show("first K -> last block done", [us(r[6] - r[5]) for r in sel])
    show("partials + arrival (+ merge)", [us(r[7] - r[6]) for r in sel])
    show("store + release", [us(r[8] - r[7]) for r in sel])
    show("start -> end", [us(r[8] - r[2]) for r in sel])
    show("end after the first CTA's start", [(r[1] - g0) / 1000 for r in sel])
print("merging chunks, apart:")
show("blocks done -> arrival seen", [us(r[10] - r[6]) for r in last])
show("arrival seen -> merged", [us(r[7] - r[10]) for r in last])
if kv_bytes:
    rates = [kv_bytes / (us(r[6] - r[5]) * 1e-6) / 1e9 for r in rows if r[6] > r[5]]
    print(f"stream rate per CTA: median {st.median(rates):.1f} GB/s x {len(rows)} CTAs = "
          f"{st.median(rates) * len(rows) / 1000:.2f} TB/s")
