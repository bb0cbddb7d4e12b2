"""Hugging Face transformers backend "stof": register() adds it to AttentionInterface (and
sdpa's boolean masks to AttentionMaskInterface under the same name), so a model built with
attn_implementation="stof" runs its attention on stof.attention; use_mask(model, mask_or_plan)
sets the sparse pattern, which is ANDed with the model's own mask (padding, causal).

Grouped-query attention (fewer key/value heads than query heads) and a KV cache (a prefill
over cached keys, every decode step of generate(): fewer query rows than keys, causal aligned
to the bottom right) run on the Hopper kernel (sm_90) in one launch; so do batches whose rows
have different masks (padding, packed documents): one key range per row where that says it,
else one mask per row (a stof.MaskSet, C API version 8).
Unsupported cases run transformers' sdpa_attention_forward instead, with one warning per reason
(warnings.warn): head_dim not a multiple of 8 up to 256 (or other than 64 / 128 on a GPU other
than sm_90), dropout while training, attention weights
requested, CPU or non-fp16 tensors (bf16: sm_90 only), grouped heads or a KV cache on a GPU
other than sm_90, an additive float mask, and extra tensor arguments such as T5's
position_bias (or a sliding window, softcap or sinks passed beside the mask), which the kernel
cannot apply.

The combined mask (pattern AND the model's mask) is built once per forward, not per layer:
without a model mask on the host from the pattern and the layer's causal flag; with one, read
from the GPU once per mask tensor. With L_q query rows over L_k keys the pattern's rows
L_k - L_q .. L_k - 1 (its columns 0 .. L_k - 1) are the new rows' pattern. Under CUDA-graph capture (after one eager forward, which
uploads the layouts) the model mask is taken to carry no padding and checked on the device
(_padding_rows). clear_cache() (or stof.clear_cache()) forgets them.
Used by user code and python/tests/test_gpu_hf.py; imports torch and transformers.
"""

import torch

from .attention import attention, supported_head_dim, takes_key_ranges
from .mask import (MAX_CELLS as _MAX_CELLS, MAX_SIDE as _MAX_SIDE, MAX_SQUARE as _MAX_SQUARE,
                   Mask, as_mask)
from .mask_set import MaskSet
from ._capi import StofError
from ._warn import warn_once

NAME = "stof"
# Tensor arguments models pass that do not change what attention computes (GPT-2 passes
# position_ids; generation passes cache_position).
_HARMLESS = ("position_ids", "cache_position")


def register():
    """Adds the "stof" attention backend and its mask function to transformers."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask
    AttentionInterface.register(NAME, stof_attention_forward)
    AttentionMaskInterface.register(NAME, sdpa_mask)


def use_mask(model, mask_or_plan):
    """Sets the sparse pattern (a stof.Mask, bool array / tensor, mask file or stof.Plan) of
    every attention layer of `model`; None removes it (dense attention, the model's mask only).
    Returns the model."""
    choice = None
    mask = None
    if mask_or_plan is not None:
        if hasattr(mask_or_plan, "mha_choice"):
            mask = mask_or_plan.mask
            c = mask_or_plan.mha_choice()
            choice = (c["kernel"], c["block_m"], c["block_n"], c["num_warps"])
        else:
            mask = as_mask(mask_or_plan)
    for m in model.modules():
        m._stof_mask = mask
        m._stof_choice = choice
    return model


# Combined masks, so a forward builds each once, not once per layer. Without a padding mask
# (the usual inference case) the combined mask is the pattern AND (causal), built on the host
# from what the layer says: no device work, no host copy, so CUDA-graph capture works. With
# a padding mask (a tensor on the GPU) its rows must be read on the host once; the layers of
# one forward share that tensor (transformers builds it once per forward), so the result is
# kept per tensor object and version. Both caches hold at most _CACHE_SIZE entries.
_CACHE_SIZE = 8
# A decode step's plan covers the cache rounded up to this many keys: one plan (one layout
# upload) per this many generated tokens; the extra keys are masked, not loaded.
_DECODE_CAPACITY_STEP = 256
_host_masks = {}    # (pattern key or None, causal, L_q, L_k) -> Mask
_padding_masks = {}  # (id, data_ptr, version, pattern key, L_q, L_k) -> (tensor, [Mask per row])
_row_sets = {}  # (row mask keys, heads) -> MaskSet
_kept_rows = {}  # (host mask key, keep flags) -> [Mask per row]


def _remember(cache, key, value):
    if len(cache) >= _CACHE_SIZE:
        cache.pop(next(iter(cache)))
    cache[key] = value
    return value


def clear_cache():
    """Forgets the combined masks of earlier forwards (stof.clear_cache does too)."""
    _host_masks.clear()
    _padding_masks.clear()
    _row_sets.clear()
    _kept_rows.clear()


def _pattern_rows(sparse, Lq, L):
    """The pattern's rows for L_q new query rows over L keys (bool [L_q, L]): its last L_q rows
    of the first L (the whole pattern when it is L_q x L), or an error naming both sizes."""
    if sparse.q_len == Lq and sparse.kv_len == L:
        return sparse.numpy()
    if sparse.q_len == sparse.kv_len and sparse.kv_len >= L:
        return sparse.numpy()[L - Lq:L, :L]
    raise ValueError(f"stof attention: the pattern set by stof.hf.use_mask is "
                     f"{sparse.q_len} x {sparse.kv_len}; this call has {Lq} queries over {L} "
                     f"keys (a square pattern at least as long as the keys covers a KV cache)")


def _causal(Lq, L):
    """Bottom-right causal [L_q, L] (query i at position i + L - L_q), as a KV cache needs."""
    import numpy as np
    return np.arange(L).reshape(1, -1) <= np.arange(L - Lq, L).reshape(-1, 1)


def _host_mask(sparse, causal, Lq, L, window=None):
    """The pattern (or full) AND causal when asked AND a sliding window of `window` keys (a
    query at position p attends keys p - window < j, transformers' sliding_window) when given,
    as a Mask built on the host."""
    window = int(window) if window and window < L else None
    key = (None if sparse is None else sparse.key, bool(causal and Lq > 1), Lq, L, window)
    m = _host_masks.get(key)
    if m is None:
        import numpy as np
        a = np.ones((Lq, L), dtype=bool) if sparse is None else _pattern_rows(sparse, Lq, L).copy()
        if key[1]:
            a &= _causal(Lq, L)
        what = ("full" if sparse is None else sparse.source) + (" & causal" if key[1] else "")
        if window is not None:
            pos = np.arange(L - Lq, L).reshape(-1, 1)
            a &= np.arange(L).reshape(1, -1) > pos - window
            what += f" & window {window}"
        m = _remember(_host_masks, key, Mask(a, source=what))
    return m


def _key_ranges(given, unpadded):
    """Per batch row the keys any of its query rows attends, [first, end) as int32 [B, 2], and
    whether `given` ([B, L_q, L]) is exactly `unpadded` ([L_q, L]) with each row's keys cut to
    its range (left or right padding): both on the device."""
    B, _, L = given.shape
    last = given.any(dim=1).to(torch.int8)  # [B, L]: keys some query row attends
    first = torch.argmax(last, dim=1)
    end = L - torch.argmax(last.flip(1), dim=1)
    none = last.sum(dim=1) == 0
    first = torch.where(none, torch.zeros_like(first), first)
    end = torch.where(none, torch.zeros_like(end), end)
    cols = torch.arange(L, device=given.device).view(1, 1, -1)
    ranged = unpadded.unsqueeze(0) & (cols >= first.view(-1, 1, 1)) & (cols < end.view(-1, 1, 1))
    ranges = torch.stack([first, end], dim=1).to(torch.int32).contiguous()
    return ranges, (given == ranged).all()


def _sets_usable(device):
    """Masks per batch row run on the Hopper kernel through C API version 8."""
    from . import _capi
    return torch.cuda.get_device_capability(device) == (9, 0) and _capi.version() >= 8


def _row_set(rows, heads):
    """The MaskSet of one Mask per batch row, every head of a row sharing it (kept per rows
    and heads: the layers of a forward share it)."""
    key = (tuple(r.key for r in rows), heads)
    hit = _row_sets.get(key)
    if hit is None:
        # MaskSet keeps each distinct mask once (equal rows merge by content key).
        hit = _remember(_row_sets, key, MaskSet(rows, [[b] * heads for b in range(len(rows))],
                                                source="attention_mask rows"))
    return hit


def _ranges_usable(device):
    """Key ranges run on the Hopper kernel through C API version 7."""
    from . import _capi
    return torch.cuda.get_device_capability(device) == (9, 0) and _capi.version() >= 7


def _padding_rows(attention_mask, sparse, Lq, L, causal, window=None, ranges=True):
    """(rows, key_ranges) for a boolean [B, 1, L_q, L] model mask AND the pattern. A mask
    whose rows are the unpadded mask with each batch row's keys cut to one range (left or right
    padding) is one Mask and the ranges (int32 [B, 2] on the device: one launch, the Hopper
    kernel); where each row is the unpadded mask with any keys dropped (holes too), one Mask
    and the kept keys, bool [B, L] on the device (stof.attention's key_mask; C API version 8);
    else one Mask per batch row (equal rows share one) and None: where each row is
    the unpadded mask with some keys dropped (padding, holes included) only the [B, L] kept-key
    flags are read (_kept_key_rows), else the whole mask, once per mask tensor. A mask without
    padding (full, or causal when `causal`, within the sliding `window` when given: what
    transformers materialises for Mistral-style layers) is recognised on the device and taken
    from the host cache, so such a forward reads no L_q x L bytes. Under CUDA-graph capture
    nothing can be read: the mask is taken to be the one without padding, and a device-side
    assert checks that it is (a captured forward replayed with padding stops with that assert;
    it never runs on a wrong layout)."""
    window = int(window) if window and window < L else None
    key = (id(attention_mask), attention_mask.data_ptr(), attention_mask._version,
           None if sparse is None else sparse.key, Lq, L, window, ranges)
    hit = _padding_masks.get(key)
    if hit is not None and hit[0] is attention_mask:
        return hit[1], hit[2]
    given = attention_mask[:, 0, :, :L].expand(-1, Lq, L)  # [B or 1, L_q, L]
    # Made on the device: no host copy, which a capture forbids.
    pos = torch.arange(L - Lq, L, device=given.device).view(-1, 1)
    cols = torch.arange(L, device=given.device).view(1, -1)
    unpadded = torch.ones(Lq, L, dtype=torch.bool, device=given.device)
    if causal and Lq > 1:
        unpadded = cols <= pos
    if window is not None:
        unpadded = unpadded & (cols > pos - window)
    same = (given == unpadded).all()
    capturing = torch.cuda.is_current_stream_capturing()
    if capturing:
        torch._assert_async(same, "stof attention: a captured forward got a padding mask; "
                                  "capture and replay forwards without padding, or run them "
                                  "eagerly")
    cut, ranged = None, None  # `ranges` says whether to try the range form
    if ranges and not capturing and _ranges_usable(given.device):
        cut, ranged = _key_ranges(given, unpadded)
    # Padding as per row kept keys (holes too): the unpadded mask with each row's unkept keys
    # masked; then only the [B, L] keep flags come to the host.
    keep = given.any(dim=1)  # [B, L]
    as_keys = (given == (unpadded.unsqueeze(0) & keep.unsqueeze(1))).all()
    # One read of the answers (no padding; padding in range form; as kept keys) for the
    # whole forward.
    answers = torch.stack([same, ranged if ranged is not None else same, as_keys]).tolist() \
        if not capturing else [True, False, False]
    if answers[0] or answers[1]:
        # No padding, or padding as key ranges: the host mask, without copying B x L_q x L
        # bytes to the host.
        rows = [_host_mask(sparse, causal, Lq, L, window)]
        cut = None if answers[0] else cut
        _remember(_padding_masks, key, (attention_mask, rows, cut))
        return rows, cut
    if answers[2] and ranges and _sets_usable(given.device):
        # Kept keys as bits the kernel reads (stof.attention's key_mask): no host work.
        rows = [_host_mask(sparse, causal, Lq, L, window)]
        keep = keep.contiguous()
        _remember(_padding_masks, key, (attention_mask, rows, keep))
        return rows, keep
    if answers[2]:
        rows = _kept_key_rows(keep.cpu().numpy(), sparse, causal, Lq, L, window)
        _remember(_padding_masks, key, (attention_mask, rows, None))
        return rows, None
    if sparse is not None:
        pattern = torch.from_numpy(_pattern_rows(sparse, Lq, L)).to(given.device)
        dense = given & pattern
    else:
        dense = given
    host = dense.cpu().numpy()
    rows, seen = [], {}
    for b in range(host.shape[0]):
        raw = host[b].tobytes()
        if raw not in seen:
            seen[raw] = Mask(host[b], source=f"attention_mask row {b}")
        rows.append(seen[raw])
    _remember(_padding_masks, key, (attention_mask, rows, None))
    return rows, None


def _kept_key_rows(keep, sparse, causal, Lq, L, window):
    """One Mask per batch row: the host mask (pattern, causal, window) with the keys the row
    does not keep masked (`keep`: bool [B, L] on the host); equal rows share one Mask, and a
    batch whose keep flags were seen before (within _CACHE_SIZE) reuses its Masks."""
    base = _host_mask(sparse, causal, Lq, L, window)
    key = (base.key, keep.shape, keep.tobytes())
    hit = _kept_rows.get(key)
    if hit is None:
        rows, seen = [], {}
        for b in range(keep.shape[0]):
            raw = keep[b].tobytes()
            if raw not in seen:
                seen[raw] = Mask(base.numpy() & keep[b].reshape(1, -1),
                                 source=f"{base.source} & attention_mask row {b}")
            rows.append(seen[raw])
        hit = _remember(_kept_rows, key, rows)
    return hit


def _with_pattern(module, query, key, attention_mask, is_causal):
    """The mask sdpa gets on a fallback: the model's mask with use_mask's pattern applied, so
    a fallback is never silently dense. Returns (mask, is_causal)."""
    sparse = getattr(module, "_stof_mask", None)
    if sparse is None:
        return attention_mask, is_causal
    Lq, L = query.shape[2], key.shape[2]
    if attention_mask is None:
        causal = is_causal if is_causal is not None else getattr(module, "is_causal", True)
        return _host_mask(sparse, causal, Lq, L).to_tensor(query.device)[None, None], False
    pattern = torch.from_numpy(_pattern_rows(sparse, Lq, L)).to(query.device)
    if attention_mask.dtype == torch.bool:
        return attention_mask[..., :L] & pattern, False
    return attention_mask[..., :L].masked_fill(~pattern, float("-inf")), False


def _fallback(reason, module, query, key, value, attention_mask, is_causal=None, **kwargs):
    warn_once(("fallback", reason), f"stof attention: {reason}: running sdpa instead",
              stacklevel=3)
    from transformers.integrations.sdpa_attention import sdpa_attention_forward
    mask, causal = _with_pattern(module, query, key, attention_mask, is_causal)
    return sdpa_attention_forward(module, query, key, value, mask, is_causal=causal, **kwargs)


def _unsupported(module, query, key, attention_mask, dropout, kwargs):
    d = query.shape[-1]
    if not query.is_cuda:
        return f"tensors on {query.device} (the kernels need CUDA)"
    if query.dtype == torch.bfloat16:
        if torch.cuda.get_device_capability(query.device) != (9, 0):
            return f"dtype {query.dtype} on {torch.cuda.get_device_name(query.device)} (bf16 " \
                   f"runs on the Hopper kernel only, sm_90)"
    elif query.dtype != torch.float16:
        return f"dtype {query.dtype} (the kernels take fp16, and bf16 on sm_90)"
    if d not in (64, 128):
        if not supported_head_dim(d):
            return f"head_dim {d} (the kernels support multiples of 8 up to 256)"
        if torch.cuda.get_device_capability(query.device) != (9, 0):
            return f"head_dim {d} on {torch.cuda.get_device_name(query.device)} (head sizes " \
                   f"other than 64 and 128 run on the Hopper kernel only, sm_90)"
    if dropout and module.training:
        return f"attention dropout {dropout} in training mode"
    if kwargs.get("output_attentions") or getattr(getattr(module, "config", None),
                                                   "output_attentions", False):
        return "attention weights requested (output_attentions)"
    grouped = query.shape[2] != key.shape[2] or query.shape[1] != key.shape[1]
    if grouped and torch.cuda.get_device_capability(query.device) != (9, 0):
        return (f"{query.shape[1]} query heads over {key.shape[1]} key heads, query length "
                f"{query.shape[2]} over key length {key.shape[2]} on "
                f"{torch.cuda.get_device_name(query.device)} (grouped heads and KV caches run "
                f"on the Hopper kernel only, sm_90)")
    if query.shape[1] % key.shape[1] != 0:
        return f"{query.shape[1]} query heads over {key.shape[1]} key heads (not a multiple)"
    if query.shape[2] > key.shape[2]:
        return f"query length {query.shape[2]} > key length {key.shape[2]}"
    Lq, Lk = query.shape[2], key.shape[2]
    if Lk > _MAX_SIDE or Lq * Lk > _MAX_CELLS:
        return (f"query length {Lq} over key length {Lk} (a mask holds at most "
                f"{_MAX_SIDE} keys and {_MAX_SQUARE} x {_MAX_SQUARE} cells)")
    if attention_mask is not None and attention_mask.dtype != torch.bool:
        return f"an additive {attention_mask.dtype} attention mask (e.g. a position bias)"
    # Arguments the kernels cannot apply, passed beside the mask: T5 gives its relative position
    # bias as `position_bias` with no mask at all (seen with transformers 5 on the GPU machine),
    # and a model may pass a sliding window, a logit softcap or attention sinks the same way.
    for name, value in kwargs.items():
        if value is None or name in _HARMLESS:
            continue
        if torch.is_tensor(value):
            return f"an extra tensor argument '{name}' (e.g. T5's position_bias) the kernels " \
                   f"cannot apply"
        if name == "sliding_window" and (attention_mask is None or
                                         attention_mask.dtype == torch.bool):
            continue  # in the boolean mask transformers built, or applied here (_host_mask)
        if name in ("sliding_window", "softcap", "s_aux", "sinks"):
            return f"'{name}' = {value} (not applied by the kernels; give the pattern with " \
                   f"stof.hf.use_mask)"
    return None


def stof_attention_forward(module, query, key, value, attention_mask, dropout=0.0,
                           scaling=None, is_causal=None, **kwargs):
    """The AttentionInterface function: query [B, H, L_q, d], key and value [B, H_kv, L_k, d];
    returns ([B, L_q, H, d], None) like sdpa_attention_forward."""
    reason = _unsupported(module, query, key, attention_mask, dropout, kwargs)
    if reason is not None:
        return _fallback(reason, module, query, key, value, attention_mask, dropout=dropout,
                         scaling=scaling, is_causal=is_causal, **kwargs)
    B, H, Lq, d = query.shape
    L = key.shape[2]
    sparse = getattr(module, "_stof_mask", None)
    choice = getattr(module, "_stof_choice", None) or ("auto", 0, 0, 0)
    if key.shape[1] != H or Lq != L:
        choice = ("auto", 0, 0, 0)  # a plan's choice is for its own square shape
    q, k, v = query, key.to(query.dtype), value.to(query.dtype)
    s = scaling if scaling is not None else d ** -0.5
    kernel, bm, bn, nw = choice
    # As sdpa_attention_forward decides without a mask: the argument, else the layer's
    # is_causal (True when the layer does not say).
    causal = is_causal if is_causal is not None else getattr(module, "is_causal", True)
    key_ranges = None
    if attention_mask is None:
        rows = [_host_mask(sparse, causal, Lq, L, kwargs.get("sliding_window"))]
    else:
        rows, key_ranges = _padding_rows(attention_mask, sparse, Lq, L, causal,
                                         kwargs.get("sliding_window"))
    # A decode step over an unpadded cache attends every key: its plan is prepared for the
    # cache's capacity (rounded up), so the steps that follow reuse it (stof.attention).
    window = kwargs.get("sliding_window")
    if Lq == 1 and sparse is None and (not window or window >= L) and key_ranges is None and \
            all(r is rows[0] for r in rows) and rows[0] is _host_mask(None, causal, 1, L, window):
        rows = [_host_mask(None, False, 1, -(-L // _DECODE_CAPACITY_STEP) * _DECODE_CAPACITY_STEP)]
    # One call when every batch row has the same mask (no padding, or equal padding).
    if key_ranges is not None and not takes_key_ranges(q, k, rows[0], "bhld", kernel,
                                                        (bm, bn, nw)):
        # The kernel chosen for this mask takes one mask for every row: one call per row.
        rows, key_ranges = _padding_rows(attention_mask, sparse, Lq, L, causal,
                                         kwargs.get("sliding_window"), ranges=False)
    if all(r is rows[0] for r in rows):
        # _padding_rows' per row keys: int32 [B, 2] ranges, or bool [B, L] kept keys.
        kept = key_ranges is not None and key_ranges.dtype == torch.bool
        if kept and key_ranges.shape[0] != B:  # a mask broadcast over the batch
            key_ranges = key_ranges.expand(B, -1).contiguous()
        out = attention(q, k, v, mask=rows[0], scale=s, kernel=kernel, _block=(bm, bn, nw),
                        key_ranges=None if kept else key_ranges,
                        key_mask=key_ranges if kept else None)
    elif _sets_usable(q.device):
        # Rows with different masks (packed documents, padding that is not one key range):
        # one launch over a mask per batch row (the Hopper kernel's own tile choice).
        hopper = kernel in ("auto", "block_wise") and int(nw) in (0, 5, 12)
        out = attention(q, k, v, mask=_row_set(rows, H), scale=s,
                        kernel=kernel if hopper else "auto",
                        _block=(bm, bn, nw) if hopper else (0, 0, 0))
    else:
        out = torch.cat([attention(q[b:b + 1], k[b:b + 1], v[b:b + 1], mask=rows[b], scale=s,
                                   kernel=kernel, _block=(bm, bn, nw))
                         for b in range(B)])
    return out.transpose(1, 2).contiguous(), None
