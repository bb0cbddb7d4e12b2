"""numpy, imported where a mask first needs it, or a StofError naming the package and how to
install it (the CPU-side calls need numpy; importing stof does not). Used by mask.py and
_engine.py."""

from ._capi import StofError


def numpy():
    try:
        import numpy as np
    except ImportError as e:
        raise StofError(f"stof: numpy is not installed ({e}); masks need it: apt install "
                        f"python3-numpy (Debian) or pip install numpy") from None
    return np
