"""Issue 18, run 81: what one eager stof.attention call still costs on the host, piece by
piece (timeit, best of 5 repeats of N calls, us per call), at B1 H12 L128 d64 bigbird: the
whole call (bound launch, full path), the bound C call alone into a preallocated output, and
the Python pieces around it (signature, the dict lookup, direct_ok, torch.empty and its
variants, the stream, data_ptr), and the version-3 stof_run_views call (14 arguments) beside
the bound one (run 84 on: C API version 5, 8 arguments). Usage: python3 primitives.py OUT.json"""
import ctypes, json, sys, timeit
import torch
import stof
from stof import _eager

N = 2000
m = stof.Mask.generate("bigbird", 128)
q, k, v = [torch.randn(1, 12, 128, 64, device="cuda", dtype=torch.float16) for _ in range(3)]
o = torch.empty_like(q)
stof.attention(q, k, v, mask=m)
stof.attention(q, k, v, mask=m)
sig = _eager.signature(q, k, v, m.key, "bhld", None, "auto", (0, 0, 0))
launch = _eager.find(sig)
assert launch is not None, "no bound launch: the automatic choice is not block_wise here"
stream = _eager.current_stream(0)
plan = next(p for key, p in stof.attention.__globals__["_cache"].items() if key[0] == m.key)
err = ctypes.create_string_buffer(1024)
_views_fn = plan._lib.stof_run_views


def views(qp, kp, vp, op, s):  # the version-3 call: 14 arguments through ctypes
    _views_fn(plan._h, qp, kp, vp, op, 1, 12, None, None, None, ctypes.c_float(0.0), s, err, 1024)


def full():
    _eager.enabled = False
    try:
        stof.attention(q, k, v, mask=m)
    finally:
        _eager.enabled = True


pieces = {
    "attention (bound launch)": lambda: stof.attention(q, k, v, mask=m),
    "attention (full path)": full,
    "Launch.__call__": lambda: launch(q, k, v),
    "bound C call (preallocated out)": lambda: launch.run(q.data_ptr(), k.data_ptr(),
                                                          v.data_ptr(), o.data_ptr(), stream),
    "signature": lambda: _eager.signature(q, k, v, m.key, "bhld", None, "auto", (0, 0, 0)),
    "find": lambda: _eager.find(sig),
    "direct_ok": lambda: _eager.direct_ok(q, k, v),
    "torch.empty(shape, dtype, device)": lambda: torch.empty(q.shape, dtype=q.dtype,
                                                             device=q.device),
    "torch.empty_like(q)": lambda: torch.empty_like(q),
    "torch.empty_like(q, contiguous)": lambda: torch.empty_like(
        q, memory_format=torch.contiguous_format),
    "q.new_empty(shape)": lambda: q.new_empty(q.shape),
    "torch.empty(shape, dtype, device=int)": lambda: torch.empty(q.shape, dtype=q.dtype,
                                                                 device=0),
    "stof_run_views call (preallocated out)": lambda: views(q.data_ptr(), k.data_ptr(),
                                                            v.data_ptr(), o.data_ptr(), stream),
    "current_stream": lambda: _eager.current_stream(0),
    "3 x data_ptr": lambda: (q.data_ptr(), k.data_ptr(), v.data_ptr()),
    "q.shape + q.stride()": lambda: (q.shape, q.stride()),
    "q.get_device()": lambda: q.get_device(),
}
out = {}
for name, fn in pieces.items():
    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    best = min(timeit.repeat(fn, number=N, repeat=5)) / N * 1e6
    torch.cuda.synchronize()
    out[name] = round(best, 3)
    print(f"{name:40s} {best:8.2f} us", flush=True)
json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "calls": N,
           "us_per_call": out}, open(sys.argv[1], "w"), indent=1)
