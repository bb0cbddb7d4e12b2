"""stof.load_plan: a plan JSON (docs/plan-schema.md, versions 1 to 3) read and validated by the
engine's loader (libstof_engine_capi.so, _engine.py: what `stof plan validate` runs), with what
PyTorch callers need from it: the mask (regenerated or inline, hash-checked; a version 3 plan's
last q_len rows of a long spec), the workload, the device, the MHA kernel choice, the
per-segment choices, and check_run, which warns (warnings.warn) when the plan runs on another
device or shape.

Used by attention.py (plan=...) and hf.py (use_mask with a plan).
"""

import json
import os
import warnings

from . import _engine
from ._engine import PlanError


def load_plan(path, check_mask=True):
    """Reads and validates the plan at `path` as `stof plan validate` does (the same engine
    function); raises PlanError naming the file and field. check_mask: also build the mask now
    (a spec mask is regenerated, then its generator rules and hash are checked); False defers
    that to the first use of plan.mask."""
    loaded = _engine.LoadedPlan(path)
    plan = Plan(loaded.doc, loaded.path, loaded)
    if check_mask:
        plan.mask
    return plan


class Plan:
    """A validated plan. Attributes: path, doc (the plan's JSON as the engine writes it),
    device (dict), device_name, workload (dict), shape ((batch, heads, seq_len, head_dim)),
    kv_heads, q_len, mask_rows ("all", or "last": schema version 3, the mask is the last q_len
    rows), model (dict or None), mha (dict), fusion_code, segments (list of {"ops",
    "template", "params"})."""

    def __init__(self, doc, path, loaded):
        self._loaded = loaded
        self.doc = doc
        self.path = path
        self.device = doc["device"]
        self.device_name = doc["device"]["name"]
        self.workload = doc["workload"]
        w = self.workload
        self.shape = (w["batch"], w["heads"], w["seq_len"], w["head_dim"])
        # Schema version 2: grouped key/value heads and a KV cache's query rows (absent: the
        # square MHA of version 1).
        self.kv_heads = w.get("kv_heads", w["heads"])
        self.q_len = w.get("q_len", w["seq_len"])
        # Schema version 3: mask.rows "last", the plan holds only the last q_len rows of its
        # spec's mask (keys past a square mask's 32768); absent: the square mask.
        self.mask_rows = doc["mask"].get("rows", "all")
        self.model = doc.get("model")
        self.mha = doc["mha"]
        self.fusion_code = doc["fusion"]["code"]
        self.segments = doc["fusion"]["segments"]
        self._mask = None
        self._query_mask = None

    @property
    def mask(self):
        """The plan's stof.Mask: inline bits, or the spec regenerated; its hash must equal
        mask.hash (a plan is never used on another mask). A version 3 plan with mask.rows
        "last" holds the spec's last q_len rows only: its mask is that q_len x seq_len mask
        (built by the engine from those rows' runs, never the square one), without the spec
        (which describes the square mask)."""
        if self._mask is None:
            from .mask import Mask
            arr, spec, engine_hash = self._loaded.mask()
            if self.mask_rows == "last":
                self._mask = Mask(arr, source=f"{self.path}, last {self.q_len} rows",
                                  engine_hash=engine_hash)
            else:
                self._mask = Mask(arr, spec=spec, source=self.path, engine_hash=engine_hash)
        return self._mask

    @property
    def query_mask(self):
        """The mask the plan's workload runs: plan.mask, or its last q_len rows where the
        workload has fewer query rows than keys (a KV cache's prefill or decode step; a
        version 3 plan's mask already is those rows)."""
        if self.q_len == self.shape[2] or self.mask_rows == "last":
            return self.mask
        if self._query_mask is None:
            from .mask import Mask
            self._query_mask = Mask(self.mask.numpy()[-self.q_len:],
                                    source=f"{self.path}, last {self.q_len} rows")
        return self._query_mask

    def mha_choice(self):
        """The attention kernel request for the C API: {"kernel", "block_m", "block_n",
        "num_warps"}. What the plan records the engine runs (mha.runs), else its mha section,
        overridden key by key by a sparse_mha segment's params; a segment variant other than
        fused selects native / sd / sdf (sd, sdf: BM x T = the segment's block_m or 64 x
        sub_len or 64)."""
        runs = self.mha.get("runs")
        if runs is not None and runs["kernel"] == "row_wise":
            req = {"kernel": "row_wise", "block_m": 64, "block_n": 64, "num_warps": 4}
        else:
            req = {k: (runs or self.mha)[k] for k in ("kernel", "block_m", "block_n", "num_warps")}
        for s in self.segments:
            if s["template"] != "sparse_mha":
                continue
            p = s["params"]
            variant = p.get("variant", "fused")
            if variant == "fused":
                for k in req:
                    if k in p:
                        req[k] = p[k]
            else:
                kernel = {"unfused": "native", "sd": "sd", "sdf": "sdf"}.get(variant)
                if kernel is None:
                    raise PlanError(f"{self.path}: fusion.segments: sparse_mha variant: expected "
                                    f"fused, unfused, sd or sdf, got {json.dumps(variant)}")
                req = {"kernel": kernel, "block_m": 0 if kernel == "native" else 64,
                       "block_n": 0 if kernel == "native" else int(p.get("sub_len", 64)),
                       "num_warps": 0}
        return req

    def segment_choices(self):
        """[(ops, template, params)] per segment of the fusion scheme (empty before tuning)."""
        return [(s["ops"], s["template"], s["params"]) for s in self.segments]

    def check_run(self, device_name, shape):
        """Warns (does not fail) when run on another device (exact name compare, as stof run
        --plan) or another (batch, heads, seq_len, head_dim). Returns the warnings' texts."""
        texts = []
        if device_name is not None and device_name != self.device_name:
            texts.append(f"plan made on {self.device_name}, running on {device_name}: its "
                         f"timings and parameters may not carry over")
        if shape is not None and tuple(shape) != self.shape:
            names = ("batch", "heads", "seq_len", "head_dim")
            diff = ", ".join(f"{n} {a} (plan {b})" for n, a, b in zip(names, shape, self.shape)
                             if a != b)
            texts.append(f"plan {os.path.basename(self.path)} was made for (batch, heads, "
                         f"seq_len, head_dim) = {self.shape}, running at {tuple(shape)}: {diff}")
        for t in texts:
            warnings.warn(f"stof: {t}", stacklevel=2)
        return texts

    def __repr__(self):
        return (f"stof.Plan({self.path!r}, device={self.device_name!r}, shape={self.shape}, "
                f"mha={self.mha_choice()})")
