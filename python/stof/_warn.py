"""Warnings the package gives once per process and reason (warnings.warn): used by
stof.attention (bf16 off the Hopper kernel) and stof.hf (fallbacks to sdpa). Tests call reset()
to see a warning again."""

import threading
import warnings

_warned = set()
_lock = threading.Lock()


def warn_once(key, text, stacklevel=2):
    """Warn with `text` the first time `key` comes; `stacklevel` as warnings.warn's, counted from
    the caller of warn_once."""
    with _lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(text, stacklevel=stacklevel + 1)


def reset():
    with _lock:
        _warned.clear()
