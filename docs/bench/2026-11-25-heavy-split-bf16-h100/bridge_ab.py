"""Issue 18, run 67: the eager call's cost per call, same process, same inputs, three ways:
stof.attention (direct path: no dispatcher), torch.ops.stof.attention (the registered op
through the dispatcher: what every eager call cost before), and the bare ctypes call into a
preallocated output. Back-to-back calls: host us to issue one call (perf_counter) and GPU us
per call (one event pair around n calls)."""
import json, sys, time
import torch
import stof
from stof import _capi

H, D, N = 12, 64, 400
rows = []
for B, L in ((1, 128), (8, 512), (16, 2048)):
    for pat in ("bigbird", "sliding_window"):
        m = stof.Mask.generate(pat, L)
        g = torch.Generator(device="cuda").manual_seed(1)
        q, k, v = [torch.randn((B, H, L, D), generator=g, device="cuda", dtype=torch.float16)
                   for _ in range(3)]
        o = torch.empty_like(q)
        direct = lambda: stof.attention(q, k, v, mask=m)
        via_op = lambda: torch.ops.stof.attention(q, k, v, m.key, "bhld", 0.0, "auto", 0, 0, 0)
        direct(); torch.cuda.synchronize()
        plan = next(p for key, p in stof.attention.__globals__["_cache"].items() if key[0] == m.key)
        stream = torch.cuda.current_stream().cuda_stream
        raw = lambda: plan.run_views(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), B, H,
                                     None, None, None, 0.0, stream)
        same = torch.equal(direct(), via_op())
        row = {"batch": B, "seq": L, "mask": pat, "same_bits": same}
        for name, fn in (("direct", direct), ("dispatcher", via_op), ("ctypes", raw)) * 2:
            for _ in range(20): fn()
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0 = time.perf_counter(); a.record()
            for _ in range(N): fn()
            b.record(); host = (time.perf_counter() - t0) / N * 1e6
            torch.cuda.synchronize()
            gpu = a.elapsed_time(b) * 1e3 / N
            prev = row.get(name)
            if prev is None or host < prev["host_us"]:
                row[name] = {"host_us": round(host, 2), "gpu_us_per_call": round(gpu, 2)}
        print(json.dumps(row), flush=True)
        rows.append(row)
        stof.clear_cache()
json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "calls": N,
           "rows": rows}, open(sys.argv[1], "w"), indent=1)
