"""Issue 18: where the direct eager call's host time goes (cProfile, 3000 calls, 1 x 128)."""
import cProfile, pstats, io, time
import torch, stof
m = stof.Mask.generate("bigbird", 128)
q, k, v = [torch.randn((1, 12, 128, 64), device="cuda", dtype=torch.float16) for _ in range(3)]
for _ in range(50): stof.attention(q, k, v, mask=m)
torch.cuda.synchronize()
def parts(n=2000):
    import sys
    A = sys.modules["stof.attention"]
    t = {}
    def tm(name, fn):
        t0 = time.perf_counter()
        for _ in range(n): fn()
        t[name] = round((time.perf_counter() - t0) / n * 1e6, 2)
    tm("check", lambda: A._check(q, k, v, "bhld"))
    tm("is_compiling", torch.compiler.is_compiling)
    tm("eager_direct", lambda: A._eager_direct(q, k, v))
    tm("empty", lambda: torch.empty(q.shape, dtype=q.dtype, device=q.device))
    tm("device_index", lambda: q.device.index)
    tm("views", lambda: A._views(q, "bhld"))
    tm("viewable", lambda: A._viewable(q, "bhld"))
    tm("stream", lambda: A._current_stream(0))
    tm("prepared", lambda: A._prepared(m.key, ("auto", 0, 0, 0), 1, 12, 128, 64, 0, "f16"))
    tm("whole", lambda: stof.attention(q, k, v, mask=m))
    print(t)
parts()
pr = cProfile.Profile(); pr.enable()
for _ in range(3000): stof.attention(q, k, v, mask=m)
pr.disable(); torch.cuda.synchronize()
s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(18); print(s.getvalue()[:4000])
