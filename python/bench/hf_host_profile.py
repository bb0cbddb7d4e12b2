"""Where the host time of a Hugging Face forward goes under attn_implementation "stof" against
"sdpa" (issue 31's two slow whole-model rows): BERT-base (4 layers, fp16) on a right-padded
16 x 512 batch, and one greedy decode step of a Llama-style model (4 layers, 32 heads over 8,
bf16) after a 2048-token prompt, and a greedy generate() of --new tokens after it (cProfile by
cumulative time: every step has a new key length). For each implementation: the eager wall time of one call
(median of --reps), then one profiled stretch of --reps calls with torch.profiler (CPU and CUDA:
the host operators by self time, and the calls that wait for the GPU: aten::item /
_local_scalar_dense, cudaStreamSynchronize, cudaMemcpy*) and cProfile (the Python functions by
own time). Writes the tables as text to --out-dir and a JSON summary (--json).

Usage (GPU machine): PYTHONPATH=python:python/bench python3 python/bench/hf_host_profile.py \
    --out-dir OUT --json OUT/host_profile.json
"""

import argparse
import cProfile
import io
import json
import os
import pstats
import time

import torch

from hf_padding_bench import build as build_padded, padded_batch
from hf_llama_bench import build as build_llama, timed as wall  # the same eager timing

WAITS = ("aten::item", "aten::_local_scalar_dense", "cudaStreamSynchronize",
         "cudaDeviceSynchronize", "cudaMemcpyAsync", "cudaMemcpy", "cudaEventSynchronize")


def profile(fn, reps, label, out_dir):
    from torch.profiler import ProfilerActivity, profile as tprof
    with tprof(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    avg = prof.key_averages()
    table = avg.table(sort_by="self_cpu_time_total", row_limit=25)
    waits = {e.key: {"count_per_call": e.count / reps,
                     "self_cpu_us_per_call": e.self_cpu_time_total / reps}
             for e in avg if e.key in WAITS}
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(25)
    with open(os.path.join(out_dir, f"host_{label}.txt"), "w") as f:
        f.write(table + "\n\n" + s.getvalue())
    return waits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--new", type=int, default=32, help="tokens of the generate() case")
    ap.add_argument("--out-dir", default=".")
    ap.add_argument("--json")
    args = ap.parse_args()
    import stof.hf
    stof.hf.register()
    rows = []
    ids, am = padded_batch("bert-base", 16, 512)
    for impl in ("stof", "sdpa"):
        m = build_padded("bert-base", impl)
        with torch.no_grad():
            fn = lambda: m(input_ids=ids, attention_mask=am)
            ms = wall(fn, args.reps) * 1e3
            waits = profile(fn, args.reps, f"bert_padded_{impl}", args.out_dir)
        rows.append({"case": "bert-base 16x512 right-padded forward", "impl": impl, "ms": ms,
                     "waits": waits})
        print(rows[-1], flush=True)
        del m
    m = build_llama(None)
    prompt = torch.randint(0, 32000, (1, 2048), device="cuda")
    for impl in ("stof", "sdpa"):
        m.set_attn_implementation(impl)
        with torch.no_grad():
            out = m(input_ids=prompt, use_cache=True)
            cache = out.past_key_values
            nxt = out.logits[:, -1:].argmax(-1)
            start = cache.get_seq_length()
            ones = torch.ones(1, start + 1, dtype=torch.long, device="cuda")  # as generate() passes

            def step():  # one decode step over the prompt's cache (cropped back each time)
                cache.crop(start)
                pos = torch.tensor([[start]], device="cuda")
                return m(input_ids=nxt, attention_mask=ones, past_key_values=cache,
                         position_ids=pos, cache_position=pos[0], use_cache=True)

            ms = wall(step, args.reps) * 1e3
            waits = profile(step, args.reps, f"llama_decode_{impl}", args.out_dir)
        rows.append({"case": "llama-style decode step after 2048", "impl": impl, "ms": ms,
                     "waits": waits})
        print(rows[-1], flush=True)
    for impl in ("stof", "sdpa"):  # whole generate() calls: a new key length every step
        m.set_attn_implementation(impl)
        kw = dict(max_new_tokens=args.new, min_new_tokens=args.new, do_sample=False,
                  pad_token_id=0)
        with torch.no_grad():
            fn = lambda: m.generate(prompt, **kw)
            ms = wall(fn, max(1, args.reps // 2)) * 1e3
            pr = cProfile.Profile()
            pr.enable()
            fn()
            torch.cuda.synchronize()
            pr.disable()
        from torch.profiler import ProfilerActivity, profile as tprof
        with torch.no_grad(), tprof(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=30)
        gpu = prof.key_averages().table(sort_by="self_device_time_total", row_limit=12)
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(40)
        with open(os.path.join(args.out_dir, f"host_llama_generate_{impl}.txt"), "w") as f:
            f.write(table + "\n\n" + gpu + "\n\n" + s.getvalue())
        rows.append({"case": f"llama-style generate {args.new} after 2048", "impl": impl,
                     "ms": ms, "tokens_per_s": args.new / ms * 1e3})
        print(rows[-1], flush=True)
    doc = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "date": time.strftime("%Y-%m-%d"), "rows": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
