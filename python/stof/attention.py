"""stof.attention: sparse multi-head attention on STOF's kernels for fp16 (and, on the Hopper
kernel, bf16) CUDA tensors, as the torch.library custom op stof::attention (with a fake
implementation, so torch.compile (fullgraph=True) traces it without graph breaks and CUDA
graphs capture its launch), and the cache of prepared layouts (stof.clear_cache). Eager calls
without autograd skip the dispatcher and run the op's body directly (_eager.direct_ok); a
repeated eager call takes the launch bound for its signature (_eager.py).

Cache: one prepared plan (_capi.PreparedPlan: kernel choice + device layout) per (mask content
key, kernel request, B, H, L, d, device index, dtype); the mask content key is a blake2b
digest of the mask's bits and size (Mask.key). Building a plan uploads the layout, which
CUDA-graph capture forbids: run a call once before capturing. Used by hf.py and user code;
imports torch.
"""

import math
import threading
from typing import Optional

import torch

from . import _capi, _eager
from ._eager import direct_ok as _eager_direct, current_stream as _current_stream
from .mask import Mask, as_mask, lookup
from .mask_set import MaskSet
from ._capi import StofError
from ._warn import warn_once

LAYOUTS = ("bhld", "blhd")
_T = torch.Tensor
_cache = {}
_cache_lock = threading.Lock()
DTYPES = {torch.float16: "f16", torch.bfloat16: "bf16"}  # the C API's names
_checked_plans = set()


def clear_cache():
    """Releases every prepared layout (device memory) and stof.hf's combined masks; the next
    call prepares again."""
    import sys
    hf = sys.modules.get(__package__ + ".hf")
    if hf is not None:
        hf.clear_cache()
    _eager.clear()  # the bound launches hold plans
    with _cache_lock:
        plans = list(_cache.values())
        _cache.clear()
    for p in plans:
        p.close()


def cache_info():
    """The cached keys: (mask key, kernel, block_m, block_n, num_warps, B, H, L, d, device,
    dtype, H_kv, L_q), H_kv and L_q None for self-attention with as many key heads as query
    heads."""
    with _cache_lock:
        return list(_cache)


def _prepared(mask_key, req, B, H, L, d, device_index, dtype="f16", kv_heads=None,
              q_len=None):
    key = (mask_key,) + tuple(req) + (B, H, L, d, device_index, dtype, kv_heads, q_len)
    with _cache_lock:
        p = _cache.get(key)
    if p is not None:
        return p
    if torch.cuda.is_current_stream_capturing():
        raise StofError(f"stof.attention: no prepared layout for this mask and shape "
                        f"(B={B}, H={H}, L={L}, d={d}) and a CUDA graph is being captured, "
                        f"which forbids the upload: run the call once before capturing")
    mask = lookup(mask_key)
    kernel, bm, bn, nw = req
    pattern_of = mask.pattern_of if isinstance(mask, MaskSet) else None
    p = _capi.PreparedPlan(mask.bytes_u8(), B, H, L, d, device_index, kernel, bm, bn, nw,
                           dtype, kv_heads=kv_heads, q_len=q_len, pattern_of=pattern_of)
    with _cache_lock:
        _cache.setdefault(key, p)
        return _cache[key]


def _shape(q, k, layout, kv_capacity=0):
    """(B, H, L_k, d, H_kv, L_q) of a call's plan, H_kv and L_q None where they equal H and L_k
    (the plain self-attention shape, prepared by the older C API calls too); L_k is the mask's
    kv_capacity when that is larger than k's keys."""
    if layout == "bhld":
        B, H, Lq, d = q.shape
        Hkv, L = k.shape[1], k.shape[2]
    else:
        B, Lq, H, d = q.shape
        L, Hkv = k.shape[1], k.shape[2]
    L = max(L, kv_capacity)
    if Hkv == H and Lq == L:
        return B, H, L, d, None, None
    return B, H, L, d, Hkv, Lq


def _packed(shape, layout):
    """(batch, head, row) element strides of a packed tensor of this shape."""
    a, b, c, d = shape
    return (b * c * d, c * d, d) if layout == "bhld" else (b * c * d, d, c * d)


def _views(t, layout):
    """(batch, head, row) element strides of a [B,H,L,d] or [B,L,H,d] tensor; a contiguous
    tensor gets its packed strides (torch may report any stride for a size-1 dimension)."""
    if t.is_contiguous():
        return _packed(t.shape, layout)
    s = t.stride()
    return (s[0], s[1], s[2]) if layout == "bhld" else (s[0], s[2], s[1])


def _strides_ok(t, v):
    """Whether the kernel can read `t` (element strides `v` = _views(t, layout)) in place, its
    address aside: unit stride along d, strides multiples of 8 elements, rows not overlapping
    (C API stof_run_views)."""
    return t.stride(3) == 1 and v[0] % 8 == 0 and v[1] % 8 == 0 and v[2] % 8 == 0 \
        and min(v) >= 0 and v[2] >= t.shape[3]


def _aligned(*ts):
    """Whether every tensor's address is 16-byte aligned (the kernel's loads and TMA)."""
    return all(t.data_ptr() % 16 == 0 for t in ts)


def _view_strides(q, k, v, layout):
    """The strides stof_run_views takes for q, k and v read in place and a packed output in
    q's layout: (q, k and v, out), all None where everything is packed [B, H, L, d]; None
    where the kernel cannot read them in place (then they are copied)."""
    vq, vk, vv = _views(q, layout), _views(k, layout), _views(v, layout)
    if vk != vv or not (_strides_ok(q, vq) and _strides_ok(k, vk) and _strides_ok(v, vv)):
        return None
    vo = _packed(q.shape, layout)
    if layout == "bhld" and vq == vk == vo:  # no stride arrays to build for the C call
        return None, None, None
    return vq, vk, vo


def _attention_impl(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask_key: str,
                    layout: str, scale: float, kernel: str, block_m: int, block_n: int,
                    num_warps: int, kv_capacity: int = 0,
                    key_ranges: Optional[torch.Tensor] = None,
                    key_bits: Optional[torch.Tensor] = None) -> torch.Tensor:
    """The op's work: find (or prepare) the plan, allocate the output, one C call.
    kv_capacity > L_k: the mask's keys (a KV cache's capacity): the plan is prepared for them and
    launched with k's L_k. key_ranges: int32 [B, 2] on q's device, per batch row the keys it
    attends; key_bits: int64 [B, words] on q's device, per batch row the keys it keeps
    (_key_bits)."""
    B, H, L, d, kv_heads, q_len = _shape(q, k, layout, kv_capacity)
    dev = q.device.index if q.device.index is not None else torch.cuda.current_device()
    plan = _prepared(mask_key, (kernel, block_m, block_n, num_warps), B, H, L, d, dev,
                     DTYPES[q.dtype], kv_heads, q_len)
    keys = k.shape[2] if layout == "bhld" else k.shape[1]
    kv_len = keys if keys != L else None
    stream = _current_stream(dev)
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    if plan.kernel == "block_wise" and _capi.has_views():
        views = _view_strides(q, k, v, layout) if _aligned(q, k, v) else None
        if views is None:
            q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
            views = _view_strides(q, k, v, layout)
        plan.run_views(q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), B, H, *views,
                       scale, stream, kv_len,
                       0 if key_ranges is None else key_ranges.data_ptr(),
                       0 if key_bits is None else key_bits.data_ptr(),
                       0 if key_bits is None else key_bits.shape[1])
        return out
    if key_ranges is not None or key_bits is not None:
        raise StofError(f"stof.attention: key_ranges: the {plan.kernel} kernel takes one mask "
                        f"for every batch row (key ranges: the block-wise Hopper kernel, sm_90)")
    # Packed [B, H, L, d] for the kernels without strided views; their scale is 1/sqrt(d), so
    # another scale is folded into q.
    def packed(t):
        return (t if layout == "bhld" else t.transpose(1, 2)).contiguous()
    qp = packed(q)
    if scale != 0.0 and abs(scale * math.sqrt(d) - 1.0) > 1e-7:
        qp = (qp.float() * (scale * math.sqrt(d))).to(q.dtype)
    kp, vp = packed(k), packed(v)
    op = torch.empty((B, H, L, d), dtype=q.dtype, device=q.device)
    plan.run(qp.data_ptr(), kp.data_ptr(), vp.data_ptr(), op.data_ptr(), stream)
    out.copy_(op if layout == "bhld" else op.transpose(1, 2))
    return out


# The registered op: what torch.compile traces and what autograd sees.
_attention_op = torch.library.custom_op("stof::attention", mutates_args=())(_attention_impl)


@_attention_op.register_fake
def _(q, k, v, mask_key, layout, scale, kernel, block_m, block_n, num_warps, kv_capacity=0,
      key_ranges=None, key_bits=None):
    return torch.empty(q.shape, dtype=q.dtype, device=q.device)


def _check(q, k, v, layout):
    if layout not in LAYOUTS:
        raise StofError(f"stof.attention: layout: expected 'bhld' or 'blhd', got {layout!r}")
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise StofError(f"stof.attention: {name}: expected a torch.Tensor, got "
                            f"{type(t).__name__}")
        if t.dim() != 4:
            raise StofError(f"stof.attention: {name}: expected 4 dimensions "
                            f"({'[B, H, L, d]' if layout == 'bhld' else '[B, L, H, d]'}), got "
                            f"shape {tuple(t.shape)}")
        if not t.is_cuda:
            raise StofError(f"stof.attention: {name}: expected a CUDA tensor, got device "
                            f"{t.device}")
        if t.dtype not in DTYPES:
            raise StofError(f"stof.attention: {name}: expected torch.float16 or torch.bfloat16 "
                            f"(bf16 on the Hopper kernel, sm_90), got {t.dtype}")
        if t.dtype != q.dtype:
            raise StofError(f"stof.attention: {name}: expected q's dtype {q.dtype}, got "
                            f"{t.dtype}")
    hd = 1 if layout == "bhld" else 2  # the heads dimension
    ld = 3 - hd                         # the length dimension
    if v.shape != k.shape or k.shape[0] != q.shape[0] or k.shape[3] != q.shape[3] \
            or q.shape[hd] % k.shape[hd] != 0:
        qs, ks = ("[B, H, L_q, d]", "[B, H_kv, L_k, d]") if layout == "bhld" else \
            ("[B, L_q, H, d]", "[B, L_k, H_kv, d]")
        raise StofError(f"stof.attention: q, k, v: expected q {qs} and k, v of one shape {ks} "
                        f"with H a multiple of H_kv (GQA), got {tuple(q.shape)}, "
                        f"{tuple(k.shape)}, {tuple(v.shape)}")
    if (q.shape[hd] != k.shape[hd] or q.shape[ld] != k.shape[ld]) and \
            torch.cuda.get_device_capability(q.device) != (9, 0):
        raise StofError(f"stof.attention: {q.shape[hd]} query heads over {k.shape[hd]} key/value "
                        f"heads, L_q {q.shape[ld]} over L_k {k.shape[ld]}: these shapes run on "
                        f"the Hopper kernel only (sm_90), "
                        f"{torch.cuda.get_device_name(q.device)} is sm_"
                        f"{''.join(map(str, torch.cuda.get_device_capability(q.device)))}")
    if k.device != q.device or v.device != q.device:
        raise StofError(f"stof.attention: q, k, v: expected one device, got {q.device}, "
                        f"{k.device}, {v.device}")
    d = q.shape[3]
    if not supported_head_dim(d):
        raise StofError(f"stof.attention: head_dim: the STOF kernels support multiples of 8 from "
                        f"8 to 256 (64 and 128 on every kernel, the others on the Hopper kernel, "
                        f"sm_90), got {d}")


def supported_head_dim(d):
    """Whether some STOF kernel takes head size d: 64 and 128 every kernel, any other multiple
    of 8 up to 256 the Hopper kernel (run at the next of 64, 128, 256 with zero columns)."""
    return 8 <= d <= 256 and d % 8 == 0


_full_masks = {}


def attention(q, k, v, mask=None, plan=None, layout="bhld", scale=None, kernel="auto",
              _block=(0, 0, 0), key_ranges=None, key_mask=None):
    """softmax(mask(Q K^T * scale)) V on STOF's sparse kernels.

    q: fp16 or bf16 (the Hopper kernel only, sm_90) CUDA tensor, [B, H, L_q, d]
    (layout="bhld") or [B, L_q, H, d] ("blhd"), d 64 or 128; k and v: [B, H_kv, L_k, d] (or
    [B, L_k, H_kv, d]) with H a multiple of H_kv: grouped-query attention as SDPA's enable_gqa
    and Flex's enable_gqa compute it (query head h reads key/value head h // (H // H_kv), not
    copied), and L_q != L_k for a KV cache or cross-attention; those shapes run on the Hopper
    kernel (sm_90). Strided views are read in place by the block-wise kernel. mask: a
    stof.Mask, a bool [L_q, L_k] tensor / numpy array, or a mask file path; None with no plan
    = full attention (a KV cache's causal rows: stof.Mask.causal(L_q, L_k)). Masks per batch
    row / head: a stof.MaskSet, or a bool [B, L_q, L_k] / [B, H, L_q, L_k] tensor or array (a
    size-1 dimension broadcasts; its distinct slices are kept once): packed documents with
    other boundaries per row, heads with different patterns, in one launch (the Hopper kernel,
    sm_90, C API version 8). A mask with more
    columns than k has keys (L_q below them: a KV cache's capacity) is prepared once and run
    with its first L_k columns, so a decode loop over a growing cache reuses one plan.
    plan: a stof.Plan or a plan file path: its mask (unless mask is given) and MHA kernel
    choice; warns (once per plan and shape) when run on another device or shape.
    scale: None = 1/sqrt(d). kernel: "auto" (Eq. 1 / Eq. 2), "row_wise",
    "block_wise", ... when no plan is given. Rows with nothing attended give zeros.
    key_ranges: None, or an int32 [B, 2] tensor on q's device: batch row b attends only keys
    first <= j < end of what the mask allows (a padded batch in one launch: the mask says the
    pattern, the ranges each row's padding; the Hopper kernel, sm_90); rows left with nothing
    give zeros.
    key_mask: None, or a bool [B, L_k] tensor on q's device: batch row b attends only the keys
    it marks True of what the mask (and key_ranges) allow: padding anywhere in a row, holes
    included, in one launch with no host work (the Hopper kernel, sm_90, C API version 8).
    Returns a new tensor in q's layout. Under torch.compile pass a stof.Mask or Plan made
    outside the compiled function."""
    sig = None
    if _eager.enabled and plan is None and key_ranges is None and key_mask is None and \
            not torch.compiler.is_compiling():
        call = _eager.call_compiled
        if call is not None:
            out = call(q, k, v, mask, layout, scale, kernel, _block)
            if out is not None:
                return out
        if (mask is None or type(mask) is Mask) and type(q) is _T and type(k) is _T \
                and type(v) is _T and type(_block) is tuple \
                and (scale is None or type(scale) is float or type(scale) is int):
            sig = _eager.signature(q, k, v, None if mask is None else mask.key, layout, scale,
                                   kernel, _block)
            given = (q, k, v, mask, layout, scale, kernel, _block)  # the compiled path's view
            launch = _eager.find(sig)
            if launch is not None and _eager_direct(q, k, v):
                out = launch(q, k, v)
                if out is not None:
                    return out
    _check(q, k, v, layout)
    Lq = q.shape[2] if layout == "bhld" else q.shape[1]
    L = k.shape[2] if layout == "bhld" else k.shape[1]
    req = (kernel,) + tuple(_block)  # _block: BLOCK_M, BLOCK_N, num_warps (hf.py, plans)
    if plan is not None:
        if not hasattr(plan, "mha_choice"):
            from .plan import load_plan
            plan = load_plan(plan)
        c = plan.mha_choice()
        req = (c["kernel"], c["block_m"], c["block_n"], c["num_warps"])
        if mask is None:
            mask = plan.query_mask
        if not torch.compiler.is_compiling():
            B, H, d = q.shape[0], q.shape[1 if layout == "bhld" else 2], q.shape[3]
            seen = (id(plan), B, H, L, d)
            if seen not in _checked_plans:
                _checked_plans.add(seen)
                # The CUDA device name, as `stof run --plan` compares it (the spec it queries
                # is named by cudaDeviceProp::name, which torch reports too).
                plan.check_run(torch.cuda.get_device_name(q.device), (B, H, L, d))
    if mask is None:
        mask = _full_masks.get((Lq, L))
        if mask is None:
            import numpy as np
            mask = _full_masks.setdefault((Lq, L), Mask(np.ones((Lq, L), dtype=bool),
                                                        source="full"))
    elif not isinstance(mask, (Mask, MaskSet)):
        mask = _per_row_mask(mask, q, layout) if getattr(mask, "ndim", 2) in (3, 4) \
            else as_mask(mask)
    if isinstance(mask, MaskSet):
        B, H = q.shape[0], q.shape[1 if layout == "bhld" else 2]
        if (mask.batch, mask.heads) != (B, H):
            raise StofError(f"stof.attention: mask: {mask!r} is for B={mask.batch} x "
                            f"H={mask.heads}, the call has B={B} x H={H}")
    if mask.q_len != Lq or mask.kv_len < L or (mask.kv_len > L and Lq == mask.kv_len):
        raise StofError(f"stof.attention: mask: {mask.q_len} x {mask.kv_len} ({mask.source}), "
                        f"the call has L_q = {Lq} queries over L_k = {L} keys (a mask with more "
                        f"columns than keys: a KV cache's capacity, L_q below it)")
    # A mask over more keys than k holds (a KV cache prepared once for its capacity): the plan
    # is for its columns, the launch for k's keys; the columns past them are not attended.
    capacity = mask.kv_len if mask.kv_len > L else 0
    if q.dtype == torch.bfloat16 and int(req[3]) not in (0, 5, 12):
        # Only the Hopper kernel (5 or 12 warps) takes bf16: a plan's portable configuration
        # gives way to the Hopper kernel's own choice (said once per configuration).
        warn_once(("bf16", tuple(req)), f"stof.attention: bf16 runs on the Hopper kernel only; "
                   f"the requested {req[0]} {req[1]}x{req[2]} with {req[3]} warps is replaced "
                   f"by its own choice")
        req = ("block_wise", 0, 0, 0)
    s = 0.0 if scale is None else float(scale)
    if key_ranges is not None:
        _check_key_ranges(key_ranges, q, layout)
    key_bits = None if key_mask is None else _key_bits(key_mask, q, L)
    args = (q, k, v, mask.key, layout, s, req[0], int(req[1]), int(req[2]), int(req[3]),
            capacity, key_ranges, key_bits)
    if _eager_direct(q, k, v):
        out = _attention_impl(*args)
        if sig is not None and key_ranges is None and key_bits is None:
            launch = _bind(*args)
            if launch is not None:
                _eager.remember(sig, launch, given)
        return out
    return torch.ops.stof.attention(*args)


def _per_row_mask(m, q, layout):
    """A bool [B, L_q, L_k] or [B, H, L_q, L_k] mask -> a MaskSet of its distinct slices, or
    the one Mask when every (batch row, head) has the same."""
    B, H = q.shape[0], q.shape[1 if layout == "bhld" else 2]
    s = MaskSet.from_tensor(m, B, H)
    return s.masks[0] if s.patterns == 1 else s


def takes_key_ranges(q, k, mask, layout="bhld", kernel="auto", block=(0, 0, 0)):
    """Whether stof.attention(q, k, v, mask=mask, ...) runs a kernel that takes key_ranges (the
    block-wise Hopper kernel): prepares the call's plan (kept in the cache) and asks it."""
    if not isinstance(mask, Mask):
        mask = as_mask(mask)
    B, H, L, d, kv_heads, q_len = _shape(q, k, layout, mask.kv_len if mask.kv_len > (
        k.shape[2] if layout == "bhld" else k.shape[1]) else 0)
    dev = q.device.index if q.device.index is not None else torch.cuda.current_device()
    plan = _prepared(mask.key, (kernel,) + tuple(block), B, H, L, d, dev, DTYPES[q.dtype],
                     kv_heads, q_len)
    return plan.kernel == "block_wise" and plan.num_warps in (5, 12)


def _check_key_ranges(r, q, layout):
    B = q.shape[0]
    if not isinstance(r, torch.Tensor) or r.dtype != torch.int32 or tuple(r.shape) != (B, 2) \
            or r.device != q.device or not r.is_contiguous():
        what = f"{r.dtype} {tuple(r.shape)} on {r.device}" if isinstance(r, torch.Tensor) \
            else type(r).__name__
        raise StofError(f"stof.attention: key_ranges: expected a contiguous torch.int32 tensor "
                        f"[{B}, 2] on {q.device} (per batch row: first key, end key), got {what}")


def _key_bits(m, q, L):
    """bool [B, L_k] on q's device -> int64 [B, words] of its bits (bit j of word w = key
    64 w + j), words covering L_k rounded up to 128 as the kernel reads them; made on the
    device (no host copy, so a CUDA graph captures it)."""
    B = q.shape[0]
    if not isinstance(m, torch.Tensor) or m.dtype != torch.bool or tuple(m.shape) != (B, L) \
            or m.device != q.device:
        what = f"{m.dtype} {tuple(m.shape)} on {m.device}" if isinstance(m, torch.Tensor) \
            else type(m).__name__
        raise StofError(f"stof.attention: key_mask: expected a torch.bool tensor [{B}, {L}] on "
                        f"{q.device} (per batch row: the keys it keeps), got {what}")
    words = -(-L // 128) * 2
    padded = torch.zeros(B, words * 64, dtype=torch.int64, device=m.device)
    padded[:, :L] = m
    shifts = torch.arange(64, dtype=torch.int64, device=m.device)
    # Distinct powers of two: their sum is their OR (bit 63 wraps to the sign, as it should).
    return (padded.view(B, words, 64) << shifts).sum(dim=2)


def _bind(q, k, v, mask_key, layout, scale, kernel, block_m, block_n, num_warps,
          kv_capacity=0, key_ranges=None, key_bits=None):
    """The launch that later eager calls of the same signature take (_eager.Launch): the plan
    this call prepared and its strides, bound once. None where the call needs copies or runs
    a kernel without strided views, or the library predates bound calls (C API version 5):
    those calls keep the full path."""
    if not _capi.has_bound():
        return None
    B, H, L, d, kv_heads, q_len = _shape(q, k, layout, kv_capacity)
    plan = _prepared(mask_key, (kernel, block_m, block_n, num_warps), B, H, L, d,
                     q.get_device(), DTYPES[q.dtype], kv_heads, q_len)
    views = _view_strides(q, k, v, layout)
    if plan.kernel != "block_wise" or views is None:
        return None
    keys = k.shape[2] if layout == "bhld" else k.shape[1]
    return _eager.Launch(plan.bind_views(B, H, *views, scale, keys if keys != L else None), q)
