"""Whole Hugging Face models with grouped heads on our kernel: a randomly initialised
Llama-style model (4 layers, hidden 4096, 32 query heads over 8 key/value heads, d 128, bf16)
and the same with a Mistral-style sliding window, under attn_implementation "stof", "sdpa" and
"flex_attention", the same weights. Times a forward (prefill) at 4 x 2048 and 1 x 16384 and a
greedy generate() of --new tokens after a 2048-token prompt (tokens per second), eager, median
of --reps. Prints a table and writes JSON (--out).

Usage (GPU machine): PYTHONPATH=python python3 python/bench/hf_llama_bench.py --out r.json
"""

import argparse
import json
import statistics
import time

import torch


def config(window):
    import transformers as tf
    common = dict(vocab_size=32000, hidden_size=4096, intermediate_size=14336,
                  num_hidden_layers=4, num_attention_heads=32, num_key_value_heads=8,
                  max_position_embeddings=32768)
    if window:
        return tf.MistralConfig(sliding_window=window, **common)
    return tf.LlamaConfig(**common)


def build(window):
    """The model once, on the GPU (initialised there: 1.1 B parameters); each implementation
    then runs the same weights (set_attn_implementation)."""
    from transformers import AutoModelForCausalLM
    torch.manual_seed(0)
    with torch.device("cuda"):
        m = AutoModelForCausalLM.from_config(config(window), attn_implementation="sdpa",
                                             torch_dtype=torch.bfloat16)
    return m.eval()


def timed(fn, reps):
    fn()  # warm-up (and, for stof, the layouts' upload; for flex, its compile)
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--new", type=int, default=128)
    ap.add_argument("--impls", default="stof,sdpa,flex_attention")
    ap.add_argument("--out")
    args = ap.parse_args()
    import stof.hf
    stof.hf.register()
    rows = []
    for window in (None, 1024):
        name = "mistral window 1024" if window else "llama"
        m = build(window)
        for impl in args.impls.split(","):
            try:
                if hasattr(m, "set_attn_implementation"):
                    m.set_attn_implementation(impl)
                else:  # the layers read the shared config at each forward
                    m.config._attn_implementation = impl
            except Exception as e:  # e.g. a backend this transformers refuses for the model
                rows.append({"model": name, "impl": impl, "error": f"{type(e).__name__}: {e}"})
                continue
            for B, L in ((4, 2048), (1, 16384)):
                ids = torch.randint(0, 32000, (B, L), device="cuda")
                try:
                    with torch.no_grad():
                        s = timed(lambda: m(input_ids=ids, logits_to_keep=1), args.reps)
                    rows.append({"model": name, "impl": impl, "what": f"forward {B}x{L}",
                                 "ms": s * 1e3})
                except Exception as e:
                    rows.append({"model": name, "impl": impl, "what": f"forward {B}x{L}",
                                 "error": f"{type(e).__name__}: {str(e)[:200]}"})
                print(rows[-1], flush=True)
            ids = torch.randint(0, 32000, (1, 2048), device="cuda")
            kw = dict(max_new_tokens=args.new, min_new_tokens=args.new, do_sample=False,
                      pad_token_id=0)
            try:
                with torch.no_grad():
                    s = timed(lambda: m.generate(ids, **kw), max(1, args.reps - 1))
                rows.append({"model": name, "impl": impl, "what": f"generate 1x2048+{args.new}",
                             "ms": s * 1e3, "tokens_per_s": args.new / s})
            except Exception as e:
                rows.append({"model": name, "impl": impl, "what": "generate",
                             "error": f"{type(e).__name__}: {str(e)[:200]}"})
            print(rows[-1], flush=True)
        del m
        torch.cuda.empty_cache()
    doc = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "date": time.strftime("%Y-%m-%d"), "rows": rows}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
    print("\nmodel | what | " + " | ".join(args.impls.split(",")))
    keys = sorted({(r["model"], r.get("what")) for r in rows if r.get("what")})
    for model, what in keys:
        cells = []
        for impl in args.impls.split(","):
            r = [x for x in rows if x["model"] == model and x.get("what") == what
                 and x["impl"] == impl]
            if not r or "ms" not in r[0]:
                cells.append("-" if not r else r[0].get("error", "-")[:30])
            elif "tokens_per_s" in r[0]:
                cells.append(f"{r[0]['tokens_per_s']:.1f} tok/s")
            else:
                cells.append(f"{r[0]['ms']:.2f} ms")
        print(f"{model} | {what} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
