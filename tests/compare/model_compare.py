#!/usr/bin/env python3
"""Whole-model comparison on a GPU machine: STOF's engine (`stof run`, N layers) against PyTorch
running the same op graph (eager, torch.compile with SDPA, torch.compile with FlexAttention).

The layer each side runs is the op graph of `stof graph --model M --json` (docs/fusion.md): this
script reads that graph and builds the PyTorch layer from it (pre- or post-norm, LayerNorm or
RMSNorm, which Linears have a bias, whether the scores are scaled, causal AND user mask or the
user mask only, GELU (tanh form) or ReLU), and refuses a graph it does not recognise. Today:
  BERT    post-LN: QKV(+b) -> attention (1/sqrt(d), user mask) -> out(+b) -> +x -> LN
          -> up(+b) -> GELU tanh -> down(+b) -> +residual -> LN
  GPT-2   pre-LN: LN -> QKV(+b) -> attention (1/sqrt(d), causal AND user mask) -> out(+b) -> +x
          -> LN -> up(+b) -> GELU tanh -> down(+b) -> +residual
  T5      encoder, pre-RMSNorm, no biases, NO score scaling (T5 folds 1/sqrt(d) into its
          weights; our graph has no Scale op), user mask, ReLU FFN; no relative position bias
          (our graph does not model it)
LayerNorm eps 1e-5, RMSNorm eps 1e-6 (engine/cpu/reference.h's defaults).

Variants per (model, batch, seq, mask, layers):
  ours             `stof run --model M --batch B --seq L --mask NAME --layers N --json
                   [--plan FILE]` in a subprocess; its JSON's total_us (all layers, median)
  eager            the layers in eager PyTorch; attention = matmul, scale, masked_fill(-inf),
                   softmax, matmul (compare_common.eager_attention)
  compile_sdpa     torch.compile of the layers with F.scaled_dot_product_attention and a
                   boolean attn_mask [L, L]
  compile_flex128  torch.compile of the layers with flex_attention and a BlockMask built by
  compile_flex64   create_block_mask at BLOCK_SIZE 128 (and 64 with --flex-blocks 128,64)
  (--variants may add: sdpa = SDPA uncompiled, compile_eager = torch.compile of eager)
Weights: fp16, seeded (--seed), U(-1,1)/sqrt(fan_in) for Linear weights and biases, norm gains
U(0.9, 1.1), norm biases U(-0.1, 0.1); generated on the CPU in a fixed order, so layer i is the
same for every N and every variant. Input x: fp16 [B, L, hidden], U(-1, 1), seeded per config.

Timing of a PyTorch variant: the N layers are one callable; first call (compiles) timed as
setup_s; 3 calls estimate the time per call, which sets the repeats (--variant-seconds, within
--min-runs..--runs) and the warm-up; then CUDA-event pairs around each call (events_us, median)
and CUDA-graph replays of one call (graph_us, median; unless --no-graph). us = graph_us where
capture worked, else events_us; timing_method says which ("cuda_graph" or "events") and
graph_error why capture failed. A variant that fails (OOM, compile error, ...) is recorded with
its error and the run goes on. Outputs are not compared across the two processes (ours runs in
`stof run`); correctness of ours is tested by the GPU tests. PyTorch outputs are only checked
for NaN (output_nan).

Output: progress per variant; --out JSON (rewritten after every configuration) with
environment, rows {model, batch, seq, mask, layers, variant, us, timing_method, ...}, configs
(per configuration: speedup_over[peer] = peer us / ours us, > 1 = ours faster; best peer) and
summary (geomeans); then a table and a markdown summary (also --md FILE).

Usage (GPU machine, stof built with CUDA):
  python3 tests/compare/model_compare.py --stof /tmp/b/app/stof --models bert-base,gpt2-small \
      --shapes 1x128,8x512 --out /tmp/res/models.json --md /tmp/res/models.md --time-budget 500
  python3 tests/compare/model_compare.py --self-test     # no torch, no GPU: the pure-Python parts
"""

import argparse
import collections
import math
import os
import re
import shlex
import sys
import tempfile
import time
import traceback
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_common as cc  # noqa: E402 - after the path set-up

torch = cc.torch  # None where torch is not installed (--self-test, --only-ours)

# Layers of each preset (docs/fusion.md's table); `stof graph --json` does not carry them.
MODEL_LAYERS = {"bert-small": 4, "bert-base": 12, "bert-large": 24, "gpt2-small": 12,
                "gpt2-medium": 24, "t5-small": 6, "t5-base": 12}
DEFAULT_MODELS = "bert-small,bert-base,bert-large,gpt2-small,t5-small"
DEFAULT_SHAPES = "1x128,8x512,16x2048"
DEFAULT_VARIANTS = "eager,compile_sdpa,compile_flex"
KNOWN_VARIANTS = ("eager", "sdpa", "compile_eager", "compile_sdpa", "compile_flex")
LN_EPS = 1e-5    # engine/cpu/reference.h LayerNorm default
RMS_EPS = 1e-6   # engine/cpu/reference.h RmsNorm default


class UsageError(ValueError):
    """A bad command-line value; main() prints it and exits 2."""


# ---- command line -------------------------------------------------------------------------------


def split_list(text):
    return [s.strip() for s in text.split(",") if s.strip()]


def parse_shapes(text):
    """'1x128,8x512' -> [(1, 128), (8, 512)]."""
    shapes = []
    for item in split_list(text):
        m = re.fullmatch(r"(\d+)[xX](\d+)", item)
        if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
            raise UsageError(f"--shapes: expected BATCHxSEQ with positive integers (1x128), "
                             f"got '{item}'")
        shapes.append((int(m.group(1)), int(m.group(2))))
    if not shapes:
        raise UsageError("--shapes: nothing to run")
    return shapes


def parse_flex_blocks(text):
    """'128,64' -> [128, 64]: powers of two 16..256 (FlexAttention's tiles divide them)."""
    out = []
    for item in split_list(text):
        if not item.isdigit() or int(item) not in (16, 32, 64, 128, 256):
            raise UsageError(f"--flex-blocks: expected block sizes among 16, 32, 64, 128, 256, "
                             f"got '{item}'")
        if int(item) not in out:
            out.append(int(item))
    if not out:
        raise UsageError("--flex-blocks: expected at least one block size")
    return out


def parse_layers(text):
    """'1,full' -> [1, 'full']."""
    out = []
    for item in split_list(text):
        if item == "full":
            out.append(item)
        elif item.isdigit() and 1 <= int(item) <= 1024:
            out.append(int(item))
        else:
            raise UsageError(f"--layers: expected 1..1024 or 'full', got '{item}'")
    if not out:
        raise UsageError("--layers: nothing to run")
    return out


def resolve_layers(token, model):
    if token != "full":
        return token
    if model not in MODEL_LAYERS:
        raise UsageError(f"--layers full: no layer count known for model '{model}' (known: "
                         f"{', '.join(MODEL_LAYERS)}); give a number")
    return MODEL_LAYERS[model]


def parse_variants(text, flex_blocks):
    """'eager,compile_flex' with blocks [128, 64] -> ['eager', 'compile_flex128',
    'compile_flex64'] (the peer variants, in the order given)."""
    out = []
    for item in split_list(text):
        if item not in KNOWN_VARIANTS:
            raise UsageError(f"--variants: unknown '{item}'; expected some of "
                             f"{', '.join(KNOWN_VARIANTS)}")
        names = [f"compile_flex{bs}" for bs in flex_blocks] if item == "compile_flex" else [item]
        out += [n for n in names if n not in out]
    return out


def variant_kind(name):
    """'compile_flex64' -> ('compile_flex', 64); 'eager' -> ('eager', None)."""
    m = re.fullmatch(r"compile_flex(\d+)", name)
    return ("compile_flex", int(m.group(1))) if m else (name, None)


def config_name(cfg):
    return f"{cfg['model']}/B{cfg['batch']}/L{cfg['seq']}/{cfg['mask']}/N{cfg['layers']}"


def build_configs(models, shapes, masks, layer_tokens, regex=""):
    """Model-major, then shape, layers, mask innermost: the compiled peers recompile only
    when the shape or the layer count changes (a new mask of the same L reuses the code)."""
    cfgs = []
    for model in models:
        for batch, seq in shapes:
            for token in layer_tokens:
                n = resolve_layers(token, model)
                for mask in masks:
                    cfg = {"model": model, "batch": batch, "seq": seq, "mask": mask, "layers": n}
                    if cfg not in cfgs:
                        cfgs.append(cfg)
    if regex:
        rx = re.compile(regex)
        cfgs = [c for c in cfgs if rx.search(config_name(c))]
    return cfgs


def plan_for(template, cfg):
    """--plan: a path, or a pattern with {model} {batch} {seq} {mask} {layers}; None without."""
    if not template:
        return None
    try:
        return template.format(**cfg)
    except (KeyError, IndexError, ValueError) as e:
        raise UsageError(f"--plan: '{template}': expected placeholders among {{model}} "
                         f"{{batch}} {{seq}} {{mask}} {{layers}}, got {cc.error_text(e)}")


# ---- the layer, from our op graph ---------------------------------------------------------------


NORM_KINDS = {"LayerNorm": "layernorm", "RMSNorm": "rmsnorm"}
ACT_KINDS = {"GELU": "gelu", "ReLU": "relu"}
ROLE_KINDS = {
    "norm_attn": tuple(NORM_KINDS), "norm_ffn": tuple(NORM_KINDS), "qkv": ("GEMM",),
    "scores": ("BatchGEMM",), "scale": ("Scale",), "mask": ("Mask",), "softmax": ("Softmax",),
    "context": ("BatchGEMM",), "out": ("GEMM",), "add_attn": ("Add",), "up": ("GEMM",),
    "act": tuple(ACT_KINDS), "down": ("GEMM",), "add_ffn": ("Add",),
}
# '?' = optional op. Pre-norm (GPT-2, T5 encoder) and post-norm (BERT) layers.
PRE_NORM_ROLES = ["norm_attn", "qkv", "scores", "scale?", "mask", "softmax", "context", "out",
                  "add_attn", "norm_ffn", "up", "act", "down", "add_ffn"]
POST_NORM_ROLES = ["qkv", "scores", "scale?", "mask", "softmax", "context", "out", "add_attn",
                   "norm_attn", "up", "act", "down", "add_ffn", "norm_ffn"]


def _match_roles(ops, roles):
    got, i = {}, 0
    for role in roles:
        name = role.rstrip("?")
        if i < len(ops) and ops[i].get("kind") in ROLE_KINDS[name]:
            got[name] = ops[i]
            i += 1
        elif not role.endswith("?"):
            return None
    return got if i == len(ops) else None


def _reads(op):
    """The (source, producing op) pairs an op reads: ('op', 7), ('layer_input', None), ..."""
    return [(inp.get("source"), inp.get("op")) for inp in op.get("inputs", [])]


def parse_layer_graph(doc, what="stof graph"):
    """The PyTorch layer's description from `stof graph --json`: sizes, pre/post norm, norm
    kind and eps, biases per Linear, score scale, causal, activation. ValueError naming `what`
    when the graph is not a layer this script builds (e.g. T5's decoder layer)."""
    ops = doc.get("ops")
    if not isinstance(ops, list) or not ops:
        raise ValueError(f"{what}: ops: expected a non-empty list")
    kinds = [str(o.get("kind")) for o in ops]
    pre = kinds[0] in NORM_KINDS
    roles = _match_roles(ops, PRE_NORM_ROLES if pre else POST_NORM_ROLES)
    if roles is None:
        form = " ".join(r for r in (PRE_NORM_ROLES if pre else POST_NORM_ROLES))
        raise ValueError(f"{what}: ops {'-'.join(kinds)} are not a layer this script builds "
                         f"({'pre' if pre else 'post'}-norm roles: {form})")
    sizes = {}
    for key in ("hidden", "heads", "head_dim", "ffn"):
        v = doc.get(key)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{what}: {key}: expected a positive integer, got {v!r}")
        sizes[key] = v
    if roles["norm_attn"]["kind"] != roles["norm_ffn"]["kind"]:
        raise ValueError(f"{what}: the two norms differ ({roles['norm_attn']['kind']}, "
                         f"{roles['norm_ffn']['kind']})")

    def num(role):
        return roles[role].get("number")

    # The wiring this script implements (a different graph would silently mean other math).
    want = [("qkv", ("op", num("norm_attn")) if pre else ("layer_input", None)),
            ("add_attn", ("op", num("out"))), ("add_attn", ("layer_input", None)),
            ("norm_ffn" if pre else "norm_attn", ("op", num("add_attn"))),
            ("up", ("op", num("norm_ffn" if pre else "norm_attn"))),
            ("down", ("op", num("act"))), ("add_ffn", ("op", num("down"))),
            ("add_ffn", ("op", num("add_attn" if pre else "norm_attn")))]
    if not pre:
        want.append(("norm_ffn", ("op", num("add_ffn"))))
    for role, src in want:
        if src not in _reads(roles[role]):
            raise ValueError(f"{what}: op #{num(role)} ({roles[role].get('name')}): expected it "
                             f"to read {src[0]}{' #' + str(src[1]) if src[1] else ''}, "
                             f"reads {_reads(roles[role])}")
    inner = sizes["heads"] * sizes["head_dim"]
    for role, width in (("qkv", 3 * inner), ("out", sizes["hidden"]), ("up", sizes["ffn"]),
                        ("down", sizes["hidden"])):
        dims = roles[role].get("output", {}).get("dims", [])
        if not dims or dims[-1] != width:
            raise ValueError(f"{what}: op #{num(role)} ({roles[role].get('name')}): expected "
                             f"output width {width}, got dims {dims}")
    norm = NORM_KINDS[roles["norm_attn"]["kind"]]
    scaled = "scale" in roles
    return {
        "model": doc.get("model"), "family": doc.get("family"), "layer": doc.get("layer"),
        **sizes,
        "pre_norm": pre,
        "norm": norm, "norm_eps": LN_EPS if norm == "layernorm" else RMS_EPS,
        "bias": {r: bool(roles[r].get("has_bias", False)) for r in ("qkv", "out", "up", "down")},
        "scaled": scaled,
        "scale": 1.0 / math.sqrt(sizes["head_dim"]) if scaled else 1.0,
        "causal": bool(roles["mask"].get("causal", False)),
        "activation": ACT_KINDS[roles["act"]["kind"]],
        "op_kinds": kinds,
    }


def describe_spec(spec):
    biases = [r for r, b in spec["bias"].items() if b]
    return (f"{spec['model']}: {'pre' if spec['pre_norm'] else 'post'}-norm "
            f"{'LayerNorm' if spec['norm'] == 'layernorm' else 'RMSNorm'} "
            f"(eps {spec['norm_eps']:g}), hidden {spec['hidden']}, {spec['heads']} heads x "
            f"{spec['head_dim']}, FFN {spec['ffn']}, "
            f"biases {'/'.join(biases) if biases else 'none'}, "
            f"scores x {'1/sqrt(%d)' % spec['head_dim'] if spec['scaled'] else '1 (no Scale op)'}, "
            f"{'causal AND user mask' if spec['causal'] else 'user mask'}, "
            f"{'GELU (tanh)' if spec['activation'] == 'gelu' else 'ReLU'}, "
            f"{len(spec['op_kinds'])} ops")


# ---- ours: `stof run` ---------------------------------------------------------------------------


def ours_command(stof, cfg, plan=None, extra=""):
    cmd = [stof, "run", "--model", cfg["model"], "--batch", str(cfg["batch"]),
           "--seq", str(cfg["seq"]), "--mask", cfg["mask"], "--layers", str(cfg["layers"]),
           "--json"]
    if plan:
        cmd += ["--plan", plan]
    return cmd + shlex.split(extra)


def _positive_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def parse_ours(stdout):
    """`stof run --json`'s object, checked for the fields this script relies on: total_us (a
    positive number); layer_us, segments (a list), scheme (an object), device when present."""
    doc = cc.parse_json_output(stdout, "stof run --json")
    if not _positive_number(doc.get("total_us")):
        raise ValueError(f"stof run --json: total_us: expected a positive number, got "
                         f"{doc.get('total_us')!r}")
    lu = doc.get("layer_us")
    if lu is not None and not (_positive_number(lu) or (
            isinstance(lu, list) and lu and all(_positive_number(x) for x in lu))):
        raise ValueError(f"stof run --json: layer_us: expected a positive number or a list of "
                         f"them, got {lu!r}")
    if "segments" in doc and not isinstance(doc["segments"], list):
        raise ValueError("stof run --json: segments: expected a list")
    if "scheme" in doc and not isinstance(doc["scheme"], dict):
        raise ValueError("stof run --json: scheme: expected an object {code, hex}")
    return doc


def base_row(cfg, variant):
    return {"model": cfg["model"], "batch": cfg["batch"], "seq": cfg["seq"],
            "mask": cfg["mask"], "layers": cfg["layers"], "variant": variant,
            "us": None, "timing_method": None}


def run_ours(stof, cfg, plan=None, extra="", timeout=300):
    """One `stof run`; a row with us = total_us, or with error (the run goes on)."""
    row = base_row(cfg, "ours")
    cmd = ours_command(stof, cfg, plan, extra)
    row["command"] = shlex.join(cmd)
    if plan and not os.path.exists(plan):
        row["error"] = f"--plan: {plan}: no such file"
        return row
    t0 = time.perf_counter()
    try:
        doc = parse_ours(cc.run_stof(stof, cmd[1:], timeout))
    except (RuntimeError, ValueError) as e:
        row["error"] = str(e)
        return row
    finally:
        row["wall_s"] = round(time.perf_counter() - t0, 3)
    row["us"] = float(doc["total_us"])
    timing = doc.get("timing")
    row["timing_method"] = f"stof run: {timing}" if isinstance(timing, str) and timing else \
        "stof run total_us"
    copied = ("total_us", "layer_us", "device", "scheme", "segments")
    for key in copied[1:]:
        if key in doc:
            row[key] = doc[key]
    row["ours"] = {k: v for k, v in doc.items() if k not in copied}  # the rest, as printed
    return row


# ---- per-configuration ratios, summary, table, markdown -----------------------------------------


def config_key(row):
    return (row["model"], row["batch"], row["seq"], row["mask"], row["layers"])


def config_results(rows, peers):
    """Per configuration: ours' us, each peer's us, speedup_over[peer] = peer us / ours us
    (> 1: ours faster; CUDA-graph time where capture worked), speedup_over_events (the same
    with the peers' event-timed us: what a caller without CUDA graphs sees), the best peer."""
    groups = collections.OrderedDict()
    for r in rows:
        groups.setdefault(config_key(r), []).append(r)
    out = []
    for key, rs in groups.items():
        by = {r["variant"]: r for r in rs}
        c = dict(zip(("model", "batch", "seq", "mask", "layers"), key))
        c["name"] = config_name(c)
        ours = by.get("ours", {}).get("us")
        c["ours_us"] = ours
        c["peers_us"] = {p: by[p]["us"] for p in peers if by.get(p, {}).get("us")}
        c["peers_timing"] = {p: by[p].get("timing_method") for p in c["peers_us"]}
        c["errors"] = {v: r["error"] for v, r in by.items() if r.get("error")}
        c["speedup_over"], c["speedup_over_events"] = {}, {}
        if ours:
            for p, us in c["peers_us"].items():
                c["speedup_over"][p] = us / ours
                ev = by[p].get("events_us")
                if ev:
                    c["speedup_over_events"][p] = ev / ours
        if c["peers_us"]:
            best = min(c["peers_us"], key=c["peers_us"].get)
            c["best_peer"], c["best_peer_us"] = best, c["peers_us"][best]
            if ours:
                c["speedup_over_best_peer"] = c["best_peer_us"] / ours
        out.append(c)
    return out


def summarize(configs, peers):
    s = {"configs": len(configs),
         "configs_with_ours": len([c for c in configs if c["ours_us"]]),
         "geomean_speedup_over": {}, "geomean_speedup_over_events": {}}
    for p in peers:
        for field, dest in (("speedup_over", "geomean_speedup_over"),
                            ("speedup_over_events", "geomean_speedup_over_events")):
            xs = [c[field][p] for c in configs if p in c[field]]
            if xs:
                s[dest][p] = {"geomean": cc.geomean(xs), "configs": len(xs),
                              "min": min(xs), "max": max(xs)}
    best = [(c["speedup_over_best_peer"], c["name"]) for c in configs
            if "speedup_over_best_peer" in c]
    if best:
        s["geomean_speedup_over_best_peer"] = cc.geomean([x for x, _ in best])
        s["worst_config"] = {"name": min(best)[1], "speedup_over_best_peer": min(best)[0]}
        s["best_config"] = {"name": max(best)[1], "speedup_over_best_peer": max(best)[0]}
        s["configs_slower_than_best_peer"] = [n for x, n in best if x < 1.0]
        per_model = collections.OrderedDict()
        for c in configs:
            if "speedup_over_best_peer" in c:
                per_model.setdefault(c["model"], []).append(c["speedup_over_best_peer"])
        s["per_model_geomean_over_best_peer"] = {
            m: {"geomean": cc.geomean(xs), "configs": len(xs)} for m, xs in per_model.items()}
    failures = collections.OrderedDict()
    for c in configs:
        for v, e in c["errors"].items():
            failures.setdefault(v, []).append(f"{c['name']}: {e}")
    s["failures"] = failures
    return s


SHORT = {"eager": "eager", "sdpa": "sdpa", "compile_eager": "c_eager",
         "compile_sdpa": "c_sdpa"}


def short_name(variant):
    kind, bs = variant_kind(variant)
    return f"c_flex{bs}" if kind == "compile_flex" else SHORT.get(variant, variant)


def format_table(configs, peers, summary):
    """Plain-text table: us per variant (median), then ours' speedup over each peer and over
    the best peer (peer / ours), geometric means last."""
    cols = ["ours"] + peers
    width = max(28, max([len(c["name"]) for c in configs] + [0]) + 1)
    head = f"{'config':<{width}}" + "".join(f"{short_name(v):>12}" for v in cols) + \
        "".join(f"{'x' + short_name(p):>11}" for p in peers) + f"{'xbest':>8}"
    lines = ["us (median; PyTorch: CUDA graph where capture worked), speedup = peer / ours", head]
    for c in configs:
        line = f"{c['name']:<{width}}"
        for v in cols:
            us = c["ours_us"] if v == "ours" else c["peers_us"].get(v)
            line += f"{cc.fmt(us) if us else ('fail' if v in c['errors'] else '-'):>12}"
        for p in peers:
            line += f"{cc.fmt(c['speedup_over'].get(p), '{:.2f}'):>11}"
        line += f"{cc.fmt(c.get('speedup_over_best_peer'), '{:.2f}'):>8}"
        lines.append(line)
    gm = f"{'geomean':<{width}}" + " " * 12 * len(cols)
    for p in peers:
        g = summary["geomean_speedup_over"].get(p, {}).get("geomean")
        gm += f"{cc.fmt(g, '{:.2f}'):>11}"
    gm += f"{cc.fmt(summary.get('geomean_speedup_over_best_peer'), '{:.2f}'):>8}"
    lines.append(gm)
    return "\n".join(lines)


def format_markdown(env, configs, peers, summary, specs=None):
    """A section ready for docs/benchmarks.md: where, how, the per-configuration table with
    ratios, geomeans and failures."""
    out = [f"### Whole models against PyTorch ({env.get('device') or 'device unknown'}, "
           f"{env.get('date', '')[:10]})", ""]
    out.append(f"torch {env.get('torch')}, Triton {env.get('triton')}, CUDA {env.get('cuda')}; "
               f"`{env.get('stof_version') or 'stof ?'}`. Command: "
               f"`{env.get('command_line', '')}`.")
    out.append("Times in us, median over the N layers as one call: PyTorch as CUDA-graph "
               "replays where capture worked (else CUDA events), ours `stof run`'s total_us. "
               "In parentheses: ours' speedup = peer / ours (> 1: ours faster).")
    if specs:
        out.append("")
        for spec in specs.values():
            out.append(f"- {describe_spec(spec)}")
    head = ["model", "batch x seq", "mask", "layers", "ours"] + peers + ["best peer",
                                                                         "ours vs best"]
    align = ["---", "---", "---", "---:", "---:"] + ["---:"] * len(peers) + ["---", "---:"]
    out += ["", "| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    events_timed = False
    for c in configs:
        cells = [c["model"], f"{c['batch']} x {c['seq']}", c["mask"], str(c["layers"]),
                 cc.fmt(c["ours_us"]) if c["ours_us"] else
                 ("failed" if "ours" in c["errors"] else "-")]
        for p in peers:
            us = c["peers_us"].get(p)
            if us:
                sp = c["speedup_over"].get(p)
                mark = "" if c["peers_timing"].get(p) == "cuda_graph" else " †"
                events_timed = events_timed or bool(mark)
                cells.append(cc.fmt(us) + mark + (f" ({sp:.2f}x)" if sp else ""))
            else:
                cells.append("failed" if p in c["errors"] else "-")
        cells.append(c.get("best_peer", "-"))
        sp = c.get("speedup_over_best_peer")
        cells.append(f"**{sp:.2f}x**" if sp else "-")
        out.append("| " + " | ".join(cells) + " |")
    gms = [f"{p} {v['geomean']:.2f}x ({v['configs']})"
           for p, v in summary["geomean_speedup_over"].items()]
    out.append("")
    if events_timed:
        out.append("†: timed with CUDA events (no CUDA graph: capture failed or --no-graph), "
                   "host launch overhead included.")
    if gms:
        out.append("Geometric mean of ours' speedup (configurations): " + ", ".join(gms) +
                   (f"; over the best peer per configuration "
                    f"{summary['geomean_speedup_over_best_peer']:.2f}x"
                    if summary.get("geomean_speedup_over_best_peer") else "") + ".")
    else:
        out.append("No configuration has both ours and a peer measured.")
    if summary.get("configs_slower_than_best_peer"):
        out.append("Ours slower than the best peer: " +
                   ", ".join(summary["configs_slower_than_best_peer"]) + ".")
    if summary["failures"]:
        out += ["", "Failures:"]
        for v, items in summary["failures"].items():
            out.append(f"- {v}: " + "; ".join(f"`{x}`" for x in items[:4]) +
                       (f" (and {len(items) - 4} more)" if len(items) > 4 else ""))
    return "\n".join(out) + "\n"


# ---- PyTorch side -------------------------------------------------------------------------------


if torch is not None:
    nn = torch.nn
    F = torch.nn.functional
    try:  # imported here, not inside a traced function
        from torch.nn.attention.flex_attention import flex_attention
    except ImportError:
        flex_attention = None

    def _uniform(gen, shape, lo, hi):
        t = torch.rand(shape, generator=gen, dtype=torch.float32) * (hi - lo) + lo
        return nn.Parameter(t.to(device="cuda", dtype=torch.float16), requires_grad=False)

    class Linear(nn.Module):
        """nn.Linear's math (x W^T + b, W [out, in]), seeded U(-1,1)/sqrt(fan_in) init."""

        def __init__(self, n_in, n_out, bias, gen):
            super().__init__()
            bound = 1.0 / math.sqrt(n_in)
            self.weight = _uniform(gen, (n_out, n_in), -bound, bound)
            self.bias = _uniform(gen, (n_out,), -bound, bound) if bias else None

        def forward(self, x):
            return F.linear(x, self.weight, self.bias)

    class Norm(nn.Module):
        def __init__(self, kind, n, eps, gen):
            super().__init__()
            self.kind, self.n, self.eps = kind, n, eps
            self.weight = _uniform(gen, (n,), 0.9, 1.1)
            self.bias = _uniform(gen, (n,), -0.1, 0.1) if kind == "layernorm" else None

        def forward(self, x):
            if self.kind == "rmsnorm":
                return F.rms_norm(x, (self.n,), self.weight, self.eps)
            return F.layer_norm(x, (self.n,), self.weight, self.bias, self.eps)

    class Layer(nn.Module):
        """One layer of the graph parse_layer_graph described; attention is passed in."""

        def __init__(self, spec, gen):
            super().__init__()
            h, f, inner = spec["hidden"], spec["ffn"], spec["heads"] * spec["head_dim"]
            self.pre_norm = spec["pre_norm"]
            self.heads, self.head_dim = spec["heads"], spec["head_dim"]
            self.gelu = spec["activation"] == "gelu"
            b = spec["bias"]
            # Creation order fixes the random stream: never reorder.
            self.qkv = Linear(h, 3 * inner, b["qkv"], gen)
            self.out = Linear(inner, h, b["out"], gen)
            self.norm_attn = Norm(spec["norm"], h, spec["norm_eps"], gen)
            self.up = Linear(h, f, b["up"], gen)
            self.down = Linear(f, h, b["down"], gen)
            self.norm_ffn = Norm(spec["norm"], h, spec["norm_eps"], gen)

        def act(self, x):
            return F.gelu(x, approximate="tanh") if self.gelu else F.relu(x)

        def attention(self, x, attend):
            B, L, _ = x.shape
            qkv = self.qkv(x).view(B, L, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
            ctx = attend(qkv[0], qkv[1], qkv[2])                   # [B, heads, L, head_dim]
            return self.out(ctx.transpose(1, 2).reshape(B, L, self.heads * self.head_dim))

        def forward(self, x, attend):
            if self.pre_norm:
                x = x + self.attention(self.norm_attn(x), attend)
                return x + self.down(self.act(self.up(self.norm_ffn(x))))
            x = self.norm_attn(x + self.attention(x, attend))
            return self.norm_ffn(x + self.down(self.act(self.up(x))))

    class Runner(nn.Module):
        """N shared layers with one attention implementation: forward(x, attn_arg), attn_arg
        = (neg_mask, empty_rows) for eager, the bool [L, L] mask for sdpa, the BlockMask for
        flex. One Runner per (variant, N, kernel options), so a compiled Runner never sees
        another mode (no guard flip-flop); the layers' weights are shared by all."""

        def __init__(self, layers, mode, scale, kernel_options=None):
            super().__init__()
            self.layers = nn.ModuleList(layers)
            self.mode, self.scale, self.kernel_options = mode, scale, kernel_options

        def attend(self, q, k, v, attn_arg):
            if self.mode == "eager":
                return cc.eager_attention(q, k, v, attn_arg[0], attn_arg[1], scale=self.scale)
            if self.mode == "sdpa":
                return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_arg,
                                                      scale=self.scale)
            if flex_attention is None:
                raise RuntimeError(f"torch {torch.__version__} has no flex_attention")
            return flex_attention(q, k, v, block_mask=attn_arg, scale=self.scale,
                                  kernel_options=self.kernel_options)

        def forward(self, x, attn_arg):
            for layer in self.layers:
                x = layer(x, lambda q, k, v: self.attend(q, k, v, attn_arg))
            return x


class TorchSide:
    """The PyTorch variants: per model the graph spec and the seeded layers (grown on demand,
    in order, so layer i never depends on N), Runners and compiled Runners cached per
    (model, mode, N, compiled, kernel options), the Flex mask state."""

    def __init__(self, args, variants):
        self.args = args
        self.variants = variants
        self.models = {}
        self.runners = {}
        self.flex_state = cc.FlexState()
        self.flex_options = {}  # BLOCK_SIZE -> kernel_options found necessary once

    def model_state(self, model):
        if model not in self.models:
            out = cc.run_stof(self.args.stof, ["graph", "--model", model, "--batch", 1,
                                               "--seq", 128, "--json"])
            what = f"stof graph --model {model}"
            spec = parse_layer_graph(cc.parse_json_output(out, what), what)
            gen = torch.Generator()  # CPU: the same numbers on every machine
            gen.manual_seed(self.args.seed * 1000003 + zlib.crc32(model.encode()))
            self.models[model] = {"spec": spec, "gen": gen, "layers": []}
            cc.log(f"  layer: {describe_spec(spec)}")
        return self.models[model]

    def layers(self, model, n):
        st = self.model_state(model)
        with torch.no_grad():
            while len(st["layers"]) < n:
                st["layers"].append(Layer(st["spec"], st["gen"]))
        return st["layers"][:n]

    def runner(self, model, n, mode, compiled, kernel_options=None):
        key = (model, n, mode, compiled, tuple(sorted((kernel_options or {}).items())))
        if key not in self.runners:
            r = Runner(self.layers(model, n), mode, self.model_state(model)["spec"]["scale"],
                       kernel_options)
            self.runners[key] = torch.compile(r, dynamic=False) if compiled else r
        return self.runners[key]

    def plan_runs(self, fn, sets):
        """Repeats within --variant-seconds per timing mode, --min-runs..--runs; warm-up about
        half a second, 2..--warmup calls."""
        est = cc.time_method(fn, sets, 1, 3)["median_us"]
        a = self.args
        runs = int(min(a.runs, max(a.min_runs, a.variant_seconds * 1e6 / max(est, 1.0))))
        warmup = int(min(a.warmup, max(2, 0.5e6 / max(est, 1.0))))
        return runs, warmup, est

    def run_config(self, cfg, masks, deadline):
        model, B, L, n = cfg["model"], cfg["batch"], cfg["seq"], cfg["layers"]
        spec = self.model_state(model)["spec"]
        mask_t = torch.from_numpy(masks.get(cfg["mask"], L)).cuda()
        if spec["causal"]:
            mask_t = mask_t & torch.ones(L, L, dtype=torch.bool, device="cuda").tril()
        nnz = int(mask_t.sum().item())
        neg_mask, empty_rows = cc.mask_operands(mask_t)
        info = {"attended": nnz, "density": nnz / (L * L), "causal": spec["causal"],
                "empty_rows": 0 if empty_rows is None else int(empty_rows.sum().item())}
        gen = torch.Generator(device="cuda")
        gen.manual_seed(self.args.seed * 1000003 + zlib.crc32(config_name(cfg).encode()))
        x = (torch.rand((B, L, spec["hidden"]), generator=gen, device="cuda") * 2 - 1).half()
        sets = [(x,)]
        rows = []
        for variant in self.variants:
            if deadline and time.time() > deadline:
                row = base_row(cfg, variant)
                row["not_run"] = "time budget"
                rows.append(row)
                continue
            with torch.no_grad():
                row = self.run_variant(cfg, variant, sets, mask_t, (neg_mask, empty_rows))
            row["mask_info"] = info
            rows.append(row)
            line = f"{row['us']:12.1f} us ({row['timing_method']})" if row["us"] else \
                f"failed: {row.get('error')}"
            if row.get("graph_error"):
                line += f"; graph capture failed: {row['graph_error']}"
            cc.log(f"    {variant:<18}{line}")
            try:
                cc.free_memory()
            except Exception:  # noqa: BLE001 - a broken context shows in the next variant
                pass
        return rows

    def run_variant(self, cfg, variant, sets, mask_t, eager_arg):
        row = base_row(cfg, variant)
        kind, bs = variant_kind(variant)
        model, n = cfg["model"], cfg["layers"]
        try:
            t0 = time.perf_counter()
            if kind in ("eager", "compile_eager"):
                arg = eager_arg
                r = self.runner(model, n, "eager", kind == "compile_eager")
            elif kind in ("sdpa", "compile_sdpa"):
                arg = mask_t
                r = self.runner(model, n, "sdpa", kind == "compile_sdpa")
            else:
                arg, row["block_mask_s"] = cc.create_flex_block_mask(self.flex_state, mask_t, bs)
                opts = self.flex_options.get(bs)
                if opts:
                    row["kernel_options"] = opts
                r = self.runner(model, n, "flex", True, opts)
            try:
                out = r(sets[0][0], arg)  # first call: compiles where there is anything to
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001 - Flex's tiles may not divide BLOCK_SIZE
                if kind != "compile_flex" or bs >= 128 or row.get("kernel_options"):
                    raise
                row["first_try_error"] = cc.error_text(e)
                row["kernel_options"] = dict(cc.FLEX_SMALL_BLOCK_OPTIONS)
                r = self.runner(model, n, "flex", True, row["kernel_options"])
                out = r(sets[0][0], arg)
                torch.cuda.synchronize()
            if row.get("kernel_options"):
                self.flex_options[bs] = row["kernel_options"]
            row["setup_s"] = round(time.perf_counter() - t0, 3)
            row["output_nan"] = bool(torch.isnan(out).any().item())
            del out

            def fn(s):
                return r(s[0], arg)

            runs, warmup, est = self.plan_runs(fn, sets)
            row["estimate_us"] = est
            ev = cc.time_method(fn, sets, warmup, runs)
            row["events"], row["events_us"] = ev, ev["median_us"]
            row["us"], row["timing_method"] = ev["median_us"], "events"
            if not self.args.no_graph:
                try:
                    g = cc.time_graph(fn, sets, warmup, runs)
                    row["graph"], row["graph_us"] = g, g["median_us"]
                    row["us"], row["timing_method"] = g["median_us"], "cuda_graph"
                except Exception as e:  # noqa: BLE001 - recorded; event timing stands
                    row["graph_error"] = cc.error_text(e)
                    if self.args.verbose:
                        traceback.print_exc()
        except torch.cuda.OutOfMemoryError as e:
            row["us"], row["timing_method"] = None, None
            row["error"] = "out of memory: " + str(e).split("\n")[0][:300]
        except Exception as e:  # noqa: BLE001 - any failure of a peer is data, not a crash
            row["us"], row["timing_method"] = None, None
            row["error"] = cc.error_text(e)
            if self.args.verbose:
                traceback.print_exc()
        return row


# ---- main ---------------------------------------------------------------------------------------


def parse_args(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stof", default=os.path.join(root, "build", "app", "stof"),
                    help="the stof binary (stof run, graph, mask)")
    ap.add_argument("--models", default=DEFAULT_MODELS, help="comma list of presets")
    ap.add_argument("--shapes", default=DEFAULT_SHAPES, help="comma list of BATCHxSEQ")
    ap.add_argument("--masks", default="bigbird", help="comma list of stof mask patterns")
    ap.add_argument("--layers", default="1", help="comma list of layer counts or 'full' "
                    "(the preset's layer count)")
    ap.add_argument("--variants", default=DEFAULT_VARIANTS,
                    help=f"PyTorch variants, comma list of {', '.join(KNOWN_VARIANTS)}")
    ap.add_argument("--flex-blocks", default="128", help="BLOCK_SIZEs of compile_flex: 128,64")
    ap.add_argument("--filter", default="", help="regex over names like "
                    "bert-base/B8/L512/bigbird/N1")
    ap.add_argument("--plan", default="", help="passed to stof run --plan: a file, or a pattern "
                    "with {model} {batch} {seq} {mask} {layers}")
    ap.add_argument("--ours-args", default="", help="extra arguments for stof run (one string)")
    ap.add_argument("--ours-timeout", type=float, default=300, help="seconds per stof run")
    ap.add_argument("--only-ours", action="store_true", help="no PyTorch variants (no torch "
                    "needed)")
    ap.add_argument("--skip-ours", action="store_true", help="no stof run")
    ap.add_argument("--no-graph", action="store_true", help="PyTorch timed with CUDA events only")
    ap.add_argument("--runs", type=int, default=100, help="most timed calls per variant and mode")
    ap.add_argument("--min-runs", type=int, default=10, help="fewest timed calls")
    ap.add_argument("--warmup", type=int, default=10, help="most untimed calls first")
    ap.add_argument("--variant-seconds", type=float, default=3.0,
                    help="aim of the timed calls' duration per variant and mode")
    ap.add_argument("--seed", type=int, default=1, help="weights and inputs")
    ap.add_argument("--time-budget", type=float, default=0, help="seconds after which no new "
                    "configuration or variant starts (0 = no limit)")
    ap.add_argument("--out", default="", help="results JSON (rewritten per configuration)")
    ap.add_argument("--md", default="", help="also write the markdown summary here")
    ap.add_argument("--verbose", action="store_true", help="print tracebacks of failures")
    ap.add_argument("--self-test", action="store_true", help="test the pure-Python parts "
                    "(no torch, no GPU) and exit")
    args = ap.parse_args(argv)
    if args.only_ours and args.skip_ours:
        ap.error("--only-ours and --skip-ours: nothing would run")
    if args.min_runs < 3 or args.runs < args.min_runs:
        ap.error("--runs/--min-runs: expected 3 <= --min-runs <= --runs")
    if args.warmup < 2:
        ap.error("--warmup: at least 2")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.self_test:
        return self_test(args)
    try:
        models = split_list(args.models)
        if not models:
            raise UsageError("--models: nothing to run")
        shapes = parse_shapes(args.shapes)
        masks = split_list(args.masks)
        if not masks:
            raise UsageError("--masks: nothing to run")
        flex_blocks = parse_flex_blocks(args.flex_blocks)
        peers = [] if args.only_ours else parse_variants(args.variants, flex_blocks)
        cfgs = build_configs(models, shapes, masks, parse_layers(args.layers), args.filter)
        plans = {config_name(c): plan_for(args.plan, c) for c in cfgs}
    except (UsageError, re.error) as e:
        print(f"model_compare: {e}", file=sys.stderr)
        return 2
    if not cfgs:
        print("model_compare: no configuration left (--filter?)", file=sys.stderr)
        return 2
    if not args.only_ours and (torch is None or not torch.cuda.is_available()):
        print("model_compare: the PyTorch variants need torch with a CUDA device "
              f"({'torch not importable' if torch is None else 'no CUDA device'}); "
              "--only-ours runs ours alone", file=sys.stderr)
        return 2

    started = time.time()
    deadline = started + args.time_budget if args.time_budget else 0
    env = cc.environment(argv)
    try:
        env["stof_version"] = cc.run_stof(args.stof, ["--version"], 30).strip()
    except RuntimeError as e:
        env["stof_version"] = None
        cc.log(f"model_compare: warning: {e}")
    doc = {"tool": "tests/compare/model_compare.py", "environment": env, "args": vars(args),
           "settings": {"peers": peers, "ln_eps": LN_EPS, "rms_eps": RMS_EPS,
                        "weights": "fp16, U(-1,1)/sqrt(fan_in) (Linear weights and biases), "
                                   "norm gain U(0.9,1.1), norm bias U(-0.1,0.1); CPU generator",
                        "speedup": "peer us / ours us (> 1: ours faster)",
                        "pytorch_timing": "CUDA-event pairs (events_us) and CUDA-graph replays "
                                          "(graph_us) of the N layers as one call; us = graph_us "
                                          "where capture worked"},
           "models": {}, "masks": {}, "rows": [], "configs": [], "summary": {}}
    side = None
    if not args.only_ours:
        torch.backends.cuda.matmul.allow_tf32 = False
        cc.raise_dynamo_cache_limits()
        side = TorchSide(args, peers)
        doc["settings"]["fp16_reduced_precision_reduction"] = \
            torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction
    cc.log(f"model_compare: {len(cfgs)} configurations on {env.get('device') or '?'}, "
           f"torch {env.get('torch')}, triton {env.get('triton')}; variants "
           f"{', '.join(([] if args.skip_ours else ['ours']) + peers)}")

    def finish():
        doc["configs"] = config_results(doc["rows"], peers)
        doc["summary"] = summarize(doc["configs"], peers)
        doc["elapsed_s"] = round(time.time() - started, 1)
        cc.write_json(args.out, doc)

    with tempfile.TemporaryDirectory(prefix="stof_model_masks_") as tmp:
        masks_src = cc.Masks(args.stof, tmp)
        for i, cfg in enumerate(cfgs):
            name = config_name(cfg)
            variants = ([] if args.skip_ours else ["ours"]) + peers
            if deadline and time.time() > deadline:
                cc.log(f"[{i + 1}/{len(cfgs)}] {name}: not run (time budget)")
                for v in variants:
                    row = base_row(cfg, v)
                    row["not_run"] = "time budget"
                    doc["rows"].append(row)
                finish()
                continue
            cc.log(f"[{i + 1}/{len(cfgs)}] {name} ({time.time() - started:.0f} s)")
            mkey = f"{cfg['mask']}/L{cfg['seq']}"
            if mkey not in doc["masks"]:
                try:
                    doc["masks"][mkey] = masks_src.info(cfg["mask"], cfg["seq"])
                except (RuntimeError, ValueError) as e:
                    doc["masks"][mkey] = {"error": str(e)}
            if not args.skip_ours:
                if side:
                    try:
                        cc.free_memory()  # PyTorch's cached blocks back, for the other process
                    except Exception as e:  # noqa: BLE001 - a broken context: peers will say
                        cc.log(f"    warning: {cc.error_text(e)}")
                row = run_ours(args.stof, cfg, plans[name], args.ours_args, args.ours_timeout)
                ours_dev = row.get("device")
                if isinstance(ours_dev, str) and env.get("device") and \
                        env["device"] not in ours_dev and ours_dev not in env["device"]:
                    row["device_mismatch"] = f"stof run: {ours_dev}; torch: {env['device']}"
                ours_mask = row.get("ours", {}).get("mask")
                want = doc["masks"][mkey].get("hash")
                if isinstance(ours_mask, dict) and ours_mask.get("hash") and want:
                    # The PyTorch side's mask is `stof mask --pattern NAME`'s: same hash, same mask.
                    row["mask_hash_match"] = ours_mask["hash"] == want
                    if not row["mask_hash_match"]:
                        cc.log(f"    warning: stof run's mask hash {ours_mask['hash']} differs "
                               f"from stof mask's {want}")
                doc["rows"].append(row)
                cc.log(f"    {'ours':<18}" + (f"{row['us']:12.1f} us ({row['timing_method']})"
                                              if row["us"] else f"failed: {row['error']}"))
            if side:
                try:
                    rows = side.run_config(cfg, masks_src, deadline)
                    doc["models"][cfg["model"]] = side.model_state(cfg["model"])["spec"]
                except Exception as e:  # noqa: BLE001 - e.g. stof graph failed: all peers fail
                    err = cc.error_text(e, 400)
                    cc.log(f"    configuration failed: {err}")
                    if args.verbose:
                        traceback.print_exc()
                    rows = []
                    for v in peers:
                        row = base_row(cfg, v)
                        row["error"] = err
                        rows.append(row)
                doc["rows"] += rows
            finish()
    finish()
    cc.log("")
    cc.log(format_table(doc["configs"], peers, doc["summary"]))
    s = doc["summary"]
    cc.log("")
    for p, v in s["geomean_speedup_over"].items():
        ev = s["geomean_speedup_over_events"].get(p)
        cc.log(f"  ours over {p:<16} geomean {v['geomean']:.2f}x over {v['configs']} configs "
               f"(min {v['min']:.2f}, max {v['max']:.2f})"
               + (f"; against its event-timed us {ev['geomean']:.2f}x" if ev else ""))
    if s.get("geomean_speedup_over_best_peer"):
        worst = s["worst_config"]
        cc.log(f"  ours over the best peer: geomean {s['geomean_speedup_over_best_peer']:.2f}x; "
               f"worst {worst['name']} {worst['speedup_over_best_peer']:.2f}x")
    for v, items in s["failures"].items():
        cc.log(f"  {v} failed in {len(items)} configuration(s), e.g. {items[0]}")
    md = format_markdown(env, doc["configs"], peers, s, doc["models"])
    doc["markdown"] = md
    cc.write_json(args.out, doc)
    if args.md:
        with open(args.md, "w") as f:
            f.write(md)
    cc.log("")
    cc.log(md)
    cc.log(f"elapsed {doc['elapsed_s']:.0f} s" + (f"; results: {args.out}" if args.out else ""))
    return 0


# ---- self-test (no torch, no GPU) ---------------------------------------------------------------


FAKE_STOF = r'''#!/usr/bin/env python3
# A stand-in for `stof` in model_compare.py --self-test: run answers by mask name.
import json, sys, time
a = sys.argv[1:]
def opt(name, default=None):
    return a[a.index(name) + 1] if name in a else default
if a == ["--version"]:
    print("stof fake 0.0"); sys.exit(0)
if a[0] == "mask":
    print(json.dumps({"nnz": 7, "hash": "fake", "rows": int(opt("--seq")), "out": opt("--out")}))
    sys.exit(0)
if a[0] == "graph":
    print("The following argument was not expected: --x", file=sys.stderr)
    print("Run with --help for more information.", file=sys.stderr); sys.exit(106)
if a[0] != "run":
    print("fake stof: no " + a[0], file=sys.stderr); sys.exit(1)
mask, layers, batch = opt("--mask"), int(opt("--layers")), int(opt("--batch"))
if mask == "fail":
    print("stof run: mask: unknown 'fail'", file=sys.stderr); sys.exit(1)
if mask == "badjson":
    print("hello, not json"); sys.exit(0)
if mask == "slow":
    time.sleep(10)
if mask == "zero":
    print(json.dumps({"total_us": 0})); sys.exit(0)
print("tuning... done")   # a line before the JSON must be tolerated
doc = {"total_us": 100.0 * layers * batch, "layer_us": [100.0 * batch] * layers,
       "segments": [{"ops": [1], "template": "", "us": 1.0}], "device": "NVIDIA H100 80GB HBM3",
       "scheme": {"code": "10000011100011", "hex": "14:20e3"}, "timing": "cuda events",
       "mask": {"hash": "fake" if batch == 1 else "other"}}
if opt("--plan"):
    doc["plan"] = opt("--plan")
print(json.dumps(doc, indent=1))
'''


def self_test(args):
    """Checks every part that needs neither torch nor a GPU; uses --stof for `stof graph` and
    `stof mask` when it exists (skipped with a note otherwise) and a fake stof for `stof run`."""
    import contextlib
    import io
    import json
    checks = [0]

    def quiet_main(argv):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return main(argv)

    def ok(cond, what):
        if not cond:
            raise AssertionError(f"self-test: {what}")
        checks[0] += 1

    def raises(fn, exc, text, what):
        try:
            fn()
        except exc as e:
            ok(text in str(e), f"{what}: message '{e}' lacks '{text}'")
            return
        raise AssertionError(f"self-test: {what}: no {exc.__name__}")

    # command-line parsing
    ok(parse_shapes("1x128, 8X512") == [(1, 128), (8, 512)], "parse_shapes")
    raises(lambda: parse_shapes("1x"), UsageError, "'1x'", "bad shape")
    raises(lambda: parse_shapes("0x128"), UsageError, "positive", "zero batch")
    raises(lambda: parse_shapes(""), UsageError, "nothing", "no shape")
    ok(parse_flex_blocks("128,64,128") == [128, 64], "parse_flex_blocks")
    raises(lambda: parse_flex_blocks("100"), UsageError, "'100'", "bad block")
    ok(parse_layers("1,full") == [1, "full"], "parse_layers")
    raises(lambda: parse_layers("0"), UsageError, "'0'", "zero layers")
    ok(resolve_layers("full", "bert-large") == 24 and resolve_layers(3, "x") == 3, "resolve")
    raises(lambda: resolve_layers("full", "mine"), UsageError, "mine", "full of unknown model")
    ok(parse_variants("eager,compile_flex,compile_sdpa", [128, 64]) ==
       ["eager", "compile_flex128", "compile_flex64", "compile_sdpa"], "parse_variants")
    raises(lambda: parse_variants("flex", [128]), UsageError, "'flex'", "unknown variant")
    ok(variant_kind("compile_flex64") == ("compile_flex", 64) and
       variant_kind("eager") == ("eager", None), "variant_kind")
    cfgs = build_configs(["bert-base", "t5-small"], [(1, 128), (8, 512)], ["bigbird"],
                         [1, "full"])
    ok(len(cfgs) == 8 and cfgs[1]["layers"] == 12 and cfgs[-1]["layers"] == 6, "configs")
    ok(config_name(cfgs[0]) == "bert-base/B1/L128/bigbird/N1", "config_name")
    ok(len(build_configs(["bert-base", "t5-small"], [(1, 128)], ["bigbird"], [1],
                         r"^t5-.*/N1$")) == 1, "filter")
    ok(len(build_configs(["bert-small"], [(1, 128)], ["bigbird"], [4, "full"])) == 1,
       "4 and full are one configuration for bert-small")
    ok(plan_for("p/{model}_{batch}x{seq}_{mask}_{layers}.json", cfgs[0]) ==
       "p/bert-base_1x128_bigbird_1.json" and plan_for("", cfgs[0]) is None and
       plan_for("a.json", cfgs[0]) == "a.json", "plan_for")
    raises(lambda: plan_for("{heads}.json", cfgs[0]), UsageError, "heads", "bad placeholder")

    # JSON from a tool's stdout
    ok(cc.parse_json_output('{"a": 1}') == {"a": 1}, "plain JSON")
    ok(cc.parse_json_output('warming up {x}\n{"a": {"b": 2}}\n') == {"a": {"b": 2}},
       "JSON after a line")
    raises(lambda: cc.parse_json_output("no json", "w"), ValueError, "w: expected", "no JSON")
    raises(lambda: cc.parse_json_output("", "w"), ValueError, "empty", "empty output")
    raises(lambda: cc.parse_json_output("[1, 2]", "w"), ValueError, "object", "a list")
    ok(cc.error_text(ValueError("first\nsecond")) == "ValueError: first", "error_text")
    ok(abs(cc.geomean([2, 8, None, 0]) - 4.0) < 1e-12 and cc.geomean([]) is None, "geomean")

    # ours' JSON
    good = parse_ours('{"total_us": 12.5, "layer_us": [6, 6.5], "segments": [], '
                      '"scheme": {"code": "01", "hex": "2:1"}}')
    ok(good["total_us"] == 12.5, "parse_ours")
    for bad, text in (('{"total_us": 0}', "total_us"), ('{"total_us": "5"}', "total_us"),
                      ('{"total_us": true}', "total_us"), ('{"layer_us": 3}', "total_us"),
                      ('{"total_us": 5, "layer_us": [1, -1]}', "layer_us"),
                      ('{"total_us": 5, "segments": {}}', "segments"),
                      ('{"total_us": 5, "scheme": "01"}', "scheme")):
        raises(lambda b=bad: parse_ours(b), ValueError, text, f"parse_ours({bad})")

    with tempfile.TemporaryDirectory(prefix="model_compare_selftest_") as tmp:
        fake = os.path.join(tmp, "stof")
        with open(fake, "w") as f:
            f.write(FAKE_STOF.replace("/usr/bin/env python3", sys.executable, 1))
        os.chmod(fake, 0o755)
        cfg = {"model": "bert-base", "batch": 2, "seq": 128, "mask": "bigbird", "layers": 3}
        r = run_ours(fake, cfg)
        ok(r["us"] == 600.0 and r["layer_us"] == [200.0] * 3 and r["scheme"]["hex"] == "14:20e3"
           and r["timing_method"] == "stof run: cuda events" and "error" not in r, "run_ours")
        ok(r["command"].endswith("run --model bert-base --batch 2 --seq 128 --mask bigbird "
                                 "--layers 3 --json"), "ours command")
        plan = os.path.join(tmp, "plan.json")
        open(plan, "w").close()
        r = run_ours(fake, cfg, plan, "--tune 0")
        ok(r["ours"].get("plan") == plan and r["command"].endswith("--plan " + plan +
                                                                    " --tune 0"), "plan passed")
        r = run_ours(fake, cfg, os.path.join(tmp, "none.json"))
        ok(r["us"] is None and "no such file" in r["error"], "missing plan")
        for mask, text in (("fail", "unknown 'fail'"), ("badjson", "expected a JSON object"),
                           ("zero", "total_us"), ("slow", "no answer within 1")):
            r = run_ours(fake, dict(cfg, mask=mask), timeout=1)
            ok(r["us"] is None and text in r["error"], f"ours failure {mask}: {r.get('error')}")
        raises(lambda: cc.run_stof(fake, ["graph"]), RuntimeError,
               "stof graph: exit 106: The following argument was not expected: --x", "CLI11")
        r = run_ours(os.path.join(tmp, "nothing"), cfg)
        ok("no such file" in r["error"], "missing binary")

        # the whole --only-ours path, end to end, through main()
        out, md = os.path.join(tmp, "r.json"), os.path.join(tmp, "r.md")
        rc = quiet_main(["--stof", fake, "--only-ours", "--models", "bert-base,t5-small",
                   "--shapes", "1x128,2x256", "--masks", "bigbird,fail", "--layers", "1,full",
                   "--out", out, "--md", md])
        d = json.load(open(out))
        ok(rc == 0 and len(d["rows"]) == 16 and len(d["configs"]) == 16, "main rows")
        ok(d["rows"][0]["us"] == 100.0 and d["rows"][1]["error"].startswith("stof run: exit 1")
           and d["environment"]["stof_version"] == "stof fake 0.0", "main row values")
        ok(d["masks"]["bigbird/L128"]["hash"] == "fake" and "out" not in d["masks"]["bigbird/L128"],
           "mask info recorded")
        ok(d["rows"][0]["mask_hash_match"] is True and d["rows"][4]["batch"] == 2 and
           d["rows"][4]["mask_hash_match"] is False, "mask hash compared")
        ok(d["summary"]["failures"]["ours"][0].startswith("bert-base/B1/L128/fail/N1"),
           "failures listed")
        ok(open(md).read() == d["markdown"] and "| bert-base | 1 x 128 | bigbird | 1 | 100.0 |"
           in d["markdown"], "markdown written")
        ok(quiet_main(["--stof", fake, "--only-ours", "--shapes", "1y1"]) == 2, "usage error -> 2")
        ok(quiet_main(["--stof", fake, "--only-ours", "--filter", "nomatch"]) == 2, "empty filter")
        if torch is None:
            ok(quiet_main(["--stof", fake]) == 2, "PyTorch variants without torch -> 2")
        rc = quiet_main(["--stof", fake, "--only-ours", "--models", "bert-base", "--shapes",
                   "1x128,2x128", "--masks", "slow", "--ours-timeout", "1.5", "--time-budget",
                   "1", "--out", out])
        d = json.load(open(out))
        ok(rc == 0 and "no answer" in d["rows"][0]["error"] and
           d["rows"][1].get("not_run") == "time budget", "time budget")

    # ratios, summary, table, markdown from synthetic rows
    def row(model, b, variant, us, **kw):
        r = base_row({"model": model, "batch": b, "seq": 512, "mask": "bigbird", "layers": 1},
                     variant)
        r.update(us=us, timing_method="cuda_graph" if us else None)
        r.update(kw)
        return r
    peers = ["eager", "compile_sdpa", "compile_flex128"]
    rows = [row("bert-base", 8, "ours", 100.0),
            row("bert-base", 8, "eager", 400.0, events_us=500.0),
            row("bert-base", 8, "compile_sdpa", 200.0),
            row("bert-base", 8, "compile_flex128", None, error="RuntimeError: boom"),
            row("t5-small", 1, "ours", 50.0),
            row("t5-small", 1, "eager", 100.0),
            row("t5-small", 1, "compile_sdpa", 25.0, timing_method="events"),
            row("t5-small", 1, "compile_flex128", 40.0),
            row("gpt2-small", 1, "ours", None, error="stof run: exit 1: no"),
            row("gpt2-small", 1, "eager", 10.0)]
    cs = config_results(rows, peers)
    ok(len(cs) == 3 and cs[0]["speedup_over"] == {"eager": 4.0, "compile_sdpa": 2.0}, "ratios")
    ok(cs[0]["speedup_over_events"] == {"eager": 5.0} and cs[0]["best_peer"] == "compile_sdpa"
       and cs[0]["speedup_over_best_peer"] == 2.0, "best peer")
    ok(cs[1]["speedup_over_best_peer"] == 0.5 and cs[2]["speedup_over"] == {} and
       "speedup_over_best_peer" not in cs[2] and cs[2]["best_peer"] == "eager", "no ours")
    s = summarize(cs, peers)
    ok(abs(s["geomean_speedup_over"]["eager"]["geomean"] - math.sqrt(8)) < 1e-12 and
       s["geomean_speedup_over"]["compile_sdpa"]["min"] == 0.5 and
       s["geomean_speedup_over"]["compile_flex128"]["configs"] == 1, "geomeans")
    ok(abs(s["geomean_speedup_over_best_peer"] - 1.0) < 1e-12 and
       s["configs_slower_than_best_peer"] == ["t5-small/B1/L512/bigbird/N1"] and
       s["worst_config"]["speedup_over_best_peer"] == 0.5, "best-peer summary")
    ok(list(s["failures"]) == ["compile_flex128", "ours"] and s["configs_with_ours"] == 2,
       "failures")
    table = format_table(cs, peers, s)
    lines = table.splitlines()
    ok(len(lines) == 6 and "fail" in lines[2] and lines[-1].startswith("geomean") and
       "2.83" in lines[-1] and "1.00" in lines[-1], "table:\n" + table)
    env = {"device": "NVIDIA H100", "date": "2026-11-22T00:00:00+00:00", "torch": "2.11",
           "command_line": "python3 model_compare.py"}
    md = format_markdown(env, cs, peers, s)
    ok("| bert-base | 8 x 512 | bigbird | 1 | 100.0 | 400.0 (4.00x) | 200.0 (2.00x) | failed "
       "| compile_sdpa | **2.00x** |" in md, "markdown row:\n" + md)
    ok("| gpt2-small | 1 x 512 | bigbird | 1 | failed | 10.0 | - | - | eager | - |" in md and
       "eager 2.83x (2)" in md and "`bert-base/B8/L512/bigbird/N1: RuntimeError: boom`" in md,
       "markdown failures:\n" + md)
    ok("| 25.0 † (0.50x) |" in md and "†: timed with CUDA events" in md, "events mark")

    # our graphs (needs the stof binary)
    if os.path.exists(args.stof):
        expect = {  # pre_norm, norm, all biases, scaled, causal, activation, ops
            "bert-small": (False, "layernorm", True, True, False, "gelu", 14),
            "bert-base": (False, "layernorm", True, True, False, "gelu", 14),
            "bert-large": (False, "layernorm", True, True, False, "gelu", 14),
            "gpt2-small": (True, "layernorm", True, True, True, "gelu", 14),
            "gpt2-medium": (True, "layernorm", True, True, True, "gelu", 14),
            "t5-small": (True, "rmsnorm", False, False, False, "relu", 13),
            "t5-base": (True, "rmsnorm", False, False, False, "relu", 13)}
        docs = {}
        for model, e in expect.items():
            docs[model] = cc.parse_json_output(cc.run_stof(
                args.stof, ["graph", "--model", model, "--batch", 2, "--seq", 128, "--json"]))
            spec = parse_layer_graph(docs[model], model)
            got = (spec["pre_norm"], spec["norm"], all(spec["bias"].values()), spec["scaled"],
                   spec["causal"], spec["activation"], len(spec["op_kinds"]))
            ok(got == e and (any(spec["bias"].values()) == e[2]), f"{model}: {got} != {e}")
            ok(spec["scale"] == (1 / math.sqrt(spec["head_dim"]) if e[3] else 1.0), "scale")
            ok(spec["layer"] == ("decoder" if model.startswith("gpt2") else "encoder"), "layer")
            describe_spec(spec)
        ok(parse_layer_graph(docs["t5-small"])["hidden"] == 512 and
           parse_layer_graph(docs["bert-large"])["ffn"] == 4096, "sizes")
        bad = json.loads(json.dumps(docs["bert-base"]))
        bad["ops"][12]["inputs"][1] = {"source": "op", "op": 8}  # add_ffn reading add_attn
        raises(lambda: parse_layer_graph(bad, "bad"), ValueError, "#13 (add_ffn)", "residual")
        bad = json.loads(json.dumps(docs["gpt2-small"]))
        del bad["ops"][11]                                      # no GELU
        raises(lambda: parse_layer_graph(bad, "bad"), ValueError, "not a layer", "missing op")
        bad = json.loads(json.dumps(docs["bert-base"]))
        bad["ops"][0]["output"]["dims"][-1] = 100
        raises(lambda: parse_layer_graph(bad, "bad"), ValueError, "width 2304", "qkv width")
        bad = json.loads(json.dumps(docs["bert-base"]))
        bad["heads"] = 0
        raises(lambda: parse_layer_graph(bad, "bad"), ValueError, "heads", "bad heads")
        dec = cc.parse_json_output(cc.run_stof(args.stof, [
            "graph", "--model", "t5-small", "--batch", 1, "--seq", 64, "--layer", "decoder",
            "--json"]))
        raises(lambda: parse_layer_graph(dec, "t5 decoder"), ValueError, "not a layer",
               "t5 decoder refused")
        sep = cc.parse_json_output(cc.run_stof(args.stof, [
            "graph", "--model", "bert-base", "--batch", 1, "--seq", 64, "--separate-bias",
            "--json"]))
        raises(lambda: parse_layer_graph(sep, "sep"), ValueError, "not a layer",
               "separate biases refused")
        # masks: the .npy `stof mask` writes is bool [L, L] (header read without numpy)
        with tempfile.TemporaryDirectory(prefix="model_compare_masks_") as tmp:
            m = cc.Masks(args.stof, tmp)
            info = m.info("bigbird", 256)
            ok(info["nnz"] == 15136 or info["nnz"] > 0, "mask info")
            raw = open(os.path.join(tmp, "bigbird_256.npy"), "rb").read()
            ok(raw[:6] == b"\x93NUMPY", "npy magic")
            hlen = int.from_bytes(raw[8:10], "little")
            header = raw[10:10 + hlen].decode()
            ok("'descr': '|b1'" in header and "(256, 256)" in header and
               len(raw) - 10 - hlen == 256 * 256, f"npy header {header}")
            raises(lambda: m.info("nosuch", 64), RuntimeError, "unknown 'nosuch'", "bad mask")
        graph_note = "stof graph and stof mask checked with " + args.stof
    else:
        graph_note = f"SKIPPED stof graph/mask checks: {args.stof} does not exist (--stof)"
    print(f"model_compare self-test: {checks[0]} checks passed; {graph_note}; torch "
          f"{'present' if torch is not None else 'absent (PyTorch side only py_compiled)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
