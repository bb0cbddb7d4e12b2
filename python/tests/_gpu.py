"""Shared by the GPU tests (test_gpu_*.py): the skip decision (torch, CUDA, libstof_capi.so),
random fp16 inputs, the fp32 reference and its tolerance. Imports torch only when present."""

import math
import unittest

import _util

OK, WHY = _util.have_torch_cuda()
if OK:
    import torch
    import stof
    try:
        stof.library_path()
    except stof.StofError as e:
        OK, WHY = False, str(e)

skip_unless_gpu = unittest.skipUnless(OK, f"GPU tests skipped: {WHY}")
TOL = 1e-2  # max abs error of fp16 outputs (values of order 1) against fp32


def inputs(B, H, L, d, layout="bhld", seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    shape = (B, H, L, d) if layout == "bhld" else (B, L, H, d)
    return [torch.randn(shape, generator=g, device="cuda", dtype=torch.float16)
            for _ in range(3)]


def reference(q, k, v, mask, layout="bhld", scale=None):
    """fp32 masked attention on [B, H, L, d] (or [B, L, H, d]); rows with nothing attended
    give zeros, as the kernels do. mask: bool [L, L] tensor."""
    if layout == "blhd":
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    s = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    scores = torch.matmul(q.float(), k.float().transpose(-2, -1)) * s
    scores = scores.masked_fill(~mask.to(q.device), float("-inf"))
    p = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    out = torch.matmul(p, v.float())
    return out.transpose(1, 2) if layout == "blhd" else out


def max_err(a, b):
    return float((a.float() - b.float()).abs().max().item())
