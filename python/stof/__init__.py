"""stof: STOF's sparse attention kernels for PyTorch (thin over libstof_capi.so via ctypes;
mask files, specs and plans are read by the engine through libstof_engine_capi.so).

    stof.Mask            masks: numpy / torch / files / specs / FlexAttention  (mask.py)
    stof.MaskSet         masks per batch row / head for one call               (mask_set.py)
    stof.load_plan       plan JSON, validated; mask, workload, kernel choice    (plan.py)
    stof.attention       the stof::attention custom op (needs torch + CUDA)     (attention.py)
    stof.clear_cache     releases the prepared layouts                          (attention.py)
    stof.hf              Hugging Face attention backend "stof"                  (hf.py)
    stof.StofError       every error this package raises

torch is imported with the package when it is installed (the custom op registers then);
without it masks and plans work and attention / clear_cache raise StofError. Masks from files
or specs, a Mask's hash_hex and plans need libstof_engine_capi.so, which every build makes. stof.hf is
imported on first use. See python/README.md.
"""

from ._capi import StofError, library_path
from ._engine import MaskFileError, PlanError
from .mask import Mask
from .mask_set import MaskSet
from .plan import Plan, load_plan

__all__ = ["StofError", "MaskFileError", "PlanError", "Mask", "MaskSet", "Plan", "load_plan",
           "attention", "clear_cache", "library_path", "hf"]


try:
    import torch as _torch  # noqa: F401
except ImportError:
    _torch = None

if _torch is not None:
    # Binds the names to the functions (a later `import stof.attention` finds the module in
    # sys.modules and leaves these names alone).
    from .attention import attention, cache_info, clear_cache
else:
    def _no_torch(*args, **kwargs):
        raise StofError("stof.attention needs PyTorch (pip install torch); masks and plans work "
                        "without it")
    attention = clear_cache = cache_info = _no_torch


def __getattr__(name):
    if name == "hf":
        import importlib
        return importlib.import_module(".hf", __name__)
    raise AttributeError(f"module 'stof' has no attribute {name!r}")
