"""ctypes bindings of libstof_engine_capi.so (engine/capi/stof_engine_capi.h): the engine's
readers of mask files (PNG, NPY, JSON), generator specs and plans, the same functions the `stof`
CLI calls, so the package reads every file exactly as `stof` does, with the same limits and
messages (docs/robustness.md, "Reading files"). There is no second reader in Python.

Lookup: $STOF_ENGINE_LIB when set (an error if that file does not exist), else the build tree
of $STOF_CAPI_LIB when that is set (<build>/kernels/libstof_capi.so -> <build>/engine/), then
the repository's build/engine/ and build-nocuda/engine/. Every build makes it (CUDA or not). Opened on first use; importing this module loads nothing.
Used by mask.py (files, specs, the engine hash) and plan.py. Errors: MaskFileError and
PlanError (both StofError and ValueError) with the engine's message, which names the file.
"""

import ctypes
import json
import os
import threading

from . import _capi, _lookup
from ._capi import _REPO_ROOT, StofError
from ._numpy import numpy

ENV_VAR = "STOF_ENGINE_LIB"
LIB_NAME = "libstof_engine_capi.so"
BUILD_TREE_PATHS = [os.path.join(_REPO_ROOT, d, "engine", LIB_NAME)
                    for d in ("build", "build-nocuda")]
OK, ERR_INVALID, ERR_INTERNAL = 0, 1, 3  # STOF_ENGINE_* codes
_ERR_LEN = 4096


class MaskFileError(StofError, ValueError):
    """A mask file or spec that cannot be read; the message names it and the problem."""


class PlanError(StofError, ValueError):
    """A plan file that does not validate; the message names the file and the JSON path."""


def _candidates():
    capi = os.environ.get(_capi.ENV_VAR, "")
    beside = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(capi))), "engine",
                           LIB_NAME)] if capi else []
    return beside + BUILD_TREE_PATHS


def library_path():
    """Where libstof_engine_capi.so is loaded from; StofError naming every place looked at."""
    found = _lookup.find(ENV_VAR, _candidates())
    if found is None:
        raise StofError(f"{LIB_NAME} not found: {ENV_VAR} is not set and there is no "
                        f"{' or '.join(_candidates())}; mask files, specs and plans are read "
                        f"by the engine (build it: STOF_CUDA=OFF scripts/build build-nocuda)")
    return found


_lock = threading.Lock()
_lib = None
_p = ctypes.c_void_p
_pp = ctypes.POINTER(ctypes.c_void_p)
_i64 = ctypes.c_int64
_size = ctypes.c_size_t
_str = ctypes.c_char_p


def _declare(lib):
    sig = {
        "stof_engine_capi_version": (ctypes.c_int, []),
        "stof_engine_mask_load": (ctypes.c_int, [_str, _pp, _str, _size]),
        "stof_engine_mask_from_spec": (ctypes.c_int, [_str, _size, _str, _pp, _str, _size]),
        "stof_engine_mask_from_bytes": (ctypes.c_int, [_p, _i64, _i64, _pp, _str, _size]),
        "stof_engine_mask_rows": (_i64, [_p]),
        "stof_engine_mask_cols": (_i64, [_p]),
        "stof_engine_mask_copy_bytes": (ctypes.c_int, [_p, _p, _size, _str, _size]),
        "stof_engine_mask_hash": (ctypes.c_int, [_p, _str, _size, _str, _size]),
        "stof_engine_mask_spec_json": (_size, [_p, _str, _size]),
        "stof_engine_mask_free": (None, [_p]),
        "stof_engine_mask_save": (ctypes.c_int, [_p, _str, _str, _size]),
        "stof_engine_plan_load": (ctypes.c_int, [_str, _pp, _str, _size]),
        "stof_engine_plan_json": (_size, [_p, _str, _size]),
        "stof_engine_plan_mask": (ctypes.c_int, [_p, _pp, _str, _size]),
        "stof_engine_plan_free": (None, [_p]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    # Since C API version 3 and 4 (an older library still loads; the calls that need them say
    # so).
    later = {
        "stof_engine_mask_from_slices": (ctypes.c_int, [_i64, _i64, _p, _size, _pp, _str, _size]),
        "stof_engine_mask_from_column_intervals": (
            ctypes.c_int, [_i64, _i64, _p, _p, _p, _p, _pp, _str, _size]),
        "stof_engine_mask_spec_last_rows": (
            ctypes.c_int, [_str, _size, _str, _i64, _pp, _str, _size]),
    }
    for name, (res, args) in later.items():
        f = getattr(lib, name, None)
        if f is not None:
            f.restype = res
            f.argtypes = args


def load():
    """The loaded library (opened once)."""
    global _lib
    with _lock:
        if _lib is None:
            _lib = _capi.open_declared(library_path(), _declare, "the STOF engine library")
        return _lib


def version():
    return load().stof_engine_capi_version()


def _check(code, err, error_class):
    if code != OK:
        text = err.value.decode("utf-8", "replace")
        raise (error_class if code == ERR_INVALID else StofError)(text, code)


def _text(fn, handle):
    """A NUL-terminated text of a sizing call (stof_engine_*_json): None when it gives 0."""
    n = fn(handle, None, 0)
    if n == 0:
        return None
    buf = ctypes.create_string_buffer(n)
    fn(handle, buf, n)
    return buf.value.decode("utf-8")


class _Handle:
    """An owned stof_engine_mask or stof_engine_plan pointer, freed once."""

    def __init__(self, free):
        self.ptr = ctypes.c_void_p()
        self._free = free

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.ptr:
            self._free(self.ptr)
            self.ptr = ctypes.c_void_p()


def _mask_out(lib, h):
    """(bool [rows, cols] array, spec dict or None, engine hash) of a mask handle."""
    np = numpy()
    rows, cols = lib.stof_engine_mask_rows(h.ptr), lib.stof_engine_mask_cols(h.ptr)
    out = np.empty((rows, cols), dtype=np.uint8)
    err = ctypes.create_string_buffer(_ERR_LEN)
    _check(lib.stof_engine_mask_copy_bytes(h.ptr, out.ctypes.data, out.size, err, _ERR_LEN), err,
           StofError)
    digest = ctypes.create_string_buffer(17)
    _check(lib.stof_engine_mask_hash(h.ptr, digest, 17, err, _ERR_LEN), err, StofError)
    spec = _text(lib.stof_engine_mask_spec_json, h.ptr)
    return out.view(bool), (json.loads(spec) if spec is not None else None), \
        digest.value.decode()


def load_mask_file(path):
    """A .png / .npy / .json mask file -> (bool array, spec dict or None, engine hash)."""
    lib = load()
    err = ctypes.create_string_buffer(_ERR_LEN)
    with _Handle(lib.stof_engine_mask_free) as h:
        _check(lib.stof_engine_mask_load(os.fsencode(path), ctypes.byref(h.ptr), err, _ERR_LEN),
               err, MaskFileError)
        return _mask_out(lib, h)


def _spec_text(spec, what):
    """A spec dict as the JSON bytes the engine reads; MaskFileError naming `what` otherwise."""
    try:
        return json.dumps(spec, allow_nan=False).encode()
    except (TypeError, ValueError) as e:
        raise MaskFileError(f"{what}: not a JSON spec: {e}") from None


def mask_from_spec(spec, what):
    """A generator spec dict -> (bool array, spec dict, engine hash), generated by the engine."""
    text = _spec_text(spec, what)
    lib = load()
    err = ctypes.create_string_buffer(_ERR_LEN)
    with _Handle(lib.stof_engine_mask_free) as h:
        _check(lib.stof_engine_mask_from_spec(text, len(text), what.encode(), ctypes.byref(h.ptr),
                                              err, _ERR_LEN), err, MaskFileError)
        return _mask_out(lib, h)


def mask_spec_last_rows(spec, rows, what):
    """A generator spec dict and a row count -> (bool [rows, seq_len] array, None, engine hash):
    the spec's last rows (a KV cache's newest query rows) built by the engine from its row runs,
    so seq_len may pass a square mask's 32768 (up to 262144 keys, rows x seq_len <= 32768^2)."""
    text = _spec_text(spec, what)
    lib = load()
    _needs(lib, 4, "a spec's last rows (Mask.from_spec with q_len)")
    err = ctypes.create_string_buffer(_ERR_LEN)
    with _Handle(lib.stof_engine_mask_free) as h:
        _check(lib.stof_engine_mask_spec_last_rows(text, len(text), what.encode(), int(rows),
                                                   ctypes.byref(h.ptr), err, _ERR_LEN),
               err, MaskFileError)
        return _mask_out(lib, h)


def _needs(lib, version_wanted, what):
    v = lib.stof_engine_capi_version()
    if v < version_wanted:
        raise StofError(f"{what} needs the engine C API version {version_wanted} "
                        f"(this library: {v}); rebuild the project")


def mask_from_slices(rows, cols, slices):
    """An int64 [n, 5] array (q_begin, q_end, k_begin, k_end, kind 0..3) -> (bool array, None,
    engine hash), built by the engine (engine/mask/mask_slices.h)."""
    np = numpy()
    lib = load()
    _needs(lib, 3, "Mask.from_slices")
    a = np.ascontiguousarray(slices, dtype=np.int64).reshape(-1, 5)
    err = ctypes.create_string_buffer(_ERR_LEN)
    with _Handle(lib.stof_engine_mask_free) as h:
        _check(lib.stof_engine_mask_from_slices(int(rows), int(cols), a.ctypes.data, a.shape[0],
                                                ctypes.byref(h.ptr), err, _ERR_LEN),
               err, StofError)
        return _mask_out(lib, h)


def mask_from_column_intervals(rows, cols, lower_begin, lower_end, upper_begin, upper_end):
    """Four int64 [cols] arrays of masked row ranges per key column -> (bool array, None,
    engine hash), built by the engine."""
    np = numpy()
    lib = load()
    _needs(lib, 3, "Mask.from_intervals")
    arrays = [np.ascontiguousarray(v, dtype=np.int64).reshape(-1)
              for v in (lower_begin, lower_end, upper_begin, upper_end)]
    for name, v in zip(("lower_begin", "lower_end", "upper_begin", "upper_end"), arrays):
        if v.shape[0] != int(cols):
            raise StofError(f"column intervals: {name}: has {v.shape[0]} values, expected one "
                            f"per column ({int(cols)})")
    err = ctypes.create_string_buffer(_ERR_LEN)
    with _Handle(lib.stof_engine_mask_free) as h:
        _check(lib.stof_engine_mask_from_column_intervals(
            int(rows), int(cols), *(v.ctypes.data for v in arrays), ctypes.byref(h.ptr), err,
            _ERR_LEN), err, StofError)
        return _mask_out(lib, h)


def mask_hash(bool_array):
    """The engine's Mask::HashHex of a C-contiguous bool [rows, cols] array."""
    lib = load()
    a = bool_array.view("u1")
    err = ctypes.create_string_buffer(_ERR_LEN)
    with _Handle(lib.stof_engine_mask_free) as h:
        _check(lib.stof_engine_mask_from_bytes(a.ctypes.data, a.shape[0], a.shape[1],
                                               ctypes.byref(h.ptr), err, _ERR_LEN),
               err, StofError)
        digest = ctypes.create_string_buffer(17)
        _check(lib.stof_engine_mask_hash(h.ptr, digest, 17, err, _ERR_LEN), err, StofError)
        return digest.value.decode()


def save_mask(bool_array, spec, path):
    """Writes a mask file as `stof mask --out` does (the engine's writer; .json keeps `spec`,
    the spec of a mask generated from one, when given)."""
    lib = load()
    err = ctypes.create_string_buffer(_ERR_LEN)
    with _Handle(lib.stof_engine_mask_free) as h:
        if spec is not None:
            text = json.dumps(spec, allow_nan=False).encode()
            _check(lib.stof_engine_mask_from_spec(text, len(text), b"spec", ctypes.byref(h.ptr),
                                                  err, _ERR_LEN), err, MaskFileError)
        else:
            a = bool_array.view("u1")
            _check(lib.stof_engine_mask_from_bytes(a.ctypes.data, a.shape[0], a.shape[1],
                                                   ctypes.byref(h.ptr), err, _ERR_LEN),
                   err, StofError)
        _check(lib.stof_engine_mask_save(h.ptr, os.fsencode(path), err, _ERR_LEN), err,
               MaskFileError)


class LoadedPlan:
    """A plan read and validated by the engine: `doc` (the JSON the engine writes for it, keys
    in schema order) and mask() (its mask regenerated or unpacked and hash-checked)."""

    def __init__(self, path):
        lib = self._lib = load()
        self.path = str(path)
        err = ctypes.create_string_buffer(_ERR_LEN)
        self._h = _Handle(lib.stof_engine_plan_free)
        _check(lib.stof_engine_plan_load(os.fsencode(path), ctypes.byref(self._h.ptr), err,
                                         _ERR_LEN), err, PlanError)
        self.doc = json.loads(_text(lib.stof_engine_plan_json, self._h.ptr))

    def mask(self):
        """(bool array, spec dict or None, engine hash); PlanError on a hash mismatch."""
        lib = self._lib
        err = ctypes.create_string_buffer(_ERR_LEN)
        with _Handle(lib.stof_engine_mask_free) as m:
            _check(lib.stof_engine_plan_mask(self._h.ptr, ctypes.byref(m.ptr), err, _ERR_LEN), err,
                   PlanError)
            return _mask_out(lib, m)

    def __del__(self):
        h = getattr(self, "_h", None)
        if h is not None:
            h.__exit__()
