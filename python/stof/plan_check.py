"""Validation of plan JSON (docs/plan-schema.md, engine/plan/plan_read.cpp) in Python: the schema's
types, ranges, required and unknown keys, duplicate keys, integers written as integers, seeds,
and the cross-field rules the loader checks (seq_len agreement, inline mask size, hash and
density, model heads / head_dim, bert/gpt2 parts, segments matching the fusion code).

Used by plan.py (load_plan). The first problem found is raised as a PlanError
"<file>: <json path>: <problem>, got <value>", in the engine's order (schema_version first,
then the sections in document order; within an object unknown keys first). The generator's own
rules on a spec mask (Resolve) and its hash are checked when the mask is regenerated
(Plan.mask; load_plan does it unless check_mask=False), as `stof plan validate` does through
PlanMaskToMask.
"""

import json
import math

from ._capi import StofError

MAX_SEED_INT = 2 ** 53 - 1
PATTERNS = ("full", "causal", "sliding_window", "dilated", "global", "random_blocks",
            "longformer", "bigbird", "document", "or", "and", "not")


class PlanError(StofError, ValueError):
    """A plan file that does not validate; the message names the file and the JSON path."""


def _got(v):
    text = json.dumps(v)
    return text if len(text) <= 200 else text[:200] + "..."


class Checker:
    def __init__(self, name):
        self.name = name

    def fail(self, path, problem, value=None, show=True):
        tail = f", got {_got(value)}" if show else ""
        raise PlanError(f"{self.name}: {path}: {problem}{tail}")

    def obj(self, v, path, keys, optional=()):
        if not isinstance(v, dict):
            self.fail(path, "expected an object", v)
        for k in v:
            if k not in keys:
                self.fail(f"{path}.{k}" if path else k,
                          f"unknown key (allowed here: {', '.join(keys)})", show=False)
        for k in keys:
            if k not in v and k not in optional:
                self.fail(f"{path}.{k}" if path else k, "missing", show=False)
        return v

    def int_(self, v, path, lo, hi):
        if isinstance(v, bool) or not isinstance(v, int):
            self.fail(path, "expected an integer", v)
        if not lo <= v <= hi:
            self.fail(path, f"expected an integer in {lo}..{hi}", v)
        return v

    def num(self, v, path, lo, hi, lo_open=False):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            self.fail(path, "expected a number", v)
        if v < lo or v > hi or (lo_open and v <= lo):
            self.fail(path, f"expected a number in {'(' if lo_open else '['}{lo}, {hi}]", v)
        return v

    def str_(self, v, path, choices=None, nonempty=True):
        if not isinstance(v, str):
            self.fail(path, "expected a string", v)
        if choices is not None and v not in choices:
            self.fail(path, f"expected one of {', '.join(choices)}", v)
        if nonempty and not v:
            self.fail(path, "expected a non-empty string", v)
        return v

    def bool_(self, v, path):
        if not isinstance(v, bool):
            self.fail(path, "expected true or false", v)
        return v

    def seed(self, v, path):
        if isinstance(v, str):
            if not v.isdigit() or (len(v) > 1 and v[0] == "0") or int(v) > 2 ** 64 - 1:
                self.fail(path, "expected a decimal string of a uint64 seed", v)
            return int(v)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            self.fail(path, "expected a seed (an integer >= 0 or a decimal string)", v)
        if v > MAX_SEED_INT:
            self.fail(path, "an integer above 2^53 - 1 may have lost its low bits; write it as a "
                      "decimal string", v)
        return v

    def arr(self, v, path):
        if not isinstance(v, list):
            self.fail(path, "expected an array", v)
        return v


def check_plan(doc, name):
    """Validates a parsed plan document (dict); raises PlanError on the first problem."""
    c = Checker(name)
    if not isinstance(doc, dict):
        c.fail("(top level)", "expected an object", doc)
    if "schema_version" not in doc:
        c.fail("schema_version", "missing", show=False)
    sv = doc["schema_version"]
    if isinstance(sv, bool) or not isinstance(sv, int):
        c.fail("schema_version", "expected an integer", sv)
    if sv != 1:
        c.fail("schema_version", f"unsupported version {sv} (this build reads 1)", show=False)
    c.obj(doc, "", ["schema_version", "created_by", "device", "workload", "model", "mask", "mha",
                    "fusion", "measurements", "tuning"], optional=("model",))
    c.str_(doc["created_by"], "created_by")
    _device(c, doc["device"])
    w = _workload(c, doc["workload"])
    if "model" in doc:
        _model(c, doc["model"], w)
    _mask(c, doc["mask"], w)
    _mha(c, doc["mha"])
    _fusion(c, doc["fusion"])
    for i, m in enumerate(c.arr(doc["measurements"], "measurements")):
        p = f"measurements[{i}]"
        c.obj(m, p, ["what", "latency_us", "measured", "dram_bytes"], optional=("dram_bytes",))
        c.str_(m["what"], f"{p}.what")
        c.num(m["latency_us"], f"{p}.latency_us", 0, 1e15)
        c.bool_(m["measured"], f"{p}.measured")
        if "dram_bytes" in m:
            c.num(m["dram_bytes"], f"{p}.dram_bytes", 0, 1e18)
    t = c.obj(doc["tuning"], "tuning", ["method", "budget_s", "time_spent_s",
                                         "candidates_measured", "seed"])
    c.str_(t["method"], "tuning.method", ("analytical", "stof", "gtco", "mcfuser", "exhaustive"))
    c.num(t["budget_s"], "tuning.budget_s", 0, 1e9)
    c.num(t["time_spent_s"], "tuning.time_spent_s", 0, 1e9)
    c.int_(t["candidates_measured"], "tuning.candidates_measured", 0, 2 ** 40)
    c.seed(t["seed"], "tuning.seed")


def _device(c, d):
    c.obj(d, "device", ["name", "sm_count", "smem_per_sm_bytes", "smem_per_block_bytes",
                        "max_warps_per_sm", "l2_bytes", "dram_bytes_per_s", "fp16_tensor_flops",
                        "cc_major", "cc_minor", "source"])
    c.str_(d["name"], "device.name")
    c.int_(d["sm_count"], "device.sm_count", 1, 100000)
    c.int_(d["smem_per_sm_bytes"], "device.smem_per_sm_bytes", 1, 2 ** 40)
    c.int_(d["smem_per_block_bytes"], "device.smem_per_block_bytes", 1, 2 ** 40)
    if d["smem_per_block_bytes"] > d["smem_per_sm_bytes"]:
        c.fail("device.smem_per_block_bytes", "must be <= device.smem_per_sm_bytes "
               f"({d['smem_per_sm_bytes']})", d["smem_per_block_bytes"])
    c.int_(d["max_warps_per_sm"], "device.max_warps_per_sm", 1, 1024)
    c.int_(d["l2_bytes"], "device.l2_bytes", 1, 2 ** 40)
    c.num(d["dram_bytes_per_s"], "device.dram_bytes_per_s", 0, 1e18, lo_open=True)
    c.num(d["fp16_tensor_flops"], "device.fp16_tensor_flops", 0, 1e20, lo_open=True)
    c.int_(d["cc_major"], "device.cc_major", 1, 99)
    c.int_(d["cc_minor"], "device.cc_minor", 0, 9)
    c.str_(d["source"], "device.source", ("built-in", "queried"))


def _workload(c, w):
    c.obj(w, "workload", ["batch", "seq_len", "heads", "head_dim", "dtype"])
    c.int_(w["batch"], "workload.batch", 1, 65536)
    c.int_(w["seq_len"], "workload.seq_len", 1, 32768)
    c.int_(w["heads"], "workload.heads", 1, 1024)
    c.int_(w["head_dim"], "workload.head_dim", 1, 256)
    c.str_(w["dtype"], "workload.dtype", ("f16", "bf16", "f32"))
    return w


def _model(c, m, w):
    c.obj(m, "model", ["name", "family", "part", "hidden", "heads", "head_dim", "ffn", "layers",
                       "separate_bias"])
    c.str_(m["name"], "model.name")
    fam = c.str_(m["family"], "model.family", ("bert", "gpt2", "t5"))
    part = c.str_(m["part"], "model.part", ("encoder", "decoder"))
    if (fam, part) in (("bert", "decoder"), ("gpt2", "encoder")):
        c.fail("model.part", f"a {fam} model's part is "
               f"{'encoder' if fam == 'bert' else 'decoder'}", part)
    c.int_(m["hidden"], "model.hidden", 1, 65536)
    if c.int_(m["heads"], "model.heads", 1, 1024) != w["heads"]:
        c.fail("model.heads", f"must equal workload.heads ({w['heads']})", m["heads"])
    if c.int_(m["head_dim"], "model.head_dim", 1, 256) != w["head_dim"]:
        c.fail("model.head_dim", f"must equal workload.head_dim ({w['head_dim']})",
               m["head_dim"])
    c.int_(m["ffn"], "model.ffn", 1, 262144)
    c.int_(m["layers"], "model.layers", 1, 1024)
    c.bool_(m["separate_bias"], "model.separate_bias")


def _spec(c, s, path, L, depth=0):
    """Types and structure of a generator spec; the L-dependent ranges are Resolve's (checked
    when the mask is regenerated)."""
    if depth > 16:
        c.fail(path, "operands nested deeper than 16 levels", show=False)
    keys = ["pattern", "seq_len", "width", "global", "dilation", "fill", "block", "seed",
            "doc_lengths", "causal", "operands"]
    c.obj(s, path, keys, optional=keys[1:] if depth else keys[2:])
    pat = c.str_(s["pattern"], f"{path}.pattern", PATTERNS)
    if "seq_len" in s and c.int_(s["seq_len"], f"{path}.seq_len", 1, 32768) != L:
        c.fail(f"{path}.seq_len", f"must equal {'mask.seq_len' if not depth else 'the parent'}"
               f"'s {L}", s["seq_len"])
    for k in ("width", "global", "block"):
        if k in s:
            c.int_(s[k], f"{path}.{k}", -1, 32768)
    if "dilation" in s:
        c.int_(s["dilation"], f"{path}.dilation", 0, 32768)
    if "fill" in s:
        f = s["fill"]
        if f != -1:
            c.num(f, f"{path}.fill", 0, 1)
    if "seed" in s:
        c.seed(s["seed"], f"{path}.seed")
    if "doc_lengths" in s:
        lengths = c.arr(s["doc_lengths"], f"{path}.doc_lengths")
        for i, n in enumerate(lengths):
            c.int_(n, f"{path}.doc_lengths[{i}]", 1, 32768)
        if lengths and pat != "document":
            c.fail(f"{path}.doc_lengths", f"only 'document' takes document lengths, "
                   f"'{pat}' got {len(lengths)}", show=False)
    if "causal" in s:
        c.bool_(s["causal"], f"{path}.causal")
    ops = s.get("operands")
    if pat in ("or", "and", "not"):
        ops = c.arr(ops if ops is not None else [], f"{path}.operands")
        need = "exactly 1" if pat == "not" else "at least 2"
        if (pat == "not" and len(ops) != 1) or (pat != "not" and len(ops) < 2):
            c.fail(f"{path}.operands", f"'{pat}' needs {need} operands", len(ops))
        for i, o in enumerate(ops):
            _spec(c, o, f"{path}.operands[{i}]", L, depth + 1)
    elif ops is not None:
        c.fail(f"{path}.operands", f"only or, and, not take operands, not '{pat}'", show=False)


def _mask(c, m, w):
    c.obj(m, "mask", ["spec", "inline", "seq_len", "hash", "density"],
          optional=("spec", "inline"))
    if ("spec" in m) == ("inline" in m):
        c.fail("mask", "expected exactly one of spec and inline", show=False)
    L = c.int_(m["seq_len"], "mask.seq_len", 1, 32768)
    if L != w["seq_len"]:
        c.fail("mask.seq_len", f"must equal workload.seq_len ({w['seq_len']})", L)
    h = c.str_(m["hash"], "mask.hash")
    if len(h) != 16 or any(ch not in "0123456789abcdef" for ch in h):
        c.fail("mask.hash", "expected 16 lower-case hex digits", h)
    c.num(m["density"], "mask.density", 0, 1)
    if "spec" in m:
        _spec(c, m["spec"], "mask.spec", L)
        return
    from .mask import Mask
    from .mask_files import MaskFileError, runs_to_array
    try:
        arr = runs_to_array(m["inline"], "mask.inline")
    except MaskFileError as e:
        raise PlanError(f"{c.name}: {e}") from None
    if arr.shape != (L, L):
        c.fail("mask.inline", f"expected {L} x {L} (mask.seq_len)",
               f"{arr.shape[0]} x {arr.shape[1]}")
    mask = Mask(arr, source="inline")
    if mask.hash_hex() != h:
        c.fail("mask.hash", f"does not match the inline mask (hash {mask.hash_hex()})", h)
    if abs(mask.density - m["density"]) > 1e-9:
        c.fail("mask.density", f"does not match the inline mask (density {mask.density})",
               m["density"])


def _mha_tiles(c, m, path):
    for k in ("block_m", "block_n"):
        if isinstance(m[k], bool) or m[k] not in (16, 32, 64, 128, 256):
            c.fail(f"{path}.{k}", "expected one of 16, 32, 64, 128, 256", m[k])
    if isinstance(m["num_warps"], bool) or m["num_warps"] not in (1, 2, 4, 5, 8, 12):
        c.fail(f"{path}.num_warps", "expected one of 1, 2, 4, 5, 8, 12", m["num_warps"])


def _mha(c, m):
    c.obj(m, "mha", ["kernel", "block_m", "block_n", "num_warps", "chosen_by", "runs"],
          optional=("runs",))
    c.str_(m["kernel"], "mha.kernel", ("block_wise", "row_wise"))
    _mha_tiles(c, m, "mha")
    c.str_(m["chosen_by"], "mha.chosen_by", ("eq1+eq2", "eq2", "override", "tuned"))
    if "runs" in m:
        _mha_runs(c, m["runs"])


def _mha_runs(c, r):
    # What the engine runs (docs/plan-schema.md, "mha.runs"): block-wise with its tiles and
    # family, or row-wise without them.
    block = ("block_m", "block_n", "num_warps", "family")
    c.obj(r, "mha.runs", ["kernel", *block, "decided_by", "note"], optional=(*block, "note"))
    kernel = c.str_(r["kernel"], "mha.runs.kernel", ("block_wise", "row_wise"))
    c.str_(r["decided_by"], "mha.runs.decided_by", ("kernels", "engine model", "tuned"))
    if "note" in r:
        c.str_(r["note"], "mha.runs.note", nonempty=False)
    if kernel == "row_wise":
        for k in block:
            if k in r:
                c.fail(f"mha.runs.{k}", "the row-wise kernel has no block parameters", show=False)
        return
    for k in block:
        if k not in r:
            c.fail(f"mha.runs.{k}", "missing", show=False)
    _mha_tiles(c, r, "mha.runs")
    want = "hopper" if r["num_warps"] in (5, 12) else "portable"
    if r["family"] != want:
        c.fail("mha.runs.family", f"num_warps {r['num_warps']} is the {want} kernel", r["family"])


def _fusion(c, f):
    c.obj(f, "fusion", ["code", "segments"])
    code = c.str_(f["code"], "fusion.code", nonempty=False)
    if len(code) > 1024 or any(ch not in "01" for ch in code):
        c.fail("fusion.code", "expected at most 1024 digits 0 / 1", code)
    runs = []
    for i, ch in enumerate(code, start=1):
        if runs and code[i - 2] == ch:
            runs[-1].append(i)
        else:
            runs.append([i])
    segs = c.arr(f["segments"], "fusion.segments")
    if segs and len(segs) != len(runs):
        c.fail("fusion.segments", f"expected 0 or {len(runs)} entries (one per segment of "
               f"fusion.code)", len(segs))
    for i, s in enumerate(segs):
        p = f"fusion.segments[{i}]"
        c.obj(s, p, ["ops", "template", "params"])
        ops = c.arr(s["ops"], f"{p}.ops")
        if ops != runs[i] or any(isinstance(o, bool) for o in ops):
            c.fail(f"{p}.ops", f"expected {runs[i]} (this segment of fusion.code)", ops)
        c.str_(s["template"], f"{p}.template", nonempty=False)
        if not isinstance(s["params"], dict):
            c.fail(f"{p}.params", "expected an object", s["params"])
