"""The compiled eager path (python/stof/csrc/eager_launch.cpp, module stof_eager): building it,
finding it, and saying why it is not used.

A repeated eager stof.attention call costs about twice as much host time through the Python
bound path as through this module (docs/benchmarks.md, "Python package"). It is built once per
machine, torch and Python version with torch.utils.cpp_extension (a C++ compiler, ninja and the
CUDA toolkit's headers; about a minute) by

    python -m stof.extension            # builds if needed, then says where it is
    python -m stof.extension --status   # only says

into $STOF_EXT_DIR, else ~/.cache/stof/ext/<tag> ($XDG_CACHE_HOME honoured), where the tag is a
digest of the source, ABI, torch, CUDA and Python versions: a new torch or source gets a new
folder, never a stale module. Importing stof loads a built module and never builds one;
STOF_EXTENSION=0 keeps it unused. Used by _eager.py (load) and the user (build, status).
"""

import hashlib
import os
import sys

NAME = "stof_eager"
ABI = 1  # the module's ABI constant: both sides change together
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "csrc", "eager_launch.cpp")
ENV_OFF = "STOF_EXTENSION"
ENV_DIR = "STOF_EXT_DIR"

_status = "not looked for yet"


def disabled():
    return os.environ.get(ENV_OFF, "").strip().lower() in ("0", "off", "no", "false")


def tag():
    """The digest that names the build folder: the source, ABI, torch / CUDA / Python versions."""
    import torch
    h = hashlib.sha256()
    with open(SOURCE, "rb") as f:
        h.update(f.read())
    h.update(f"{ABI}|{torch.__version__}|{torch.version.cuda}|{sys.version}".encode())
    return h.hexdigest()[:16]


def build_dir():
    """Where the module is built and looked for."""
    env = os.environ.get(ENV_DIR, "")
    if env:
        return env
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "stof", "ext", tag())


def module_path():
    return os.path.join(build_dir(), NAME + ".so")


def _import(path):
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.ExtensionFileLoader(NAME, path)
    spec = importlib.util.spec_from_file_location(NAME, path, loader=loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    if getattr(mod, "ABI", None) != ABI:
        raise ImportError(f"{path}: ABI {getattr(mod, 'ABI', None)}, this package expects {ABI}")
    return mod


def load():
    """The built module, or None (status() says why). Never builds; never raises."""
    global _status
    if disabled():
        _status = f"disabled ({ENV_OFF}={os.environ.get(ENV_OFF)})"
        return None
    try:
        path = module_path()
    except Exception as e:  # no torch, an unreadable source
        _status = f"unavailable: {type(e).__name__}: {e}"
        return None
    if not os.path.isfile(path):
        _status = f"not built ({path} missing; python -m stof.extension builds it)"
        return None
    try:
        mod = _import(path)
    except Exception as e:
        _status = f"failed to load {path}: {type(e).__name__}: {e} (python -m stof.extension " \
                  f"rebuilds it)"
        return None
    _status = f"loaded from {path}"
    return mod


def note(text):
    """Records why a loaded module is not used (_eager.py), for status()."""
    global _status
    _status = text


def can_build():
    """(True, "") where torch.utils.cpp_extension can build the module here, else (False,
    the missing piece)."""
    try:
        import torch  # noqa: F401
        from torch.utils import cpp_extension
    except ImportError as e:
        return False, f"needs PyTorch ({e})"
    if not cpp_extension.is_ninja_available():
        return False, "needs ninja (apt install ninja-build, or pip install ninja)"
    if cpp_extension.CUDA_HOME is None:
        return False, "needs the CUDA toolkit's headers (set CUDA_HOME)"
    import shutil
    cxx = os.environ.get("CXX", "c++")
    if shutil.which(cxx) is None:
        return False, f"needs a C++ compiler ({cxx} not on PATH; set CXX)"
    return True, ""


def build(verbose=True):
    """Builds the module (when its folder has no up-to-date one) and returns it. Raises
    StofError naming what is missing or the compiler's failure."""
    global _status
    from ._capi import StofError
    ok, why = can_build()
    if not ok:
        raise StofError(f"stof.extension: cannot build {NAME}: {why}")
    from torch.utils import cpp_extension
    path = build_dir()
    os.makedirs(path, exist_ok=True)
    if verbose:
        print(f"stof.extension: building {NAME} in {path} (about a minute the first time)",
              file=sys.stderr, flush=True)
    try:
        mod = cpp_extension.load(name=NAME, sources=[SOURCE], build_directory=path,
                                 extra_cflags=["-O2"], with_cuda=True, verbose=verbose)
    except Exception as e:
        _status = f"build failed: {e}"
        raise StofError(f"stof.extension: building {NAME} in {path} failed: {e}") from e
    if getattr(mod, "ABI", None) != ABI:
        raise StofError(f"stof.extension: {path} holds a module of ABI "
                        f"{getattr(mod, 'ABI', None)}, expected {ABI}")
    _status = f"loaded from {module_path()}"
    return mod


def status():
    """Whether the compiled eager path is in use, and if not, why."""
    eager = sys.modules.get(__package__ + "._eager")
    if eager is not None and eager.call_compiled is not None:
        return f"in use ({_status})"
    return _status


def main(argv=None):
    import argparse
    p = argparse.ArgumentParser(prog="python -m stof.extension",
                                description="Build (once) or check the compiled eager path of "
                                            "stof.attention.")
    p.add_argument("--status", action="store_true", help="only say whether it is built")
    p.add_argument("--quiet", action="store_true", help="no compiler output")
    args = p.parse_args(argv)
    if args.status or disabled():
        load()
        print(f"{NAME}: {_status}")
        return 0 if _status.startswith("loaded") else 1
    from ._capi import StofError
    try:
        build(verbose=not args.quiet)
    except StofError as e:
        print(e, file=sys.stderr)
        return 1
    print(f"{NAME}: {_status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
