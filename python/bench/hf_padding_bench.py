"""A padded batch through the Hugging Face backend: BERT-base (4 layers, fp16) and a Llama-style
model (4 layers, 32 heads over 8, bf16), randomly initialised from configs, each batch row of
its own length (right padding for BERT, left padding for Llama, as generation pads), under
attn_implementation "stof" (one launch per layer with per-row key ranges), "sdpa" and, where
transformers takes it, "flex_attention". Eager forwards, median of --reps; also counts the
stof.attention calls of one forward. Prints a table and writes JSON (--out).
--holes: every other row also has 32 padding tokens inside it, which no per-row key range
says: "stof" then runs one launch over a mask per batch row (stof.MaskSet), and the extra
implementation "stof_per_row" runs what ran before those, one launch per batch row.
--fresh: stof.hf's mask caches are cleared before every stof forward, as for a batch with
padding never seen before (the per-row masks are built and hashed again; the prepared plans
stay).

Usage (GPU machine): PYTHONPATH=python python3 python/bench/hf_padding_bench.py --out r.json
"""

import argparse
import json
import sys
import time

import torch

from hf_llama_bench import timed  # the same eager timing (python/bench/)


def build(name, impl):
    import transformers as tf
    torch.manual_seed(0)
    if name == "bert-base":
        cfg = tf.BertConfig(num_hidden_layers=4)
        dtype, cls = torch.float16, tf.BertModel
    else:
        cfg = tf.LlamaConfig(vocab_size=32000, hidden_size=4096, intermediate_size=14336,
                             num_hidden_layers=4, num_attention_heads=32, num_key_value_heads=8)
        dtype, cls = torch.bfloat16, tf.LlamaModel
    with torch.device("cuda"):
        return cls._from_config(cfg, attn_implementation=impl, torch_dtype=dtype).eval()


def padded_batch(name, B, L, holes=False):
    g = torch.Generator().manual_seed(3)
    ids = torch.randint(0, 30000, (B, L), generator=g).cuda()
    lengths = torch.linspace(L // 4, L, B).long()
    am = torch.zeros(B, L, dtype=torch.long)
    for b, n in enumerate(lengths.tolist()):
        if name == "bert-base":
            am[b, :n] = 1  # right padding
        else:
            am[b, L - n:] = 1  # left padding
        if holes and b % 2 == 1:
            mid = L - n // 2 if name != "bert-base" else n // 2
            am[b, mid - 16:mid + 16] = 0  # padding inside the row
    return ids, am.cuda()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out")
    ap.add_argument("--holes", action="store_true")
    ap.add_argument("--fresh", action="store_true")
    args = ap.parse_args()
    import stof
    import stof.hf
    stof.hf.register()
    att = sys.modules["stof.attention"]
    sets_usable = stof.hf._sets_usable
    rows = []
    for name, B, L in (("bert-base", 16, 512), ("llama", 4, 2048)):
        ids, am = padded_batch(name, B, L, args.holes)
        impls = ("stof", "stof_per_row", "sdpa", "flex_attention") if args.holes else \
            ("stof", "sdpa", "flex_attention")
        for impl in impls:
            per_row = impl == "stof_per_row"
            stof.hf._sets_usable = (lambda d: False) if per_row else sets_usable
            impl = "stof" if per_row else impl
            try:
                m = build(name, impl)
            except Exception as e:
                rows.append({"model": name, "impl": impl, "error": f"{type(e).__name__}: {e}"})
                continue
            calls = None
            if impl == "stof":
                orig, n = att._attention_impl, [0]

                def counted(*a, **kw):
                    n[0] += 1
                    return orig(*a, **kw)
                att._attention_impl = counted
                eager = sys.modules["stof._eager"]
                eager.enabled = False  # remembered launches would bypass the count
                with torch.no_grad():
                    m(input_ids=ids, attention_mask=am)
                att._attention_impl, eager.enabled = orig, True
                calls = n[0]
            fresh = args.fresh and impl == "stof"

            def forward():
                if fresh:
                    stof.hf.clear_cache()
                return m(input_ids=ids, attention_mask=am)
            with torch.no_grad():
                s = timed(forward, args.reps)
            rows.append({"model": name, "impl": "stof_per_row" if per_row else impl,
                         "shape": f"{B}x{L}", "holes": args.holes, "fresh": fresh,
                         "ms": s * 1e3,
                         "attention_calls": calls})
            print(rows[-1], flush=True)
            del m
            torch.cuda.empty_cache()
    doc = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "date": time.strftime("%Y-%m-%d"), "rows": rows}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
    for r in rows:
        print(r)


if __name__ == "__main__":
    main()
