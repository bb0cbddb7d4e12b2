"""The eager hot path of stof.attention (attention.py uses it; nothing else does).

Holds: direct_ok (may a call skip the dispatcher), signature (everything a call's launch
depends on but the tensors' addresses), Launch (the output allocation and one bound C call),
and the launches remembered per signature. An eager call whose signature was seen before
costs a few tensor attribute reads, one torch.empty_like and one ctypes call; the checks, the mask
and plan lookups and the stride work of the first call are not repeated. Where the compiled
module is built (extension.py), the launches are remembered there too and attention() calls
its `call` first (call_compiled): signature, lookup, allocation and launch in C++. Why: every
microsecond of Python per call is GPU time lost at small shapes (docs/benchmarks.md,
"Python package", the bridge).
"""

import functools

import torch

from . import _capi
from .mask import Mask

_T = torch.Tensor
MAX_LAUNCHES = 512  # a model has a handful of signatures; a loop over many shapes starts over
_launches = {}
enabled = True  # off: every call takes the full path (python_full in python/bench/hf_compare.py)


# The mode queries direct_ok asks (and the compiled module, given them at setup); a torch
# without them leaves _modes_active None.
_dispatch_depth = getattr(torch._C, "_len_torch_dispatch_stack", None)
_function_mode = getattr(torch._C, "_is_torch_function_mode_enabled", None)
_modes_active = None if _dispatch_depth is None or _function_mode is None else \
    (lambda: _dispatch_depth() > 0 or _function_mode())

_ext = None            # the stof_eager module, set up
_ext_looked = False    # whether extension.load() was asked (at the first remembered launch)
call_compiled = None   # _ext.call once set up: attention() tries it first; None = Python only


def use_extension(module):
    """Takes `module` (a built stof_eager, or None for none) for the launches remembered from now
    on; the ones remembered so far are forgotten. Needs the library loaded (its stof_run_bound).
    Called at the first remembered launch with extension.load()'s module, and by tests and
    benchmarks."""
    global _ext, _ext_looked, call_compiled
    clear()
    _ext_looked = True
    _ext, call_compiled = None, None
    if module is None:
        return
    if _modes_active is None:
        from . import extension
        extension.note("unused: this torch lacks the mode queries the compiled path asks")
        return
    module.setup(torch.Tensor, Mask, _dispatch_depth, _function_mode,
                 _capi.run_bound_address())
    _ext, call_compiled = module, module.call


def direct_ok(q, k, v):
    """Whether a call may skip the dispatcher: not traced (torch.compile goes through the
    registered op), plain tensors, no dispatch or torch-function mode active (a FlopCounterMode,
    a tracer or FakeTensorMode must see stof::attention), and nothing for autograd to record
    (the op has no backward; a tensor that needs grad meets the dispatcher's own handling). The
    dispatcher's Python path costs tens of microseconds per eager call (docs/benchmarks.md,
    "Python package"); the direct call runs the same code and launch, so the bits are the same.
    A torch without the mode queries always takes the dispatcher."""
    if torch.compiler.is_compiling() or _modes_active is None or _modes_active():
        return False
    if type(q) is not _T or type(k) is not _T or type(v) is not _T:
        return False
    return not (torch.is_grad_enabled() and (q.requires_grad or k.requires_grad
                                             or v.requires_grad))


_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def current_stream(device_index):
    """The current CUDA stream of a device as an int: torch's raw accessor (what Triton's
    launcher uses) where this torch has it, else the public API."""
    if _raw_stream is not None:
        return _raw_stream(device_index)
    return torch.cuda.current_stream(device_index).cuda_stream


def signature(q, k, v, mask_key, layout, scale, kernel, block):
    """What a call's checks, plan and strides depend on: two calls with one signature pass
    the same checks and run the same plan on the same strides (devices as indices, -1 for
    the CPU). The addresses are not in it: alignment is checked per call."""
    return (mask_key, layout, scale, kernel, block, q.shape, q.stride(), k.shape, k.stride(),
            v.shape, v.stride(), q.dtype, k.dtype, v.dtype, q.get_device(), k.get_device(),
            v.get_device())


# The output, packed in q's layout, like q: torch.empty_like costs less than half of
# torch.empty(shape, dtype=, device=) per call (measured with primitives.py: docs/benchmarks.md,
# "Python package: Hugging Face backends and the bridge (issue 18)", the fourth GPU run).
_empty_packed = functools.partial(torch.empty_like, memory_format=torch.contiguous_format)


class Launch:
    """One signature's call: the output's allocation and the bound C call (whose plan stays
    open until stof.clear_cache)."""

    __slots__ = ("run", "alloc", "index")

    def __init__(self, run, q):
        self.run = run
        self.alloc = torch.empty_like if q.is_contiguous() else _empty_packed
        self.index = q.get_device()

    def __call__(self, q, k, v):
        """The output, or None when an address is not 16-byte aligned (the full path copies)."""
        qp, kp, vp = q.data_ptr(), k.data_ptr(), v.data_ptr()
        if (qp | kp | vp) & 15:
            return None
        out = self.alloc(q)
        self.run(qp, kp, vp, out.data_ptr(), current_stream(self.index))
        return out


def find(sig):
    return _launches.get(sig)


def remember(sig, launch, args):
    """Keeps `launch` for calls of signature `sig`; `args` are the call's arguments as
    attention() got them (q, k, v, mask, layout, scale, kernel, block), from which the compiled
    module works out the same signature."""
    if not _ext_looked:
        from . import extension  # here, not atop: `python -m stof.extension` imports stof first
        try:
            use_extension(extension.load())
        except Exception as e:  # loads but cannot be set up: the Python path, and status says
            use_extension(None)
            extension.note(f"unused: setting it up failed: {type(e).__name__}: {e}")
    if len(_launches) >= MAX_LAUNCHES:
        clear()
    _launches[sig] = launch
    if _ext is not None:
        _ext.remember(*args, launch.run)


def clear():
    _launches.clear()
    if _ext is not None:
        _ext.clear()
