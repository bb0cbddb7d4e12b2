#!/usr/bin/env python3
"""Hugging Face models on attn_implementation "stof" against "flex_attention" and "sdpa", and
the cost of the Python bridge (issue 18, "Benchmarks"). For whoever benchmarks the Python
package on a GPU machine: the JSON goes to docs/bench/, the Markdown to docs/benchmarks.md.

Part 1, bridge (first, while the GPU is empty): `stof bench mha --json` (C++: CUDA-event pairs
around each launch, rotating input sets) against stof.attention from Python with the same mask
(hashes compared), B, H 12, L, d 64, kernel choice (the CLI's, forced) and number of input sets.
Python: event pairs around each call (the CLI's method), one event pair around --bridge-runs
calls back to back (GPU time per call), host wall time per call; the same for the full path
(python_full: stof.attention with the launches bound per signature turned off, as every eager
call ran before them), for the Python bound launch with the compiled module set aside
(python_bound; "python" takes the compiled module where it is built: bridge_compiled says
whether it was) and for the bare C API call through ctypes (PreparedPlan.run: no custom op).
The four alternate, two rounds, best round kept. overhead = Python - C++, us per call.

Part 2, models: BertModel (BertConfig defaults: hidden 768, 12 heads) and GPT2Model (GPT2Config
defaults), --layers N (default 12), from configs (no downloads), seeded random init, fp16, eval,
position tables raised to cover the longest L. Per (model, batch x seq, mask) the backends share
weights (one state_dict) and input ids and compute one function: "stof" gets the pattern by
stof.hf.use_mask (ANDed with the model's own mask), "flex_attention" the effective mask as a
BlockMask (128), "sdpa" as a dense bool [B, 1, L, L] (effective_mask: why GPT-2's is ANDed with
causal). A backend transformers refuses (GPT-2: no flex_attention in transformers 5) is skipped
with its reason. Timing: the whole forward under torch.no_grad(); the first call (layout upload,
Flex compilation) is setup_s; then event pairs around each of --runs calls after --warmup
(events_us, median) and CUDA-graph replays (graph_us, median; graph_error when capture fails).
Ratios use a method both sides have (graphs if both captured). peak_bytes: max_memory_allocated
over one steady forward minus what was allocated before it (weights excluded); stof's layouts
are allocated by the C API outside torch's allocator: free_drop_bytes (free device memory before
the first call minus after it) counts them. Checks, recorded not asserted: max |stof - sdpa| and
|stof - flex| of last_hidden_state, NaN per backend.

Output: progress lines; --out JSON (environment, transformers version, command line, per-case
rows, skipped ones) rewritten after every case; --md a Markdown section. --time-budget: no case
or backend starts past it (recorded as skipped). --dry-run lists the cases without torch.

GPU machine (python/README.md):
  STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python \
    python3 python/bench/hf_compare.py --out /tmp/res/hf.json --md /tmp/res/hf.md
"""

import argparse
import copy
import os
import re
import shlex
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "tests", "compare"))

MODELS = ("bert-base", "gpt2")
IMPLS = ("stof", "flex_attention", "sdpa")
HEADS, HEAD_DIM = 12, 64  # BERT-base's and GPT-2's attention: the bridge's shape


# ---- arguments and cases (no torch) ----------------------------------------------------------

def split_list(text, known, what):
    items = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in items if known and s not in known]
    if bad or not items:
        raise ValueError(f"{what}: expected a comma list of {', '.join(known)}, got '{text}'")
    return items


def parse_shapes(text):
    out = []
    for item in text.split(","):
        m = re.fullmatch(r"\s*(\d+)[xX](\d+)\s*", item)
        if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
            raise ValueError(f"--shapes: expected BATCHxSEQ (1x128), got '{item}'")
        out.append((int(m.group(1)), int(m.group(2))))
    return out


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--shapes", default="1x128,8x512,16x2048", help="BATCHxSEQ list")
    ap.add_argument("--masks", default="bigbird,sliding_window", help="stof mask patterns")
    ap.add_argument("--impls", default=",".join(IMPLS), help="attn_implementation list")
    ap.add_argument("--layers", type=int, default=12, help="layers of each model")
    ap.add_argument("--parts", default="bridge,models", help="bridge, models or both")
    ap.add_argument("--runs", type=int, default=20, help="timed forwards per backend and mode")
    ap.add_argument("--warmup", type=int, default=3, help="untimed forwards first (>= 1)")
    ap.add_argument("--bridge-runs", type=int, default=200, help="timed calls (>= 50)")
    ap.add_argument("--no-graph", action="store_true", help="CUDA events only")
    ap.add_argument("--seed", type=int, default=0, help="weights and inputs")
    ap.add_argument("--time-budget", type=float, default=300,
                    help="seconds after which no case or backend starts (0 = no limit)")
    ap.add_argument("--out", default="", help="results JSON")
    ap.add_argument("--md", default="", help="Markdown section")
    ap.add_argument("--dry-run", action="store_true", help="list the cases and exit (no torch)")
    ap.add_argument("--verbose", action="store_true", help="tracebacks of failures")
    a = ap.parse_args(argv)
    try:
        a.models = split_list(a.models, MODELS, "--models")
        a.impls = split_list(a.impls, IMPLS, "--impls")
        a.parts = split_list(a.parts, ("bridge", "models"), "--parts")
        a.masks = split_list(a.masks, (), "--masks")
        a.shapes = parse_shapes(a.shapes)
    except ValueError as e:
        ap.error(str(e))
    if a.layers < 1 or a.runs < 3 or a.warmup < 1 or a.bridge_runs < 50:
        ap.error("expected --layers >= 1, --runs >= 3, --warmup >= 1, --bridge-runs >= 50")
    return a


def cases(a):
    out = []
    if "bridge" in a.parts:
        out += [{"part": "bridge", "batch": B, "seq": L, "mask": p}
                for B, L in a.shapes for p in a.masks]
    if "models" in a.parts:  # shapes outermost: a budget cut drops the largest ones
        out += [{"part": "models", "model": m, "batch": B, "seq": L, "mask": p,
                 "layers": a.layers} for B, L in a.shapes for m in a.models for p in a.masks]
    return out


def name(c):
    head = "bridge" if c["part"] == "bridge" else f"{c['model']}/N{c['layers']}"
    return f"{head}/{c['batch']}x{c['seq']}/{c['mask']}"


def cli_argv(a, c):
    return ["bench", "mha", "--pattern", c["mask"], "--seq", c["seq"], "--batch", c["batch"],
            "--heads", HEADS, "--dim", HEAD_DIM, "--runs", a.bridge_runs, "--warmup", 10,
            "--no-counters", "--json"]


# ---- part 1: the bridge ----------------------------------------------------------------------

def time_back_to_back(fn, sets, n):
    """One event pair around n calls: GPU us per call; host us to issue one call."""
    fn(sets[0])
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.perf_counter()
    a.record()
    for i in range(n):
        fn(sets[i % len(sets)])
    b.record()
    host = (time.perf_counter() - t0) / n * 1e6
    torch.cuda.synchronize()
    return {"gpu_us_per_call": a.elapsed_time(b) * 1e3 / n, "host_us_per_call": host}


def time_host_windows(fn, sets, window=256, windows=20):
    """Host us to issue one call, best of `windows` windows of `window` back-to-back calls,
    each after a synchronize (outside the timed region): the GPU's queue never fills, so the
    host never waits on the GPU, whatever the kernel's length (as host_loop.c times the C API
    from C, docs/bench/2026-11-28-extension-h100/)."""
    best = float("inf")
    for _ in range(windows):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for i in range(window):
            fn(sets[i % len(sets)])
        best = min(best, (time.perf_counter() - t0) / window * 1e6)
    torch.cuda.synchronize()
    return best


def run_bridge(a, c, cli):
    import stof
    from stof import _capi
    B, L = c["batch"], c["seq"]
    argv = cli_argv(a, c)
    row = dict(c, cli_command=shlex.join([cli] + [str(x) for x in argv]))
    doc = cc.parse_json_output(cc.run_stof(cli, argv, timeout=300), "stof bench mha")
    ch, lat = doc["choice"], doc["latency"]
    choice = (ch["kernel"], ch["block_m"], ch["block_n"], ch["num_warps"])
    if choice[0] != "block_wise":  # tile and warps are the block-wise kernel's parameters
        choice = (choice[0], 0, 0, 0)
    row["cli"] = {k: lat.get(k) for k in ("median_us", "min_us", "wall_us_per_run", "runs")}
    row["choice"], row["rotation_sets"] = list(choice), doc["rotation"]["sets"]
    mask = stof.Mask.generate(c["mask"], L)
    row["mask_hash"] = {"cli": doc["mask"]["hash"], "python": mask.hash_hex()}
    if row["mask_hash"]["cli"] != row["mask_hash"]["python"]:
        raise RuntimeError(f"stof bench mha and stof.Mask.generate made different masks "
                           f"({row['mask_hash']}): not comparing")
    g = torch.Generator(device="cuda").manual_seed(a.seed + 1)
    shape = (B, HEADS, L, HEAD_DIM)
    sets = [[torch.randn(shape, generator=g, device="cuda", dtype=torch.float16)
             for _ in range(4)] for _ in range(row["rotation_sets"])]

    def op(s):  # what a user calls; allocates its output
        return stof.attention(s[0], s[1], s[2], mask=mask, kernel=choice[0], _block=choice[1:])
    plan = _capi.PreparedPlan(mask.bytes_u8(), B, HEADS, L, HEAD_DIM,
                              torch.cuda.current_device(), *choice)
    row["python_choice"] = [plan.kernel, plan.block_m, plan.block_n, plan.num_warps]
    row["choice_match"] = row["python_choice"][0] == ch["kernel"] and (
        choice[0] != "block_wise" or row["python_choice"] == list(choice))
    stream = torch.cuda.current_stream().cuda_stream

    def raw(s):  # the C API alone, into the preallocated output s[3]
        plan.run(s[0].data_ptr(), s[1].data_ptr(), s[2].data_ptr(), s[3].data_ptr(), stream)
    from stof import _eager

    def full(s):  # stof.attention without the bound launches (every call checks and looks up)
        _eager.enabled = False
        try:
            return op(s)
        finally:
            _eager.enabled = True

    def bound(s):  # the Python bound launch: the compiled module set aside for this call
        compiled, _eager.call_compiled = _eager.call_compiled, None
        try:
            return op(s)
        finally:
            _eager.call_compiled = compiled
    op(sets[0])  # binds the launch (and remembers it in the compiled module, if any)
    row["bridge_compiled"] = _eager.call_compiled is not None
    variants = (("python", op), ("python_bound", bound), ("python_full", full), ("ctypes", raw))
    for key, fn in variants * 2:
        ev = cc.time_method(fn, sets, 10, a.bridge_runs)
        got = {"events_median_us": ev["median_us"], "wall_us_per_call": ev["wall_us_per_call"],
               **time_back_to_back(fn, sets, a.bridge_runs),
               "host_window_us_per_call": time_host_windows(fn, sets)}
        if key not in row or got["host_us_per_call"] < row[key]["host_us_per_call"]:
            row[key] = got
    ref = row["cli"]["median_us"]
    row["overhead_us"] = {"events": row["python"]["events_median_us"] - ref,
                          "back_to_back": row["python"]["gpu_us_per_call"] - ref,
                          "host_vs_cli_wall": row["python"]["wall_us_per_call"]
                          - row["cli"]["wall_us_per_run"],
                          "ctypes_events": row["ctypes"]["events_median_us"] - ref,
                          "full_events": row["python_full"]["events_median_us"] - ref}
    plan.close()
    stof.clear_cache()
    return row


# ---- part 2: Hugging Face models -------------------------------------------------------------

def build_models(a, model, max_L, vocab_box):
    """{impl: model on the GPU} with one set of weights, and {impl: reason} for refusals."""
    from transformers import BertConfig, BertModel, GPT2Config, GPT2Model
    if model == "bert-base":
        cfg, cls = BertConfig(num_hidden_layers=a.layers,
                              max_position_embeddings=max(512, max_L)), BertModel
    else:
        cfg, cls = GPT2Config(n_layer=a.layers, n_positions=max(1024, max_L)), GPT2Model
    vocab_box[model] = cfg.vocab_size
    built, refused, state = {}, {}, None
    for impl in sorted(a.impls, key=lambda i: i != "sdpa"):  # sdpa's weights first
        torch.manual_seed(a.seed)
        try:
            m = cls._from_config(copy.deepcopy(cfg), attn_implementation=impl)
        except ValueError as e:  # GPT2Model, transformers 5: no flex_attention
            refused[impl] = f"transformers refuses attn_implementation={impl!r}: " \
                            f"{cc.error_text(e)}"
            continue
        if state is None:
            state = m.state_dict()
        else:
            m.load_state_dict(state)
        built[impl] = m.to("cuda", torch.float16).eval()
    return built, refused


def effective_mask(model, pattern):
    """The attention function all three backends must compute. BERT: the pattern. GPT-2:
    the pattern AND causal. transformers 5's create_causal_mask returns a 4D attention_mask
    (tensor or BlockMask) as-is ("already prepared, or custom": _preprocess_mask_arguments
    exits early), and sdpa_attention_forward sets is_causal only when no mask is given, so a
    dense pattern passed to "sdpa" would REPLACE the causal mask. "stof" gets no mask argument:
    create_causal_mask makes the causal one (or None + is_causal) and stof.hf ANDs it with
    use_mask's pattern. So sdpa (and flex) get pattern & tril, computed here."""
    import numpy as np
    p = pattern.numpy()
    if model == "gpt2":
        p = p & np.tril(np.ones(p.shape, dtype=bool))
    return stof.Mask(p, source=f"{pattern.source} & causal" if model == "gpt2" else "pattern")


def time_forward(a, fwd, ids):
    row = {}
    base = torch.cuda.memory_allocated()
    free0 = cc.free_memory()
    t0 = time.perf_counter()
    fwd(ids)
    torch.cuda.synchronize()
    row["setup_s"] = time.perf_counter() - t0
    row["free_drop_bytes"] = free0 - torch.cuda.mem_get_info()[0]
    torch.cuda.reset_peak_memory_stats()
    out = fwd(ids)  # a new tensor per eager call: later calls do not overwrite it
    torch.cuda.synchronize()
    row["peak_allocated_bytes"] = torch.cuda.max_memory_allocated()
    row["peak_bytes"] = row["peak_allocated_bytes"] - base
    ev = cc.time_method(fwd, [ids], a.warmup, a.runs)
    row["events_us"], row["events_wall_us"] = ev["median_us"], ev["wall_us_per_call"]
    if not a.no_graph:
        try:
            row["graph_us"] = cc.time_graph(fwd, [ids], a.warmup, a.runs)["median_us"]
        except Exception as e:  # e.g. a host sync inside the forward
            row["graph_error"] = cc.error_text(e)
            try:
                torch.cuda.synchronize()
            except Exception:
                pass
    row["timing_method"] = "cuda_graph" if "graph_us" in row else "events"
    row["us"] = row.get("graph_us", row["events_us"])
    return row, out


def run_model_case(a, c, built, refused, vocab, deadline, skipped):
    B, L, model = c["batch"], c["seq"], c["model"]
    pattern = stof.Mask.generate(c["mask"], L)
    eff = effective_mask(model, pattern)
    g = torch.Generator().manual_seed(a.seed + 1)
    ids = torch.randint(0, vocab, (B, L), generator=g).cuda()
    rec = dict(c, density=pattern.density, effective_density=eff.density, backends={})
    outs = {}
    for impl in a.impls:
        if impl in refused:
            rec["backends"][impl] = {"skipped" if impl == "flex_attention" else "error":
                                     refused[impl]}
            continue
        if deadline and time.time() > deadline:
            rec["backends"][impl] = {"skipped": "time budget"}
            skipped.append(f"{name(c)}/{impl}: time budget")
            continue
        m = built[impl]
        kw = {}
        if impl == "stof":
            stof.hf.use_mask(m, pattern)
        elif impl == "flex_attention":
            kw["attention_mask"] = eff.to_block_mask(128)
        else:
            kw["attention_mask"] = eff.to_tensor("cuda")[None, None].expand(B, 1, L, L)

        def fwd(x, m=m, kw=kw):
            return m(input_ids=x, **kw).last_hidden_state
        try:
            with torch.no_grad():
                row, outs[impl] = time_forward(a, fwd, ids)
            row["output_nan"] = bool(outs[impl].isnan().any())
        except Exception as e:
            row = {"error": cc.error_text(e)}
            if a.verbose:
                traceback.print_exc()
        rec["backends"][impl] = row
        cc.log(f"  {name(c)} {impl}: " + (f"{row['us']:.1f} us ({row['timing_method']})"
                                         if "us" in row else row["error"]))
    for peer in ("sdpa", "flex_attention"):
        if "stof" in outs and peer in outs:
            rec[f"max_abs_stof_vs_{peer}"] = float((outs["stof"].float() -
                                                    outs[peer].float()).abs().max())
    stof.clear_cache()
    return rec


def ratio(rec, peer):
    """peer us / stof us (> 1: stof faster) on the method both have; (ratio, method)."""
    s, p = rec["backends"].get("stof", {}), rec["backends"].get(peer, {})
    if "events_us" not in s or "events_us" not in p:
        return None, None
    key = "graph_us" if "graph_us" in s and "graph_us" in p else "events_us"
    return p[key] / s[key], key[:-3]


# ---- output ----------------------------------------------------------------------------------

def markdown(doc):
    env = doc["environment"]
    out = [f"### Hugging Face backends and the Python bridge ({env.get('device')}, "
           f"{env['date'][:10]})", "",
           f"torch {env.get('torch')}, transformers {env.get('transformers')}, CUDA "
           f"{env.get('cuda')}. Command: `{env['command_line']}`.", ""]
    if doc["bridge"]:
        out += ["Bridge, us per call (H 12, d 64). C++ = `stof bench mha` event pairs (the "
                "kernel); Python = `stof.attention` (* = through the compiled module), Python "
                "bound = its Python bound launch (compiled module set aside), full = every "
                "check, ctypes = the bare C API call. GPU per call = one event pair around "
                "back-to-back calls; host per call = best window of 256 calls after a "
                "synchronize (the host never waits on the GPU); events overhead = Python's "
                "event-pair median - C++'s.", "",
                "| batch x seq | mask | kernel | C++ (kernel) | Python, GPU per call back to "
                "back | host per call: Python / Python bound / full / ctypes | events "
                "overhead |",
                "|---|---|---|---:|---:|---|---:|"]
        for r in doc["bridge"]:
            if "error" in r:
                out.append(f"| {r['batch']} x {r['seq']} | {r['mask']} | failed |" + " |" * 4)
                continue
            star = "*" if r.get("bridge_compiled") else ""
            host = " / ".join(f"{r[k].get('host_window_us_per_call', float('nan')):.1f}"
                              for k in ("python", "python_bound", "python_full", "ctypes")
                              if k in r)
            out.append(f"| {r['batch']} x {r['seq']} | {r['mask']} | "
                       f"{r['choice'][0]} {'x'.join(str(x) for x in r['choice'][1:])} | "
                       f"{r['cli']['median_us']:.1f} | {r['python']['gpu_us_per_call']:.1f} | "
                       f"{host.replace(' / ', star + ' / ', 1)} | "
                       f"{r['overhead_us']['events']:+.1f} |")
        out.append("")
    if doc["models"]:
        impls = doc["args"]["impls"]
        out += ["Whole forward, ms (median; † = CUDA events, else CUDA-graph replays), peak "
                "MiB over the weights; ratio = peer / stof on a common method (> 1: stof "
                "faster); err = max |stof - peer| of last_hidden_state.", "",
                "| model | batch x seq | mask | " + " | ".join(impls) +
                " | stof vs sdpa | stof vs flex | peak MiB | err sdpa / flex |",
                "|---|---|---|" + "---:|" * len(impls) + "---:|---:|---|---|"]
        for r in doc["models"]:
            cells = []
            for i in impls:
                b = r["backends"].get(i, {})
                cells.append(f"{b['us'] / 1e3:.2f}" + ("" if b["timing_method"] == "cuda_graph"
                                                 else " †") if "us" in b else
                             ("skipped" if "skipped" in b else "failed"))
            rs = [ratio(r, p) for p in ("sdpa", "flex_attention")]
            peak = " / ".join(cc.fmt(r["backends"].get(i, {}).get("peak_bytes", 0) / 2**20
                                     or None, "{:.0f}") for i in impls)
            errs = " / ".join(cc.fmt(r.get(f"max_abs_stof_vs_{p}"), "{:.1e}")
                              for p in ("sdpa", "flex_attention"))
            out.append(f"| {r['model']} | {r['batch']} x {r['seq']} | {r['mask']} | " +
                       " | ".join(cells) + " | " + " | ".join(
                           f"{x:.2f}x ({m})" if x else "-" for x, m in rs) +
                       f" | {peak} | {errs} |")
    notes = [f"- {x}" for x in doc["skipped"]] + [
        f"- {name(r)}: {r['error']}" for r in doc["bridge"] + doc["models"] if "error" in r] + [
        f"- {name(r)}/{i}: {b.get('error') or b.get('graph_error')}"
        for r in doc["models"] for i, b in r["backends"].items()
        if b.get("error") or b.get("graph_error")]
    return "\n".join(out + (["", "Skipped, failed, not captured:"] + notes if notes else [])) + "\n"


def main(argv=None):
    global cc, torch, stof
    a = parse_args(argv)
    todo = cases(a)
    if a.dry_run:
        for c in todo:
            extra = f" ({', '.join(a.impls)})" if c["part"] == "models" else \
                " stof " + " ".join(str(x) for x in cli_argv(a, c))
            print(name(c) + extra)
        print(f"{len(todo)} cases; time budget {a.time_budget:g} s")
        return 0
    import compare_common as cc
    torch = cc.torch
    if torch is None or not torch.cuda.is_available():
        print("hf_compare: needs torch with a CUDA device (--dry-run lists the cases)",
              file=sys.stderr)
        return 2
    import stof
    import stof.hf
    import transformers
    from stof import _cli
    stof.hf.register()
    cc.raise_dynamo_cache_limits()  # Flex recompiles per shape and mask
    cli = _cli.cli_path()
    env = cc.environment(argv)
    env.update(transformers=transformers.__version__, stof_capi=stof.library_path(), stof_cli=cli)
    doc = {"tool": "python/bench/hf_compare.py", "environment": env,
           "args": {k: v for k, v in vars(a).items()}, "bridge": [], "models": [], "skipped": []}
    deadline = time.time() + a.time_budget if a.time_budget else 0
    built = {}
    max_L = max(L for _, L in a.shapes)
    vocab = {}
    for c in todo:
        if deadline and time.time() > deadline:
            doc["skipped"].append(f"{name(c)}: time budget")
            continue
        cc.log(f"hf_compare: {name(c)}")
        try:
            if c["part"] == "bridge":
                doc["bridge"].append(run_bridge(a, c, cli))
            else:
                if c["model"] not in built:
                    built[c["model"]] = build_models(a, c["model"], max_L, vocab)
                doc["models"].append(run_model_case(a, c, *built[c["model"]],
                                                    vocab[c["model"]], deadline, doc["skipped"]))
        except Exception as e:
            if a.verbose:
                traceback.print_exc()
            cc.log(f"  failed: {cc.error_text(e)}")
            (doc["bridge"] if c["part"] == "bridge" else doc["models"]).append(
                dict(c, error=cc.error_text(e), backends={}))
        cc.write_json(a.out, doc)
    md = markdown(doc)
    print(md)
    if a.md:
        with open(a.md, "w") as f:
            f.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
