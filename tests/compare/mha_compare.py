#!/usr/bin/env python3
"""Side-by-side sparse MHA comparison on a GPU machine: STOF's kernel against PyTorch peers.

What it runs, in ONE process, on identical masks and identical inputs per configuration:
  flex128  torch.compile(flex_attention) with a BlockMask from create_block_mask at BLOCK_SIZE
           128, whose mask_mod indexes the very boolean mask tensor ours gets
  flex64   the same at BLOCK_SIZE 64
  sdpa     F.scaled_dot_product_attention with the boolean attn_mask ([L, L], broadcast)
  eager    matmul, masked_fill(-inf), softmax, matmul; fully masked rows set to 0
  compile  torch.compile of that eager function (static shapes, compiled once per shape)
  ours     STOF through the C API (build/kernels/libstof_capi.so, ctypes): stof_prepare builds
           the automatic choice (Eq. 1, Eq. 2 within the preferred set) and the device
           layout once, stof_run launches (timed)
           (--ours auto,64x64x4 adds fixed configurations BMxBNxWARPS as ours_64x64x4 ...;
           --ours ...,native adds ours_native: our unfused baseline, cuBLAS Q K^T, one
           scale + mask + softmax kernel, cuBLAS P V, i.e. eager's steps in our code, with a
           B*H*L*L fp16 workspace; kernel 3 of the C API, version >= 2)
Masks come from our generators: `stof mask --pattern NAME --seq L --out FILE.npy`, np.load.
Inputs: fp16 [B, H, L, d] (--dtype bf16: bf16 for every method, ours on the Hopper kernel),
uniform in [-1, 1), fresh per configuration (seeded).

Checks before timing: every method's output on input set 0 against eager fp32 math on batch
element 0 (all heads), metric of our GPU tests (docs/kernels.md): per query row
max|out - ref| / max(max|ref|, 1e-3), worst row; must be < 2e-3 (bf16: 1e-2) for ours and
Flex (a failing method is not timed; its error is recorded); recorded for the others. Our
output is poisoned (NaN) first and must hold no NaN.

Timing (the same for every method): warm-up, then torch.cuda.Event pairs around each call, back
to back, median of --runs (>= 50); calls rotate over input sets (Q, K, V, O) whose total size
exceeds 2x the L2 (sets = max(2, ceil(2 L2 / bytes per set)), capped by free memory).
A method that fails (OOM for SDPA or eager at large L*B, a compile error, ...) is skipped and
the reason recorded; the run goes on. --cuda-graph also times every method as replays of a
CUDA graph holding one call per input set (median per call): that removes the host's launch
overhead (Python, dispatch, guards; about 50 to 90 us for the PyTorch peers, a few us for ours
through ctypes), which dominates the plain numbers at small L*B. Both are reported.

Grid (the STOF paper's): sliding_window, dilated, longformer, bigbird x L in {128 .. 4096} x
batch {1, 8, 16}, 12 heads, d 64; plus d 128 at batch 8 (96 configurations). --quick: bigbird
and sliding_window at L 1024 and 4096, batch 8, d 64. Configurations are named
"bigbird/L4096/B8/d64"; --filter REGEX keeps those it matches (re.search).
--grid extended: masks users bring that the paper's grid lacks, at FlashAttention-3's sizes
(16k tokens per batch, hidden 2048: B = 16384 / L, H = 2048 / d): full, causal, prefix_lm (the
first L/4 tokens attend each other both ways, the rest causally) and document (packed
sequences: seeded lengths between L/16 and L/4, attention inside each) x L {1024, 2048, 4096,
8192} x d {64, 128}, plus ragged L {1000, 3000} for full and causal (40 configurations; named
"causal/L4096/B4/d128/H16"). There the dense SDPA kernels are a peer too: `sdpa_dense` runs
F.scaled_dot_product_attention without a mask for `full` and with is_causal=True for `causal`
(FlashAttention-2 / cuDNN inside PyTorch); the speedup columns add xDense.

Output: progress per configuration (flushed), --out JSON rewritten after every configuration
(a timeout keeps what finished), then a table: latency (us) of each method per configuration,
ours' speedup over the faster Flex variant, SDPA, eager and compile, and a summary: geometric
mean speedup over the faster Flex, the worst configuration, speedup over eager at L >= 2048.
--time-budget SECONDS stops starting configurations after that long (they are listed as not
run), so a run ends inside a fixed call limit.

Usage (GPU machine; build first, see docs/kernels.md "Benchmarking"):
  python3 tests/compare/mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
      --quick --out /tmp/res/compare_quick.json
  # the full grid (96 configurations; 226 s on an H200 with --cuda-graph, 174 s without):
  python3 tests/compare/mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
      --ours auto,64x64x4 --cuda-graph --time-budget 450 --out /tmp/res/compare_full_grid.json
  # or split over two calls: --filter '/B(1|16)/d64$' and --filter '/B8/'
"""

import argparse
import ctypes
import math
import os
import re
import sys
import tempfile
import time
import traceback
import zlib

import numpy as np
import torch
import torch.nn.functional as F

from compare_common import (FLEX_SMALL_BLOCK_OPTIONS, FlexState, Masks, create_flex_block_mask,
                            eager_attention, environment, fmt, free_memory, geomean, log,
                            mask_operands, raise_dynamo_cache_limits, time_graph, time_method,
                            write_json)

PATTERNS = ["sliding_window", "dilated", "longformer", "bigbird"]
EXTENDED_PATTERNS = ["full", "causal", "prefix_lm", "document"]
NUMPY_PATTERNS = ("prefix_lm", "document")  # built here; the rest come from `stof mask`
SEQS = [128, 256, 512, 1024, 2048, 4096]
BATCHES = [1, 8, 16]
HEADS = 12
TOLERANCE = 2e-3        # per-row relative error, as the GPU tests
TOLERANCE_BF16 = 1e-2   # the same for bf16 (kernels/util/mha_check.h: 4x coarser rounding)
ROW_FLOOR = 1e-3
CHECKED_STRICT = ("ours", "flex")  # method-name prefixes whose check failure skips timing
MEMORY_MARGIN = 4 << 30  # bytes left free beside the rotating sets for the methods' temporaries

STOF_KERNEL_NAMES = {1: "row_wise", 2: "block_wise", 3: "native", 4: "sd", 5: "sdf"}


# ---- configuration grid -------------------------------------------------------------------


def config_name(pattern, L, B, d, H=HEADS):
    return f"{pattern}/L{L}/B{B}/d{d}" + (f"/H{H}" if H != HEADS else "")


def numpy_mask(pattern, L):
    """The extended grid's masks that `stof mask` has no generator for, as bool [L, L]."""
    i = np.arange(L)[:, None]
    j = np.arange(L)[None, :]
    if pattern == "prefix_lm":
        prefix = L // 4
        return (j <= i) | ((i < prefix) & (j < prefix))
    if pattern == "document":
        rng = np.random.default_rng(L)
        doc = np.zeros(L, dtype=np.int64)
        start, k = 0, 0
        while start < L:
            n = int(rng.integers(max(1, L // 16), max(2, L // 4) + 1))
            doc[start:start + n] = k
            start, k = start + n, k + 1
        return doc[:, None] == doc[None, :]
    raise ValueError(f"no numpy generator for {pattern}")


def build_grid(args):
    cfgs = []
    if args.grid == "extended":
        for d in (64, 128):
            H = 2048 // d
            for L in (1024, 2048, 4096, 8192, 1000, 3000):
                B = max(1, 16384 // L)
                for pattern in EXTENDED_PATTERNS:
                    if L in (1000, 3000) and pattern not in ("full", "causal"):
                        continue
                    cfgs.append((pattern, L, B, d, H))
    elif args.quick:
        for L in (1024, 4096):
            for pattern in ("bigbird", "sliding_window"):
                cfgs.append((pattern, L, 8, 64))
    else:
        # Shape-major, pattern innermost: the compiled peers recompile only when the shape
        # (B, L, d) changes.
        for d, batches in ((64, BATCHES), (128, [8])):
            for B in batches:
                for L in SEQS:
                    for pattern in PATTERNS:
                        cfgs.append((pattern, L, B, d))
    cfgs = [c if len(c) == 5 else (*c, HEADS) for c in cfgs]
    if args.filter:
        rx = re.compile(args.filter)
        cfgs = [c for c in cfgs if rx.search(config_name(*c))]
    return cfgs


class GridMasks(Masks):
    """Masks of `stof mask`, plus the extended grid's numpy-built ones (numpy_mask)."""

    def get(self, pattern, L):
        if pattern not in NUMPY_PATTERNS:
            return super().get(pattern, L)
        key = (pattern, L)
        if key not in self.cache:
            self.cache[key] = numpy_mask(pattern, L)
        return self.cache[key]

    def info(self, pattern, L):
        if pattern not in NUMPY_PATTERNS:
            return super().info(pattern, L)
        m = self.get(pattern, L)
        return {"source": f"tests/compare/mha_compare.py numpy_mask('{pattern}', {L})",
                "nnz": int(m.sum()), "density": float(m.mean())}


# ---- our library --------------------------------------------------------------------------


class Stof:
    """ctypes binding of kernels/capi/stof_capi.h."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        L = self.lib
        vp, i64, i32 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
        cp, sz = ctypes.c_char_p, ctypes.c_size_t
        L.stof_capi_version.restype = i32
        L.stof_prepare.argtypes = [vp, i64, i64, i64, i64, i32, i64, i64, i64, i32,
                                   ctypes.POINTER(vp), cp, sz]
        L.stof_prepare.restype = i32
        L.stof_run.argtypes = [vp, vp, vp, vp, vp, vp, cp, sz]
        L.stof_run.restype = i32
        L.stof_choice.argtypes = [vp, ctypes.POINTER(i32), ctypes.POINTER(i64),
                                  ctypes.POINTER(i64), ctypes.POINTER(i64),
                                  ctypes.POINTER(i32), cp, sz]
        L.stof_choice.restype = i32
        L.stof_plan_info.argtypes = [vp, ctypes.POINTER(i64), ctypes.POINTER(i64),
                                     ctypes.POINTER(i64), ctypes.POINTER(ctypes.c_double),
                                     ctypes.POINTER(ctypes.c_double),
                                     ctypes.POINTER(ctypes.c_double)]
        L.stof_plan_info.restype = i32
        L.stof_release.argtypes = [vp]
        L.stof_release.restype = None
        self.err = ctypes.create_string_buffer(2048)
        self.version = L.stof_capi_version()
        if self.version >= 4:
            L.stof_prepare_dtype.argtypes = [vp, i64, i64, i64, i64, i32, i32, i64, i64, i64,
                                             i32, ctypes.POINTER(vp), cp, sz]
            L.stof_prepare_dtype.restype = i32

    def prepare(self, mask_u8, B, H, L, d, kernel=0, bm=0, bn=0, warps=0, bf16=False):
        plan = ctypes.c_void_p()
        if bf16:  # STOF_DTYPE_BF16 (C API version 4)
            rc = self.lib.stof_prepare_dtype(mask_u8.ctypes.data, B, H, L, d, 1, kernel, bm, bn,
                                             warps, -1, ctypes.byref(plan), self.err,
                                             len(self.err))
        else:
            rc = self.lib.stof_prepare(mask_u8.ctypes.data, B, H, L, d, kernel, bm, bn, warps,
                                       -1, ctypes.byref(plan), self.err, len(self.err))
        if rc != 0:
            raise RuntimeError(self.err.value.decode())
        return plan

    def run(self, plan, q, k, v, o, stream):
        rc = self.lib.stof_run(plan, q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(),
                               stream, self.err, len(self.err))
        if rc != 0:
            raise RuntimeError(self.err.value.decode())

    def choice(self, plan):
        kernel, fell = ctypes.c_int(), ctypes.c_int()
        bm, bn, w = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
        text = ctypes.create_string_buffer(2048)
        self.lib.stof_choice(plan, ctypes.byref(kernel), ctypes.byref(bm), ctypes.byref(bn),
                             ctypes.byref(w), ctypes.byref(fell), text, len(text))
        return {"kernel": STOF_KERNEL_NAMES.get(kernel.value, str(kernel.value)),
                "block_m": bm.value, "block_n": bn.value, "num_warps": w.value,
                "fell_back": bool(fell.value), "text": text.value.decode()}

    def info(self, plan):
        nnz, vb, nbytes = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
        sel, build, up = ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
        self.lib.stof_plan_info(plan, ctypes.byref(nnz), ctypes.byref(vb), ctypes.byref(nbytes),
                                ctypes.byref(sel), ctypes.byref(build), ctypes.byref(up))
        return {"nnz": nnz.value, "valid_blocks": vb.value, "layout_bytes": nbytes.value,
                "select_ms": sel.value, "build_ms": build.value, "upload_ms": up.value}

    def release(self, plan):
        self.lib.stof_release(plan)


def parse_ours(spec):
    """'auto,64x64x4,native' -> [('ours', (0,0,0,0)), ('ours_64x64x4', (2,64,64,4)),
    ('ours_native', (3,0,0,0))]."""
    out = []
    for item in [s.strip() for s in spec.split(",") if s.strip()]:
        if item == "auto":
            out.append(("ours", (0, 0, 0, 0)))
        elif item in ("row", "row_wise"):
            out.append(("ours_row", (1, 0, 0, 0)))
        elif item == "native":
            out.append(("ours_native", (3, 0, 0, 0)))
        elif item in ("sd", "sdf"):  # softmax decomposition (+ fusion), BM x T 64 x 64
            out.append((f"ours_{item}", (4 if item == "sd" else 5, 0, 0, 0)))
        else:
            m = re.fullmatch(r"(\d+)x(\d+)x(\d+)", item)
            if not m:
                raise SystemExit(f"--ours: expected auto, row_wise, native, sd, sdf or "
                                 f"BMxBNxWARPS, "
                                 f"got '{item}'")
            bm, bn, w = (int(g) for g in m.groups())
            out.append((f"ours_{item}", (2, bm, bn, w)))
    if not out:
        raise SystemExit("--ours: nothing to run")
    return out


# ---- references ---------------------------------------------------------------------------


def reference_fp32(q, k, v, mask):
    """Eager fp32 attention; fully masked rows give 0 (as our reference)."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    s = torch.matmul(q.float(), k.float().transpose(-2, -1)) * scale
    s = s.masked_fill(~mask, float("-inf"))
    p = torch.softmax(s, dim=-1)
    p = torch.nan_to_num(p, nan=0.0)
    return torch.matmul(p, v.float())


def row_error(out, ref):
    """(worst per-row relative error, global max-abs relative error, NaN count)."""
    out = out.float()
    nan = int(torch.isnan(out).sum().item())
    diff = (out - ref).abs()
    row_err = diff.amax(dim=-1)
    row_max = ref.abs().amax(dim=-1)
    rel = row_err / row_max.clamp_min(ROW_FLOOR)
    worst = float(torch.nan_to_num(rel, nan=float("inf")).max().item())
    glob = float(torch.nan_to_num(diff, nan=float("inf")).max().item() /
                 max(float(ref.abs().max().item()), 1e-30))
    return worst, glob, nan


# ---- peers ----------------------------------------------------------------------------------


def make_sets(B, H, L, d, l2_bytes, gen, max_bytes, dtype=torch.float16):
    elems = B * H * L * d
    set_bytes = 4 * elems * 2
    wanted = max(2, math.ceil(2 * l2_bytes / set_bytes))
    fit = max(0, max_bytes // set_bytes)
    n = min(wanted, fit)
    if n < 1:
        raise RuntimeError(f"not enough memory for one input set ({set_bytes} bytes)")
    sets = []
    for _ in range(n):
        q, k, v = (torch.rand((B, H, L, d), generator=gen, device="cuda", dtype=torch.float32)
                   .mul_(2).sub_(1).to(dtype) for _ in range(3))
        o = torch.empty_like(q)
        sets.append((q, k, v, o))
    return sets, {"set_bytes": set_bytes, "sets_wanted": wanted, "sets": n,
                  "total_bytes": n * set_bytes, "capped_by_free_memory": n < wanted}


# ---- one configuration ----------------------------------------------------------------------


def run_config(cfg, args, ctx):
    pattern, L, B, d, H = cfg
    res = {"name": config_name(*cfg), "pattern": pattern, "seq_len": L, "batch": B,
           "heads": H, "head_dim": d, "methods": {}}
    mask_np = ctx["masks"].get(pattern, L)
    nnz = int(mask_np.sum())
    res["nnz"] = nnz
    res["density"] = nnz / (L * L)
    res["useful_flops"] = 4.0 * B * H * nnz * d
    res["mask"] = ctx["masks"].info(pattern, L)
    mask_t = torch.from_numpy(mask_np).cuda()
    neg_mask, empty_rows = mask_operands(mask_t)
    mask_u8 = np.ascontiguousarray(mask_np, dtype=np.uint8)

    budget = max(0, free_memory() - MEMORY_MARGIN) // 4  # the sets take at most a quarter
    gen = torch.Generator(device="cuda")
    gen.manual_seed(args.seed * 1000003 + zlib.crc32(res["name"].encode()))
    bf16 = args.dtype == "bf16"
    tolerance = TOLERANCE_BF16 if bf16 else TOLERANCE
    sets, rot = make_sets(B, H, L, d, ctx["l2_bytes"], gen, budget,
                          torch.bfloat16 if bf16 else torch.float16)
    res["rotation"] = rot
    q0, k0, v0, _ = sets[0]
    ref = reference_fp32(q0[:1], k0[:1], v0[:1], mask_t)
    stream_box = [torch.cuda.current_stream().cuda_stream]  # the CUDA-graph mode swaps it

    def record(name, fn, setup, check_strict, extra=None):
        entry = {}
        if extra:
            entry.update(extra)
        try:
            t0 = time.perf_counter()
            setup_out = setup() if setup else None
            if isinstance(setup_out, dict):
                entry.update(setup_out)
            out = fn(sets[0])  # first call: compiles where there is anything to compile
            torch.cuda.synchronize()
            entry["setup_s"] = time.perf_counter() - t0
            worst, glob, _ = row_error(out[:1], ref)
            nan = int(torch.isnan(out).sum().item())  # over every batch element
            entry["check"] = {"row_err": worst, "global_err": glob, "nan": nan,
                              "passed": nan == 0 and worst < tolerance}
            del out
            if check_strict and not entry["check"]["passed"]:
                entry["skipped"] = (f"reference check failed: row error {worst:.3e}, "
                                    f"{nan} NaN (tolerance {tolerance})")
            else:
                entry["latency"] = time_method(fn, sets, args.warmup, args.runs)
                if args.cuda_graph:
                    try:
                        entry["graph_latency"] = time_graph(fn, sets, args.warmup, args.runs,
                                                            stream_box)
                    except Exception as e:  # noqa: BLE001 - recorded, plain timing stands
                        entry["graph_skipped"] = f"{type(e).__name__}: {str(e)[:300]}"
                        torch.cuda.synchronize()
        except torch.cuda.OutOfMemoryError as e:
            entry["skipped"] = "out of memory: " + str(e).split("\n")[0][:300]
        except Exception as e:  # noqa: BLE001 - any failure of a peer is data, not a crash
            entry["skipped"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
            if args.verbose:
                traceback.print_exc()
        torch.cuda.synchronize()
        res["methods"][name] = entry
        lat, glat = entry.get("latency"), entry.get("graph_latency")
        line = f"{lat['median_us']:10.2f} us" if lat else f"skipped: {entry['skipped']}"
        if glat:
            line += f"   graph {glat['median_us']:10.2f} us"
        elif "graph_skipped" in entry:
            line += f"   graph skipped: {entry['graph_skipped']}"
        log(f"    {name:<16} " + line)

    # ours (first, so its numbers never depend on what the peers left in the allocator)
    for name, (kernel, bm, bn, w) in ctx["ours"]:
        holder = {}

        def setup_ours(kernel=kernel, bm=bm, bn=bn, w=w, holder=holder):
            plan = ctx["stof"].prepare(mask_u8, B, H, L, d, kernel, bm, bn, w, bf16)
            holder["plan"] = plan
            info = {"choice": ctx["stof"].choice(plan), "plan": ctx["stof"].info(plan)}
            for (_, _, _, o) in sets:
                o.fill_(float("nan"))  # poison: every output must be written
            return info

        def run_ours(s, holder=holder):
            q, k, v, o = s
            ctx["stof"].run(holder["plan"], q, k, v, o, stream_box[0])
            return o

        record(name, run_ours, setup_ours, True)
        if "plan" in holder:
            ctx["stof"].release(holder["plan"])

    # FlexAttention at BLOCK_SIZE 128 and 64
    if "flex" in ctx["methods"]:
        for bs in (128, 64):
            holder = {}

            def setup_flex(bs=bs, holder=holder):
                holder["bm"], seconds = create_flex_block_mask(ctx["flex_state"], mask_t, bs)
                holder["opts"] = None
                return {"block_mask_s": seconds}

            def run_flex(s, holder=holder, bs=bs):
                q, k, v, _ = s
                if holder.get("opts") is None:
                    try:
                        return ctx["flex"](q, k, v, block_mask=holder["bm"])
                    except Exception:  # kernel tiles must divide BLOCK_SIZE: ask for 64x64
                        if bs >= 128:
                            raise
                        holder["opts"] = dict(FLEX_SMALL_BLOCK_OPTIONS)
                return ctx["flex"](q, k, v, block_mask=holder["bm"], kernel_options=holder["opts"])

            record(f"flex{bs}", run_flex, setup_flex, True)
            if holder.get("opts"):
                res["methods"][f"flex{bs}"]["kernel_options"] = holder["opts"]
            holder.clear()

    if "sdpa" in ctx["methods"]:
        def run_sdpa(s):
            q, k, v, _ = s
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask_t)
        record("sdpa", run_sdpa, None, False)

    if "sdpa" in ctx["methods"] and pattern in ("full", "causal"):
        # The dense kernels (FlashAttention-2 / cuDNN inside PyTorch): no mask tensor at all.
        def run_sdpa_dense(s):
            q, k, v, _ = s
            return F.scaled_dot_product_attention(q, k, v, is_causal=pattern == "causal")
        record("sdpa_dense", run_sdpa_dense, None, False)

    if "eager" in ctx["methods"]:
        def run_eager(s):
            q, k, v, _ = s
            return eager_attention(q, k, v, neg_mask, empty_rows)
        record("eager", run_eager, None, False)

    if "compile" in ctx["methods"]:
        def run_compiled(s):
            q, k, v, _ = s
            return ctx["compiled_eager"](q, k, v, neg_mask, empty_rows)
        record("compile", run_compiled, None, False)

    del sets, ref, q0, k0, v0
    free_memory()
    summarize_config(res, [n for n, _ in ctx["ours"]])
    return res


def speedups(res, ours_name, key):
    """peer / ours medians under `key` ("latency" or "graph_latency"); flex_best is the faster
    of the two Flex variants."""
    m = res["methods"]

    def lat(name):
        e = m.get(name, {})
        return e[key]["median_us"] if key in e else None

    ours = lat(ours_name)
    sp = {}
    if ours:
        flex = [x for x in (lat("flex128"), lat("flex64")) if x is not None]
        if flex:
            sp["flex_best"] = min(flex) / ours
        for peer in ("sdpa", "sdpa_dense", "eager", "compile"):
            if lat(peer):
                sp[peer] = lat(peer) / ours
    return sp


def summarize_config(res, ours_names):
    res["speedup"] = speedups(res, "ours", "latency")
    ours = res["methods"].get("ours", {}).get("latency")
    if ours:
        res["ours_tflops"] = res["useful_flops"] / (ours["median_us"] * 1e-6) * 1e-12
    res["speedup_by_variant"] = {n: speedups(res, n, "latency") for n in ours_names}
    res["graph_speedup_by_variant"] = {n: speedups(res, n, "graph_latency") for n in ours_names}


# ---- reporting --------------------------------------------------------------------------------


def print_table(results, methods_order, key="latency"):
    log("")
    widths = [max(11, len(n)) + 1 for n in methods_order]
    head = f"{'config':<28}" + "".join(f"{n:>{w}}" for n, w in zip(methods_order, widths)) + \
        f"{'xFlex':>8}{'xSDPA':>8}{'xDense':>8}{'xEager':>8}{'xComp':>8}"
    log(("latency" if key == "latency" else "CUDA-graph latency per call") +
        " in us (median); speedup = peer / ours (ours = the automatic choice)")
    log(head)
    for r in results:
        if "methods" not in r:
            log(f"{r['name']:<28} {r.get('not_run') and 'not run: ' + r['not_run'] or r.get('error', '')}")
            continue
        row = f"{r['name']:<28}"
        for n, w in zip(methods_order, widths):
            e = r["methods"].get(n, {})
            cell = fmt(e[key]["median_us"]) if key in e else \
                ("skip" if "skipped" in e or "graph_skipped" in e else "-")
            row += f"{cell:>{w}}"
        field = "speedup_by_variant" if key == "latency" else "graph_speedup_by_variant"
        sp = r.get(field, {}).get("ours", {})
        for k in ("flex_best", "sdpa", "sdpa_dense", "eager", "compile"):
            row += f"{fmt(sp.get(k), '{:.2f}'):>8}"
        log(row)


def summary_of(results, ours_name, field):
    """Geometric means of one of our variants' speedups (field: "speedup_by_variant" or
    "graph_speedup_by_variant") over the configurations that have them."""
    rows = [(r[field].get(ours_name, {}), r) for r in results if field in r]
    s = {}
    flex = [(sp["flex_best"], r["name"]) for sp, r in rows if "flex_best" in sp]
    if flex:
        s["geomean_speedup_over_best_flex"] = geomean([x for x, _ in flex])
        worst, best = min(flex), max(flex)
        s["worst_config_vs_flex"] = {"name": worst[1], "speedup": worst[0]}
        s["best_config_vs_flex"] = {"name": best[1], "speedup": best[0]}
        s["configs_slower_than_flex"] = [n for x, n in flex if x < 1.0]
    for peer in ("sdpa", "sdpa_dense", "eager", "compile"):
        xs = [sp[peer] for sp, _ in rows if peer in sp]
        if xs:
            s[f"geomean_speedup_over_{peer}"] = geomean(xs)
    long_eager = [(sp["eager"], r["name"]) for sp, r in rows
                  if r["seq_len"] >= 2048 and "eager" in sp]
    if long_eager:
        s["speedup_over_eager_L_ge_2048"] = {
            "geomean": geomean([x for x, _ in long_eager]),
            "min": min(long_eager)[0], "max": max(long_eager)[0],
            "per_config": {n: x for x, n in long_eager}}
    s["configs"] = len([1 for sp, _ in rows if sp])
    return s


def summary(results, ours_names):
    s = {"plain": {n: summary_of(results, n, "speedup_by_variant") for n in ours_names},
         "cuda_graph": {n: summary_of(results, n, "graph_speedup_by_variant")
                        for n in ours_names}}
    s["configs_done"] = len([r for r in results if "methods" in r])
    skipped = {}
    for r in results:
        for name, e in r.get("methods", {}).items():
            for k in ("skipped", "graph_skipped"):
                if k in e:
                    skipped.setdefault(name + (" (graph)" if k == "graph_skipped" else ""),
                                       []).append(f"{r['name']}: {e[k]}")
    s["skipped"] = skipped
    return s


def print_summary(s, mode):
    for name, v in s[mode].items():
        if not v.get("configs"):
            continue
        log(f"  {name} ({mode}, {v['configs']} configurations):")
        if "geomean_speedup_over_best_flex" in v:
            log(f"    geomean speedup over the faster Flex {v['geomean_speedup_over_best_flex']:.3f}; "
                f"worst {v['worst_config_vs_flex']['name']} x{v['worst_config_vs_flex']['speedup']:.3f}, "
                f"best {v['best_config_vs_flex']['name']} x{v['best_config_vs_flex']['speedup']:.3f}, "
                f"slower than Flex in {len(v['configs_slower_than_flex'])}")
        peers = [f"{p} {v[f'geomean_speedup_over_{p}']:.3f}"
                 for p in ("sdpa", "sdpa_dense", "eager", "compile")
                 if f"geomean_speedup_over_{p}" in v]
        if peers:
            log("    geomean speedup over " + ", ".join(peers))
        if "speedup_over_eager_L_ge_2048" in v:
            e = v["speedup_over_eager_L_ge_2048"]
            log(f"    over eager at L >= 2048: geomean {e['geomean']:.2f} (min {e['min']:.2f}, "
                f"max {e['max']:.2f})")


# ---- main ---------------------------------------------------------------------------------------


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stof", default=os.path.join(root, "build", "app", "stof"),
                    help="the stof binary (for `stof mask`)")
    ap.add_argument("--lib", default=os.path.join(root, "build", "kernels", "libstof_capi.so"),
                    help="libstof_capi.so")
    ap.add_argument("--quick", action="store_true", help="a small subset (see the header)")
    ap.add_argument("--grid", choices=("paper", "extended"), default="paper",
                    help="the STOF paper's grid, or masks outside it (see the header)")
    ap.add_argument("--filter", default="", help="regex over names like bigbird/L4096/B8/d64")
    ap.add_argument("--runs", type=int, default=50, help="timed calls per method (>= 50)")
    ap.add_argument("--warmup", type=int, default=10, help="untimed calls first")
    ap.add_argument("--methods", default="ours,flex,sdpa,eager,compile",
                    help="comma list of: ours, flex, sdpa, eager, compile (ours is always run)")
    ap.add_argument("--ours", default="auto",
                    help="our configurations: auto (Eq. 1/2), row_wise, native (the unfused "
                         "baseline), sd, sdf (softmax decomposition, + fusion), BMxBNxWARPS; "
                         "comma list")
    ap.add_argument("--seed", type=int, default=1, help="input seed")
    ap.add_argument("--dtype", choices=("f16", "bf16"), default="f16",
                    help="element type of q, k, v for every method (bf16: ours on the Hopper "
                         "kernel only, libstof_capi version >= 4)")
    ap.add_argument("--time-budget", type=float, default=0,
                    help="seconds after which no new configuration starts (0 = no limit)")
    ap.add_argument("--out", default="", help="raw results JSON (rewritten per configuration)")
    ap.add_argument("--cuda-graph", action="store_true",
                    help="also time every method as CUDA-graph replays (no launch overhead)")
    ap.add_argument("--verbose", action="store_true", help="print tracebacks of failures")
    args = ap.parse_args()
    if args.runs < 50:
        ap.error("--runs: at least 50")
    if args.warmup < 1:
        ap.error("--warmup: at least 1")
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    for m in methods:
        if m not in ("ours", "flex", "sdpa", "eager", "compile"):
            ap.error(f"--methods: unknown method '{m}'")
    if not torch.cuda.is_available():
        sys.exit("mha_compare: no CUDA device visible to torch")
    for path, what in ((args.stof, "--stof"), (args.lib, "--lib")):
        if not os.path.exists(path):
            sys.exit(f"mha_compare: {what}: {path} does not exist (build first)")

    started = time.time()
    torch.backends.cuda.matmul.allow_tf32 = False
    raise_dynamo_cache_limits()

    stof = Stof(args.lib)
    env = environment()
    l2_bytes = env["l2_bytes"]
    ctx = {"stof": stof, "l2_bytes": l2_bytes, "methods": methods,
           "ours": parse_ours(args.ours), "flex_state": FlexState()}
    if args.dtype == "bf16" and stof.version < 4:
        sys.exit(f"mha_compare: --dtype bf16 needs libstof_capi version >= 4, {args.lib} is "
                 f"version {stof.version} (rebuild)")
    if any(kernel == 3 for _, (kernel, _, _, _) in ctx["ours"]) and stof.version < 2:
        sys.exit(f"mha_compare: --ours native needs libstof_capi version >= 2, {args.lib} is "
                 f"version {stof.version} (rebuild)")
    if "flex" in methods:
        from torch.nn.attention.flex_attention import flex_attention
        ctx["flex"] = torch.compile(flex_attention, dynamic=False)
    if "compile" in methods:
        ctx["compiled_eager"] = torch.compile(eager_attention, dynamic=False)

    cfgs = build_grid(args)
    doc = {
        "tool": "tests/compare/mha_compare.py",
        **env,
        "stof_capi_version": stof.version,
        "args": vars(args),
        "heads": HEADS, "tolerance": TOLERANCE_BF16 if args.dtype == "bf16" else TOLERANCE,
        "timing": "torch.cuda.Event pair per call, back to back; median of runs; rotating sets"
                  + ("; graph_latency: CUDA-graph replays of one call per set, median per call"
                     if args.cuda_graph else ""),
        "results": [],
    }
    ours_names = [n for n, _ in ctx["ours"]]
    order = ours_names + [n for n in ("flex128", "flex64", "sdpa", "sdpa_dense", "eager",
                                      "compile")
                          if n.rstrip("0123456789") in methods or n in methods or
                          (n == "sdpa_dense" and "sdpa" in methods and args.grid == "extended")]
    log(f"mha_compare: {len(cfgs)} configurations on {doc['device']} (L2 {l2_bytes >> 20} MiB), "
        f"torch {env['torch']}, triton {env['triton']}; methods {', '.join(order)}")
    with tempfile.TemporaryDirectory(prefix="stof_masks_") as tmp:
        ctx["masks"] = GridMasks(args.stof, tmp)
        for i, cfg in enumerate(cfgs):
            name = config_name(*cfg)
            if args.time_budget and time.time() - started > args.time_budget:
                doc["results"].append({"name": name, "not_run": "time budget"})
                log(f"[{i + 1}/{len(cfgs)}] {name}: not run (time budget)")
                continue
            log(f"[{i + 1}/{len(cfgs)}] {name} ({time.time() - started:.0f} s)")
            try:
                res = run_config(cfg, args, ctx)
            except Exception as e:  # noqa: BLE001 - keep going with the next configuration
                res = {"name": name, "error": f"{type(e).__name__}: {e}"}
                log(f"    configuration failed: {res['error']}")
                if args.verbose:
                    traceback.print_exc()
            doc["results"].append(res)
            for field, label in (("speedup_by_variant", "speedup"),
                                 ("graph_speedup_by_variant", "graph speedup")):
                sp = res.get(field, {}).get("ours", {})
                if sp:
                    log(f"    {label}: " + ", ".join(f"x{k} {v:.2f}" for k, v in sp.items()))
            doc["summary"] = summary(doc["results"], ours_names)
            doc["elapsed_s"] = time.time() - started
            write_json(args.out, doc)
    doc["summary"] = summary(doc["results"], ours_names)
    doc["elapsed_s"] = time.time() - started
    write_json(args.out, doc)
    print_table(doc["results"], order)
    if args.cuda_graph:
        print_table(doc["results"], order, "graph_latency")
    s = doc["summary"]
    log("")
    log(f"summary over {s['configs_done']} configurations (speedup = peer / ours):")
    print_summary(s, "plain")
    if args.cuda_graph:
        print_summary(s, "cuda_graph")
    for name, why in s["skipped"].items():
        log(f"  skipped {name}: {len(why)} configuration(s), e.g. {why[0]}")
    log(f"elapsed {doc['elapsed_s']:.0f} s" + (f"; raw results: {args.out}" if args.out else ""))


if __name__ == "__main__":
    main()
