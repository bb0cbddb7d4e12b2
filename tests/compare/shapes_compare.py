"""Side-by-side timing of the shapes of today's models (grouped key/value heads, KV-cache prefill
and decode) on our Hopper kernel against PyTorch's attention: SDPA with the cuDNN and flash
backends (enable_gqa; K and V repeated per query head where a backend refuses enable_gqa, which
the record says) and FlexAttention (BlockMask 128 and 64, enable_gqa). Same inputs for every
method, CUDA-graph replays on every side, inputs rotated past the L2. Each row also gets its
floor: the bytes a call must move (Q, K, V read once, O written once) over the copy bandwidth
measured in the same run, and the FLOPs of the attended elements over the bf16 matrix rate
measured in the same run (an 8192^3 matmul).

Usage (GPU machine, after scripts/gpu-build): python3 tests/compare/shapes_compare.py
    [--only prefill|decode] [--match TEXT ...] [--runs N] [--json out.json]
Needs torch and the stof package (python/) with libstof_capi.so (STOF_LIB or the build).
"""

import argparse
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)

import compare_common as cc  # noqa: E402

torch = cc.torch


# name, kind, B, H, H_kv, L_q, L_k, d, mask ("causal", "window:W", "dense")
WORKLOADS = [
    ("prefill causal L4096 B4", "prefill", 4, 32, 8, 4096, 4096, 128, "causal"),
    ("prefill causal L16384 B1", "prefill", 1, 32, 8, 16384, 16384, 128, "causal"),
    ("prefill window1024 L16384 B1", "prefill", 1, 32, 8, 16384, 16384, 128, "window:1024"),
    ("decode Lk8192 B8", "decode", 8, 32, 8, 1, 8192, 128, "dense"),
    ("decode Lk32768 B4", "decode", 4, 32, 8, 1, 32768, 128, "dense"),
    ("decode Lk32768 B1", "decode", 1, 32, 8, 1, 32768, 128, "dense"),
    ("decode Lk131072 B1", "decode", 1, 32, 8, 1, 131072, 128, "dense"),
    ("decode Lk262144 B1", "decode", 1, 32, 8, 1, 262144, 128, "dense"),
    ("decode window4096 Lk131072 B1", "decode", 1, 32, 8, 1, 131072, 128, "window:4096"),
    ("decode window1024 Lk32768 B4", "decode", 4, 32, 8, 1, 32768, 128, "window:1024"),
    ("decode 4 rows Lk8192 B8", "decode", 8, 32, 8, 4, 8192, 128, "causal"),
    ("decode MHA H12 d64 Lk2048 B8", "decode", 8, 12, 12, 1, 2048, 64, "dense"),
    # Head sizes other than 64 and 128 (Phi-3's 96: 32 heads; Gemma 2's 256: 16 over 8).
    ("head d96 prefill causal L4096 B4", "prefill", 4, 32, 32, 4096, 4096, 96, "causal"),
    ("head d256 prefill causal L4096 B4", "prefill", 4, 16, 8, 4096, 4096, 256, "causal"),
    ("head d96 decode Lk8192 B8", "decode", 8, 32, 32, 1, 8192, 96, "dense"),
    ("head d256 decode Lk8192 B8", "decode", 8, 16, 8, 1, 8192, 256, "dense"),
    # Masks per batch row / head in one launch (stof.MaskSet): packed documents with other
    # boundaries in each row (varlen), and local / global heads (half the heads a window).
    ("varlen docs L4096 B8", "prefill", 8, 32, 8, 4096, 4096, 128, "docs"),
    ("heads causal+window512 L4096 B4", "prefill", 4, 32, 8, 4096, 4096, 128, "heads:512"),
]


def document_ids(B, L, seed=0):
    """int32 [B, L] on the GPU: each batch row packs documents of random lengths (64..L/2,
    seeded); a token's document index."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.zeros(B, L, dtype=torch.int32)
    for b in range(B):
        start, doc = 0, 0
        while start < L:
            n = min(L - start, int(torch.randint(64, L // 2, (1,), generator=g)))
            ids[b, start:start + n] = doc
            start, doc = start + n, doc + 1
    return ids.cuda()


def per_row_mask(kind, B, H, Lq, Lk):
    """bool [B or 1, H or 1, L_q, L_k] of the per-row / per-head kinds, else None. "docs":
    causal within each document of document_ids."""
    if kind == "docs":
        ids = document_ids(B, Lk)
        same = ids.view(B, 1, -1, 1) == ids.view(B, 1, 1, -1)
        return same & bool_mask("causal", Lq, Lk)
    if kind.startswith("heads:"):
        causal = bool_mask("causal", Lq, Lk)
        window = bool_mask("window:" + kind.split(":")[1], Lq, Lk)
        return torch.stack([causal] * (H // 2) + [window] * (H - H // 2))[None]
    return None


def bool_mask(kind, Lq, Lk):
    """bool [L_q, L_k] on the GPU: bottom-right causal, a causal sliding window of W keys
    (position p attends p - W < j <= p), or dense."""
    rows = torch.arange(Lk - Lq, Lk, device="cuda").view(-1, 1)
    cols = torch.arange(Lk, device="cuda").view(1, -1)
    if kind == "dense":
        return torch.ones(Lq, Lk, dtype=torch.bool, device="cuda")
    m = cols <= rows
    if kind.startswith("window:"):
        m &= cols > rows - int(kind.split(":")[1])
    return m


def measure_ceilings():
    """(copy bandwidth in bytes/s counting read + write, bf16 matmul FLOP/s), this run."""
    a = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    t = cc.time_method(lambda _: b.copy_(a), [None], 5, 20)["median_us"]
    bw = 2 * a.numel() / (t * 1e-6)
    del a, b
    x = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
    y = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
    t = cc.time_method(lambda _: torch.mm(x, y), [None], 3, 10)["median_us"]
    return bw, 2 * 8192 ** 3 / (t * 1e-6)


def make_sets(B, H, Hkv, Lq, Lk, d, l2_bytes):
    per_set = 2 * (2 * B * H * Lq * d + 2 * B * Hkv * Lk * d)
    n = max(1, min(8, math.ceil(3 * l2_bytes / per_set)))
    g = torch.Generator(device="cuda").manual_seed(0)
    sets = []
    for _ in range(n):
        q = torch.randn(B, H, Lq, d, generator=g, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(B, Hkv, Lk, d, generator=g, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(B, Hkv, Lk, d, generator=g, device="cuda", dtype=torch.bfloat16)
        sets.append((q, k, v))
    return sets


def sdpa_method(backend, mask_t, causal_square):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    F = torch.nn.functional
    be = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}[backend]
    dense = bool(mask_t.all())

    def call(s, gqa=True):
        q, k, v = s
        if not gqa:
            g = q.shape[1] // k.shape[1]
            k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
        with sdpa_kernel(be):
            if causal_square:
                return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
            if dense:
                return F.scaled_dot_product_attention(q, k, v, enable_gqa=gqa)
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask_t, enable_gqa=gqa)
    return call


def flex_method(mask_t, block):
    """mask_t: [L_q, L_k], or [B or 1, H or 1, L_q, L_k] (a BlockMask per batch row / head)."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    Lq, Lk = mask_t.shape[-2:]
    last_q, last_k = Lq - 1, Lk - 1
    per = mask_t.dim() == 4
    Bm = mask_t.shape[0] if per and mask_t.shape[0] > 1 else None
    Hm = mask_t.shape[1] if per and mask_t.shape[1] > 1 else None

    def mod(b, h, qi, ki):
        at = (qi.clamp(max=last_q), ki.clamp(max=last_k))
        if per:
            at = (b if Bm else 0, h if Hm else 0) + at
        return mask_t[at] & (qi <= last_q) & (ki <= last_k)
    bm = create_block_mask(mod, Bm, Hm, Lq, Lk, device="cuda", BLOCK_SIZE=block)
    opts = cc.FLEX_SMALL_BLOCK_OPTIONS if block < 128 else None
    compiled = torch.compile(flex_attention, dynamic=False)

    def call(s):
        q, k, v = s
        return compiled(q, k, v, block_mask=bm, enable_gqa=True, kernel_options=opts)
    return call


def flex_closed_form(kind, B, H, L, block):
    """FlexAttention with the mask_mod a Flex user writes for these kinds (no mask tensor
    read): the document ids compared, or causal with a window on the second half of the heads."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    if kind == "docs":
        ids = document_ids(B, L)

        def mod(b, h, qi, ki):
            return (ids[b, qi] == ids[b, ki]) & (ki <= qi)
        bm = create_block_mask(mod, B, None, L, L, device="cuda", BLOCK_SIZE=block)
    else:
        w = int(kind.split(":")[1])

        def mod(b, h, qi, ki):
            return (ki <= qi) & ((h < H // 2) | (ki > qi - w))
        bm = create_block_mask(mod, None, H, L, L, device="cuda", BLOCK_SIZE=block)
    opts = cc.FLEX_SMALL_BLOCK_OPTIONS if block < 128 else None
    compiled = torch.compile(flex_attention, dynamic=False)
    return lambda s: compiled(s[0], s[1], s[2], block_mask=bm, enable_gqa=True,
                              kernel_options=opts)


def run_row(row, args, env, ceilings):
    name, kind, B, H, Hkv, Lq, Lk, d, mkind = row
    import stof
    mask_t = per_row_mask(mkind, B, H, Lq, Lk)
    if mask_t is not None:  # a MaskSet, made once (its distinct slices to the host)
        smask = stof.MaskSet.from_tensor(mask_t, B, H, source=mkind)
        nnz = int(mask_t.expand(B, H, Lq, Lk).sum()) // (B * H)  # per (batch, head), mean
        blocks_read = Lk
    else:
        mask_t = bool_mask(mkind, Lq, Lk)
        smask = stof.Mask(mask_t.cpu().numpy(), source=mkind)
        nnz = int(mask_t.sum())
        blocks_read = mask_t.view(Lq, -1, 64).any(dim=2).any(dim=0).sum().item() * 64 \
            if Lk % 64 == 0 else Lk
    sets = make_sets(B, H, Hkv, Lq, Lk, d, env.get("l2_bytes", 50 << 20))
    flops = 4.0 * B * H * d * nnz
    kv_bytes = 2 * 2 * B * Hkv * min(Lk, blocks_read) * d
    bytes_min = kv_bytes + 2 * 2 * B * H * Lq * d
    bw, rate = ceilings
    floor_us = max(bytes_min / bw, flops / rate) * 1e6
    res = {"name": name, "kind": kind, "B": B, "H": H, "H_kv": Hkv, "L_q": Lq, "L_k": Lk,
           "d": d, "mask": mkind, "nnz": nnz, "bytes_min": bytes_min, "flops": flops,
           "floor_us": floor_us, "methods": {}}
    causal_square = mkind == "causal" and Lq == Lk
    methods = {"stof": lambda s: stof.attention(s[0], s[1], s[2], mask=smask)}
    if mkind == "docs":  # what ran before masks per row: one launch per batch row
        rows = [stof.Mask(mask_t[b, 0].cpu().numpy(), source=f"docs row {b}") for b in range(B)]
        methods["stof_per_row"] = lambda s: torch.cat(
            [stof.attention(s[0][b:b + 1], s[1][b:b + 1], s[2][b:b + 1], mask=rows[b])
             for b in range(B)])
    for be in ("cudnn", "flash"):
        methods["sdpa_" + be] = sdpa_method(be, mask_t, causal_square)
    for block in (128, 64):
        try:
            methods[f"flex{block}"] = flex_method(mask_t, block)
        except Exception as e:  # a BlockMask Flex refuses: recorded, not fatal
            res["methods"][f"flex{block}"] = {"error": cc.error_text(e)}
    if smask.__class__.__name__ == "MaskSet":
        for block in (128, 64):
            methods[f"flex{block}_mod"] = flex_closed_form(mkind, B, H, Lk, block)
    ref = None
    for mname, fn in methods.items():
        entry = {}
        try:
            out = fn(sets[0])
        except Exception as e:
            if not mname.startswith("sdpa"):
                res["methods"][mname] = {"error": cc.error_text(e)}
                continue
            # This backend refuses enable_gqa (or the mask): K and V repeated per query head.
            base = fn
            fn = lambda s, base=base: base(s, gqa=False)  # noqa: E731
            entry["kv_repeated"] = True
            try:
                out = fn(sets[0])
            except Exception as e2:
                res["methods"][mname] = {"error": cc.error_text(e2),
                                         "with_gqa": cc.error_text(e)}
                continue
        torch.cuda.synchronize()
        if ref is None and mname == "stof":
            ref = out.float()
        elif ref is not None:
            entry["max_abs_diff_vs_stof"] = float((out.float() - ref).abs().max())
        try:
            t = cc.time_graph(fn, sets, args.warmup, args.runs)
        except Exception as e:
            entry["error"] = cc.error_text(e)
            res["methods"][mname] = entry
            continue
        entry.update(t)
        entry["tflops"] = flops / (t["median_us"] * 1e-6) / 1e12
        entry["x_floor"] = t["median_us"] / floor_us
        res["methods"][mname] = entry
        cc.log(f"  {name:32s} {mname:11s} {t['median_us']:9.1f} us  "
               f"{entry['tflops']:6.1f} TFLOP/s  {entry['x_floor']:.2f}x floor")
    ours = res["methods"].get("stof", {}).get("median_us")
    for mname, e in res["methods"].items():
        if mname != "stof" and ours and e.get("median_us"):
            e["stof_speedup"] = e["median_us"] / ours
    del sets
    cc.free_memory()
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=["prefill", "decode"])
    ap.add_argument("--match", action="append",
                    help="only the rows whose name contains TEXT (repeatable: any of them)")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--json")
    args = ap.parse_args()
    cc.raise_dynamo_cache_limits()
    env = cc.environment()
    ceilings = measure_ceilings()
    cc.log(f"{env['device']}: copy {ceilings[0] / 1e12:.2f} TB/s, bf16 mm "
           f"{ceilings[1] / 1e12:.0f} TFLOP/s")
    doc = {"environment": env, "copy_bytes_per_s": ceilings[0],
           "bf16_flops_per_s": ceilings[1], "rows": []}
    for row in WORKLOADS:
        if (args.only and row[1] != args.only) or (args.match and not any(t in row[0] for t in args.match)):
            continue
        try:
            doc["rows"].append(run_row(row, args, env, ceilings))
        except Exception as e:
            doc["rows"].append({"name": row[0], "error": cc.error_text(e)})
            cc.log(f"  {row[0]}: {cc.error_text(e)}")
        cc.write_json(args.json, doc)
    cc.log("\nrow | stof us | x floor | vs cudnn | vs flash | vs flex128 | vs flex64")
    for r in doc["rows"]:
        m = r.get("methods", {})
        s = m.get("stof", {})

        def sp(k):
            v = m.get(k, {}).get("stof_speedup")
            return f"{v:.2f}x" if v else m.get(k, {}).get("error", "-")[:20]
        cc.log(f"{r['name']} | {cc.fmt(s.get('median_us'))} | {cc.fmt(s.get('x_floor'), '{:.2f}')} "
               f"| {sp('sdpa_cudnn')} | {sp('sdpa_flash')} | {sp('flex128')} | {sp('flex64')}"
               + (f" | closed-form mask_mod: {sp('flex128_mod')} | {sp('flex64_mod')}"
                  if "flex128_mod" in m else ""))


if __name__ == "__main__":
    main()
