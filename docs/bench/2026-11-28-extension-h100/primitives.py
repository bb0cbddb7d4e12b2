"""Issue 18, run 88 on: what one eager stof.attention call costs on the host with the compiled
eager path (python/stof/csrc/eager_launch.cpp) against the Python bound launch and the full
path, piece by piece, at B1 H12 d64, L 128 and 512, a BigBird mask (run 88, 89) or the band mask
|i - j| < 32 that host_loop.c runs from C (run 90 on): the whole call each way,
the compiled module's call alone, the bound C call through ctypes into a preallocated output,
torch.empty_like, and an empty Python function call with the same arguments (the floor of any
Python entry point). Timing (run 89 on): windows of WINDOW back-to-back calls after a
torch.cuda.synchronize() (outside the timed region), best of WINDOWS, us per call, as
host_loop.c times the C API from C: the GPU's queue never fills, so the host never waits on
the GPU (run 88 timed 2000-call loops, where a kernel longer than the call set the pace).
Run 90 on, also each whole call's loop throughput: one event pair around 2048 back-to-back
calls, GPU us per call (best of 3), as host_loop.c measures stof_run_bound from C.
Run 91 on, with HOST_LOOP_LIB set (host_loop.c built as a shared library): the C loop of
stof_run_bound inside this process (host_loop_bound: same plan, context and stream), and the
compiled call and that C loop again on a side stream (torch's default is the legacy stream).
Usage: [HOST_LOOP_LIB=/tmp/host_loop.so] python3 primitives.py OUT.json (the module must be built: python -m stof.extension)."""
import ctypes, json, os, sys, timeit
import numpy as np
import torch
import stof
from stof import _eager, extension

WINDOW, WINDOWS = 256, 40
mod = extension.load()
assert mod is not None, extension.status()


def noop(q, k, v, mask=None, plan=None, layout="bhld", scale=None, kernel="auto",
         _block=(0, 0, 0)):
    return None


rows = {}
for L in (128, 512):
    i = np.arange(L)
    m = stof.Mask(np.abs(i[:, None] - i[None, :]) < 32)
    q, k, v = [torch.randn(1, 12, L, 64, device="cuda", dtype=torch.float16) for _ in range(3)]
    o = torch.empty_like(q)
    stof.attention(q, k, v, mask=m)
    stof.attention(q, k, v, mask=m)
    assert _eager.call_compiled is not None, extension.status()
    sig = _eager.signature(q, k, v, m.key, "bhld", None, "auto", (0, 0, 0))
    launch = _eager.find(sig)
    assert launch is not None, "no bound launch: the automatic choice is not block_wise here"
    stream = _eager.current_stream(0)
    call = _eager.call_compiled

    def bound():
        _eager.call_compiled = None
        try:
            stof.attention(q, k, v, mask=m)
        finally:
            _eager.call_compiled = call

    def full():
        _eager.enabled = False
        try:
            stof.attention(q, k, v, mask=m)
        finally:
            _eager.enabled = True

    pieces = {
        "attention (compiled path)": lambda: stof.attention(q, k, v, mask=m),
        "attention (Python bound launch)": bound,
        "attention (full path)": full,
        "compiled call alone": lambda: call(q, k, v, m, "bhld", None, "auto", (0, 0, 0)),
        "bound C call via ctypes (preallocated out)": lambda: launch.run(
            q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), stream),
        "torch.empty_like(q)": lambda: torch.empty_like(q),
        "empty Python function, same arguments": lambda: noop(q, k, v, mask=m),
        "torch.compiler.is_compiling()": torch.compiler.is_compiling,
    }
    before = mod.stats()
    out = {}
    for name, fn in pieces.items():
        for _ in range(200):
            fn()
        best = min(timeit.repeat(fn, setup=torch.cuda.synchronize, number=WINDOW,
                                 repeat=WINDOWS)) / WINDOW * 1e6
        torch.cuda.synchronize()
        out[name] = round(best, 3)
        print(f"L{L:<5d} {name:44s} {best:8.2f} us", flush=True)
    for name in ("attention (compiled path)", "attention (Python bound launch)",
                 "attention (full path)"):
        fn = pieces[name]
        best = float("inf")
        for _ in range(3):
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(2048):
                fn()
            b.record()
            b.synchronize()
            best = min(best, a.elapsed_time(b) * 1e3 / 2048)
        out[name + ", GPU per call, 2048 back to back"] = round(best, 3)
        print(f"L{L:<5d} {name + ', GPU back to back':44s} {best:8.2f} us", flush=True)
    loop_lib = os.environ.get("HOST_LOOP_LIB")
    if loop_lib:
        lib = ctypes.CDLL(loop_lib)
        lib.host_loop_bound.restype = ctypes.c_double
        lib.host_loop_bound.argtypes = [ctypes.c_void_p] * 6 + [ctypes.c_int] * 2
        side = torch.cuda.Stream()
        for where, stream_obj in (("default stream", torch.cuda.current_stream()),
                                  ("side stream", side)):
            with torch.cuda.stream(stream_obj):
                c_loop = lib.host_loop_bound(launch.run._h.value, q.data_ptr(), k.data_ptr(),
                                             v.data_ptr(), o.data_ptr(),
                                             stream_obj.cuda_stream, WINDOW, WINDOWS)
                fn = pieces["attention (compiled path)"]
                for _ in range(200):
                    fn()
                best = min(timeit.repeat(fn, setup=torch.cuda.synchronize, number=WINDOW,
                                         repeat=WINDOWS)) / WINDOW * 1e6
                torch.cuda.synchronize()
            out[f"C loop in this process, stof_run_bound, {where}"] = round(c_loop, 3)
            out[f"attention (compiled path), {where}"] = round(best, 3)
            print(f"L{L:<5d} {'C loop in process, ' + where:44s} {c_loop:8.2f} us", flush=True)
            print(f"L{L:<5d} {'attention (compiled), ' + where:44s} {best:8.2f} us", flush=True)
    after = mod.stats()
    out["compiled module (hits, misses, declined) during the loop"] = [
        a - b for a, b in zip(after, before)]
    rows[f"B1 H12 L{L} d64 band |i - j| < 32"] = out
    stof.clear_cache()
json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "window_calls": WINDOW, "windows": WINDOWS,
           "extension": extension.status(), "us_per_call": rows}, open(sys.argv[1], "w"),
          indent=1)
