"""Pieces shared by the PyTorch comparison scripts (mha_compare.py, model_compare.py).

Holds the one copy of: running the stof CLI and reading its JSON, masks from `stof mask`,
FlexAttention BlockMask creation (one mask buffer and mask_mod per L, so torch.compile does not
recompile per mask), the eager attention peer, timing (CUDA-event pairs; CUDA-graph replays),
the environment record, atomic JSON writing and the geometric mean.

Invariants: importing this module needs neither torch nor numpy (model_compare.py's --self-test
and --only-ours run where neither is installed): torch is imported when present (None
otherwise; eager_attention is traced by torch.compile, so it must not import inside), numpy
when a mask is first loaded. Nothing here exits the process: failures are exceptions with a
message naming the command or file, and the callers record them per configuration.
"""

import datetime
import json
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time

try:  # optional: see the header
    import torch
except ImportError:
    torch = None

# kernel_options asked of FlexAttention when its default tiles do not divide a BLOCK_SIZE
# below 128 (the compiled kernel then refuses the BlockMask).
FLEX_SMALL_BLOCK_OPTIONS = {"BLOCK_M": 64, "BLOCK_N": 64}


def log(*args):
    print(*args, flush=True)


def error_text(e, limit=300):
    """'TypeName: first line of the message', cut to `limit` characters: what a results file
    records for a failed method (tracebacks go to the console with --verbose)."""
    msg = str(e).strip()
    first = msg.splitlines()[0] if msg else ""
    return f"{type(e).__name__}: {first[:limit]}" if first else type(e).__name__


# ---- the stof CLI -----------------------------------------------------------------------------


def run_stof(stof, argv, timeout=None):
    """Runs `stof ARGV...` and returns its stdout. A non-zero exit, a missing binary or a
    timeout raises RuntimeError naming the subcommand, with stof's own last error line."""
    cmd = [stof] + [str(a) for a in argv]
    what = f"stof {argv[0]}" if argv else "stof"
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
    except FileNotFoundError:
        raise RuntimeError(f"{what}: {stof}: no such file (build first, or pass --stof)")
    except PermissionError:
        raise RuntimeError(f"{what}: {stof}: not executable")
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{what}: no answer within {timeout} s ({shlex.join(cmd)})")
    if p.returncode != 0:
        # stof's errors are one line on stderr; CLI11 adds "Run with --help ..." after its own.
        lines = [ln.strip() for ln in p.stderr.splitlines()
                 if ln.strip() and not ln.startswith("Run with --help")]
        if not lines:
            lines = [ln.strip() for ln in p.stdout.splitlines() if ln.strip()][-1:]
        why = " / ".join(lines[-2:]) if lines else "(no message)"
        raise RuntimeError(f"{what}: exit {p.returncode}: {why[:400]}")
    return p.stdout


def parse_json_output(text, what="output"):
    """The JSON object a `stof ... --json` command printed. Tolerates lines before it (a
    warning, a progress line): decodes from the first '{' that starts a whole object."""
    text = text.strip()
    try:
        doc = json.loads(text)
        if isinstance(doc, dict):
            return doc
    except ValueError:
        pass
    dec = json.JSONDecoder()
    pos = text.find("{")
    while pos >= 0:
        try:
            doc, _ = dec.raw_decode(text, pos)
            if isinstance(doc, dict):
                return doc
        except ValueError:
            pass
        pos = text.find("{", pos + 1)
    head = text[:120].replace("\n", " | ")
    raise ValueError(f"{what}: expected a JSON object, got '{head}'" if text else
                     f"{what}: empty")


class Masks:
    """Masks from `stof mask --pattern NAME --seq L --out FILE.npy --json`, cached per
    (pattern, L): get() gives the bool [L, L] numpy array, info() what stof printed (nnz,
    density, hash, source), so a results file can name the exact mask."""

    def __init__(self, stof_bin, workdir):
        self.stof = stof_bin
        self.dir = workdir
        self.cache = {}
        self.infos = {}

    def _make(self, pattern, L):
        key = (pattern, L)
        if key in self.infos:
            return key
        path = os.path.join(self.dir, f"{pattern}_{L}.npy")
        out = run_stof(self.stof, ["mask", "--pattern", pattern, "--seq", L, "--out", path,
                                   "--json"])
        info = parse_json_output(out, f"stof mask --pattern {pattern} --seq {L}")
        info.pop("out", None)  # a temporary path
        self.infos[key] = (info, path)
        return key

    def info(self, pattern, L):
        return self.infos[self._make(pattern, L)][0]

    def get(self, pattern, L):
        key = self._make(pattern, L)
        if key not in self.cache:
            import numpy as np
            path = self.infos[key][1]
            m = np.load(path)
            if m.dtype != np.bool_ or m.shape != (L, L):
                raise RuntimeError(f"{path}: expected bool {L}x{L}, got {m.dtype} {m.shape}")
            self.cache[key] = m
        return self.cache[key]


# ---- attention peers ------------------------------------------------------------------------


def mask_operands(mask_t):
    """(neg_mask, empty_rows) for eager_attention from a bool [L, L] CUDA mask (true = attend):
    empty_rows is None when every row attends somewhere (the usual case: no extra op)."""
    neg_mask = ~mask_t
    row_has = mask_t.any(dim=-1)
    empty_rows = None if bool(row_has.all()) else (~row_has)[:, None]
    return neg_mask, empty_rows


def eager_attention(q, k, v, neg_mask, empty_rows, scale=None):
    """matmul, scale, masked_fill(-inf), softmax, matmul; rows with nothing attended set to 0
    (our kernels' and Flex's convention). scale None = 1/sqrt(d)."""
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    s = torch.matmul(q, k.transpose(-2, -1))
    if scale != 1.0:
        s = s * scale
    s = s.masked_fill(neg_mask, float("-inf"))
    p = torch.softmax(s, dim=-1)
    if empty_rows is not None:
        p = p.masked_fill(empty_rows, 0.0)
    return torch.matmul(p, v)


class FlexState:
    """One persistent mask buffer and mask_mod per L: create_block_mask reads the buffer when
    the BlockMask is built, the compiled kernel reads it for partial blocks; reusing the same
    buffer and function for every mask of one L keeps torch.compile from recompiling per mask
    (guards see the same objects and shapes). A BlockMask is valid until the next
    mask_mod_for() of the same L overwrites the buffer: build it right before its runs."""

    def __init__(self):
        self.bufs = {}
        self.mods = {}

    def mask_mod_for(self, mask_t):
        L = mask_t.shape[0]
        if L not in self.bufs:
            buf = torch.empty_like(mask_t)
            self.bufs[L] = buf

            def mask_mod(b, h, q_idx, kv_idx):
                return buf[q_idx, kv_idx]

            self.mods[L] = mask_mod
        self.bufs[L].copy_(mask_t)
        return self.mods[L]


def create_flex_block_mask(flex_state, mask_t, block_size):
    """BlockMask of a bool [L, L] CUDA mask at BLOCK_SIZE block_size, broadcast over batch and
    heads (B = H = None). Returns (block_mask, seconds spent building it)."""
    from torch.nn.attention.flex_attention import create_block_mask
    L = mask_t.shape[0]
    mod = flex_state.mask_mod_for(mask_t)
    t0 = time.perf_counter()
    bm = create_block_mask(mod, None, None, L, L, device="cuda", BLOCK_SIZE=block_size)
    torch.cuda.synchronize()
    return bm, time.perf_counter() - t0


# ---- timing ---------------------------------------------------------------------------------


def time_method(fn, sets, warmup, runs):
    """fn(set) launches one call; per-call event pairs, back to back; rotation over sets."""
    n = len(sets)
    for i in range(warmup):
        fn(sets[i % n])
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    t0 = time.perf_counter()
    for i in range(runs):
        s = sets[(warmup + i) % n]
        starts[i].record()
        fn(s)
        ends[i].record()
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t0) / runs * 1e6
    samples = [a.elapsed_time(b) * 1e3 for a, b in zip(starts, ends)]
    return {"median_us": statistics.median(samples), "min_us": min(samples),
            "max_us": max(samples), "mean_us": statistics.fmean(samples),
            "wall_us_per_call": wall, "runs": runs, "warmup": warmup}


def time_graph(fn, sets, warmup, runs, stream_box=None):
    """CUDA-graph mode: one graph holds one call per input set (so replays rotate over the
    sets like the plain mode); events around each replay, median of `runs` replays divided by
    the calls per replay. Removes the host's launch overhead (Python, dispatch, guards) from
    every method alike, leaving GPU time. stream_box (a one-element list) is set to the raw
    stream in use, for callers that launch through ctypes on an explicit stream."""
    if stream_box is None:
        stream_box = [None]
    n = len(sets)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up on a side stream, as torch.cuda.graph advises
        stream_box[0] = side.cuda_stream
        for i in range(2):
            fn(sets[i % n])
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            stream_box[0] = torch.cuda.current_stream().cuda_stream
            for i in range(n):
                fn(sets[i])
    finally:
        stream_box[0] = torch.cuda.current_stream().cuda_stream
    for _ in range(max(1, warmup // n)):
        graph.replay()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    for i in range(runs):
        starts[i].record()
        graph.replay()
        ends[i].record()
    torch.cuda.synchronize()
    per_call = [a.elapsed_time(b) * 1e3 / n for a, b in zip(starts, ends)]
    del graph
    return {"median_us": statistics.median(per_call), "min_us": min(per_call),
            "max_us": max(per_call), "calls_per_replay": n, "replays": runs}


def free_memory():
    """Returns PyTorch's cached blocks to the driver (so another process, or the next
    configuration, gets them) and the free device bytes."""
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    free, _ = torch.cuda.mem_get_info()
    return free


def raise_dynamo_cache_limits():
    """Many shapes in one process: let torch.compile keep one compiled version per shape
    instead of falling back to eager after its default 8 recompilations."""
    cfg = torch._dynamo.config
    for knob in ("cache_size_limit", "recompile_limit"):
        if hasattr(cfg, knob):
            setattr(cfg, knob, 4096)
    for knob in ("accumulated_cache_size_limit", "accumulated_recompile_limit"):
        if hasattr(cfg, knob):
            setattr(cfg, knob, 8192)


# ---- records ----------------------------------------------------------------------------------


def environment(argv=None):
    """What a results file says about where and how it was made: date (UTC), the command
    line (argv: the arguments after the script, when not sys.argv's), Python; torch, Triton
    and CUDA versions and the device when torch is importable (None otherwise)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    env = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "argv": argv,
        "command_line": shlex.join([os.path.basename(sys.executable), sys.argv[0]] + argv),
        "python": platform.python_version(),
        "torch": None, "triton": None, "cuda": None, "device": None,
    }
    if torch is None:
        return env
    env["torch"] = torch.__version__
    env["cuda"] = torch.version.cuda
    try:
        import triton
        env["triton"] = triton.__version__
    except ImportError:
        pass
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        env["device"] = torch.cuda.get_device_name(0)
        env["sm_count"] = props.multi_processor_count
        env["l2_bytes"] = int(getattr(props, "L2_cache_size", 50 << 20))
        env["memory_bytes"] = int(props.total_memory)
    return env


def write_json(path, doc):
    """Atomic rewrite (temp file + rename): a run killed mid-write keeps the previous file."""
    if not path:
        return
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt(x, spec="{:.1f}"):
    return spec.format(x) if x is not None else "-"
