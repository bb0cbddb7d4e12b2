"""ctypes bindings of libstof_capi.so (kernels/capi/stof_capi.h) and its error handling.

Holds: where the library is looked up (STOF_CAPI_LIB, then the build tree), loading it once,
the argument types of every C function, StofError (a nonzero code with the library's message),
PreparedPlan (an owned stof_plan handle) and BoundViews (an owned stof_bound: one call shape
of a plan). Used by attention.py; nothing else touches ctypes.
Importing this module loads nothing: the library is opened on first use, so the CPU-only parts
of the package (masks, plans) work without it.
"""

import ctypes
import os
import threading
import weakref

ENV_VAR = "STOF_CAPI_LIB"
# Relative to the repository root (python/stof/_capi.py -> ../../).
_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD_TREE_PATH = os.path.join(_REPO_ROOT, "build", "kernels", "libstof_capi.so")

# The C API's kernel numbers (stof_capi.h).
KERNELS = {"auto": 0, "row_wise": 1, "block_wise": 2, "native": 3, "sd": 4, "sdf": 5}
KERNEL_NAMES = {v: k for k, v in KERNELS.items()}
DTYPES = {"f16": 0, "bf16": 1}  # STOF_DTYPE_* (C API version 4)
_ERR_LEN = 1024


class StofError(RuntimeError):
    """A failure reported by libstof_capi.so (its message), or the library not being found."""

    def __init__(self, message, code=None):
        super().__init__(message)
        self.code = code


def library_path():
    """The path libstof_capi.so is loaded from: $STOF_CAPI_LIB when set (it must exist), else
    the build tree's build/kernels/libstof_capi.so. Raises StofError naming both places."""
    env = os.environ.get(ENV_VAR, "")
    if env:
        if not os.path.isfile(env):
            raise StofError(f"{ENV_VAR}={env}: no such file (unset it to use the build tree's "
                            f"{BUILD_TREE_PATH})")
        return env
    if os.path.isfile(BUILD_TREE_PATH):
        return BUILD_TREE_PATH
    raise StofError(f"libstof_capi.so not found: {ENV_VAR} is not set and the build tree has no "
                    f"{BUILD_TREE_PATH} (build the CUDA tree: scripts/build, or set {ENV_VAR} "
                    f"to the library's path)")


_lock = threading.Lock()
_lib = None

_i64 = ctypes.c_int64
_p = ctypes.c_void_p
_i64p = ctypes.POINTER(ctypes.c_int64)


def _declare(lib):
    lib.stof_capi_version.restype = ctypes.c_int
    lib.stof_capi_version.argtypes = []
    lib.stof_prepare.restype = ctypes.c_int
    lib.stof_prepare.argtypes = [_p, _i64, _i64, _i64, _i64, ctypes.c_int, _i64, _i64, _i64,
                                 ctypes.c_int, ctypes.POINTER(_p), ctypes.c_char_p,
                                 ctypes.c_size_t]
    lib.stof_run.restype = ctypes.c_int
    lib.stof_run.argtypes = [_p, _p, _p, _p, _p, _p, ctypes.c_char_p, ctypes.c_size_t]
    lib.stof_choice.restype = ctypes.c_int
    lib.stof_choice.argtypes = [_p, ctypes.POINTER(ctypes.c_int), _i64p, _i64p, _i64p,
                                ctypes.POINTER(ctypes.c_int), ctypes.c_char_p, ctypes.c_size_t]
    lib.stof_release.restype = None
    lib.stof_release.argtypes = [_p]
    if lib.stof_capi_version() >= 3:
        lib.stof_run_views.restype = ctypes.c_int
        lib.stof_run_views.argtypes = [_p, _p, _p, _p, _p, _i64, _i64, _i64p, _i64p, _i64p,
                                       ctypes.c_float, _p, ctypes.c_char_p, ctypes.c_size_t]
    if lib.stof_capi_version() >= 5:
        lib.stof_bind_views.restype = ctypes.c_int
        lib.stof_bind_views.argtypes = [_p, _i64, _i64, _i64p, _i64p, _i64p, ctypes.c_float,
                                        ctypes.POINTER(_p), ctypes.c_char_p, ctypes.c_size_t]
        lib.stof_run_bound.restype = ctypes.c_int
        lib.stof_run_bound.argtypes = [_p, _p, _p, _p, _p, _p, ctypes.c_char_p, ctypes.c_size_t]
        lib.stof_bound_release.restype = None
        lib.stof_bound_release.argtypes = [_p]
    if lib.stof_capi_version() >= 4:
        lib.stof_prepare_dtype.restype = ctypes.c_int
        lib.stof_prepare_dtype.argtypes = [_p, _i64, _i64, _i64, _i64, ctypes.c_int,
                                           ctypes.c_int, _i64, _i64, _i64, ctypes.c_int,
                                           ctypes.POINTER(_p), ctypes.c_char_p, ctypes.c_size_t]
    if lib.stof_capi_version() >= 7:
        lib.stof_run_bound_ranges.restype = ctypes.c_int
        lib.stof_run_bound_ranges.argtypes = [_p, _p, _p, _p, _p, _p, _p, ctypes.c_char_p,
                                              ctypes.c_size_t]
    if lib.stof_capi_version() >= 8:
        lib.stof_run_bound_keys.restype = ctypes.c_int
        lib.stof_run_bound_keys.argtypes = [_p, _p, _p, _p, _p, _p, _p, _i64, _p,
                                            ctypes.c_char_p, ctypes.c_size_t]
        lib.stof_prepare_patterns.restype = ctypes.c_int
        lib.stof_prepare_patterns.argtypes = [_p, _i64, _p, _i64, _i64, _i64, _i64, _i64, _i64,
                                              ctypes.c_int, ctypes.c_int, _i64, _i64, _i64,
                                              ctypes.c_int, ctypes.POINTER(_p), ctypes.c_char_p,
                                              ctypes.c_size_t]
    if lib.stof_capi_version() >= 6:
        lib.stof_bind_views_keys.restype = ctypes.c_int
        lib.stof_bind_views_keys.argtypes = [_p, _i64, _i64, _i64, _i64p, _i64p, _i64p,
                                             ctypes.c_float, ctypes.POINTER(_p), ctypes.c_char_p,
                                             ctypes.c_size_t]
        lib.stof_prepare_shape.restype = ctypes.c_int
        lib.stof_prepare_shape.argtypes = [_p, _i64, _i64, _i64, _i64, _i64, _i64, ctypes.c_int,
                                           ctypes.c_int, _i64, _i64, _i64, ctypes.c_int,
                                           ctypes.POINTER(_p), ctypes.c_char_p, ctypes.c_size_t]


def open_declared(path, declare, what):
    """ctypes.CDLL(path) with declare(lib) run on it (this module's and _engine.py's
    libraries); a StofError naming the path when the dynamic loader refuses it (its reason
    kept) or a function is missing ("not <what>")."""
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise StofError(f"{path}: cannot load: {e}") from None
    try:
        declare(lib)
    except AttributeError as e:
        raise StofError(f"{path}: not {what}: {e}") from None
    return lib


def load():
    """The loaded library (opened once per process). Raises StofError when it is missing or
    cannot be opened (the dynamic loader's reason is kept)."""
    global _lib
    with _lock:
        if _lib is None:
            _lib = open_declared(library_path(), _declare, "a STOF C API library")
        return _lib


_version = None


def version():
    """The library's C API version (asked once: the hot path checks it per call)."""
    global _version
    if _version is None:
        _version = load().stof_capi_version()
    return _version


def has_views():
    """Whether the library takes strided views and a score scale (stof_run_views, version 3)."""
    return version() >= 3


def has_bound():
    """Whether the library binds a call once (stof_bind_views / stof_run_bound, version 5)."""
    return version() >= 5


def _require_bound(name):
    if not has_bound():
        raise StofError(f"{name}: the library is C API version {version()}, bound calls need "
                        f"version 5 (rebuild libstof_capi.so)")


def run_bound_address():
    """stof_run_bound's address in the loaded library (for the compiled eager module, which calls
    it directly). Needs C API version 5."""
    _require_bound("stof_run_bound")
    return ctypes.cast(load().stof_run_bound, ctypes.c_void_p).value


def _check(code, buf, what):
    if code != 0:
        text = buf.value.decode("utf-8", "replace") if buf is not None else ""
        raise StofError(f"{what}: {text or 'error code ' + str(code)}", code)


_I64x3 = ctypes.c_int64 * 3
_tls = threading.local()


def _strides(s):
    return None if s is None else _I64x3(*s)


def _error_buffer():
    """A message buffer for the calls of this thread (made once per thread, not per call: the
    C API writes it only when it returns an error)."""
    buf = getattr(_tls, "err", None)
    if buf is None:
        buf = _tls.err = ctypes.create_string_buffer(_ERR_LEN)
    return buf


class PreparedPlan:
    """A stof_plan: the kernel choice and device layout for one mask and one shape on one
    device: q and o [B, H, L_q, d], k and v [B, H_kv, L_k, d] (L_q = L_k = L and H_kv = H unless
    given). Released when garbage-collected or by close()."""

    def __init__(self, mask_bytes, B, H, L, d, device, kernel="auto", block_m=0, block_n=0,
                 num_warps=0, dtype="f16", kv_heads=None, q_len=None, pattern_of=None):
        """mask_bytes: a C-contiguous numpy uint8 array of L_q*L (nonzero = attend). dtype: "f16"
        or "bf16" (the Hopper kernel only; C API version 4). kv_heads (H_kv) and q_len (L_q):
        grouped key/value heads and another query length (C API version 6; the Hopper kernel
        only). pattern_of: None, or masks per batch row / head (C API version 8; the Hopper
        kernel only): int32 [B, H], the index of each (batch, query head)'s mask, mask_bytes
        then holding P masks of L_q*L bytes."""
        lib = load()
        if kernel not in KERNELS:
            raise StofError(f"kernel: expected one of {', '.join(KERNELS)}, got {kernel!r}")
        if dtype not in DTYPES:
            raise StofError(f"dtype: expected one of {', '.join(DTYPES)}, got {dtype!r}")
        if dtype != "f16" and version() < 4:
            raise StofError(f"dtype {dtype}: the library is C API version {version()}, bf16 "
                            f"needs version 4 (rebuild libstof_capi.so)")
        Hkv = H if kv_heads is None else int(kv_heads)
        Lq = L if q_len is None else int(q_len)
        shaped = Hkv != H or Lq != L
        if shaped and version() < 6:
            raise StofError(f"{H} query heads over {Hkv} key/value heads, L_q {Lq} over L_k {L}: "
                            f"the library is C API version {version()}, these shapes need "
                            f"version 6 (rebuild libstof_capi.so)")
        P = 1
        if pattern_of is not None:
            if version() < 8:
                raise StofError(f"masks per batch row / head: the library is C API version "
                                f"{version()}, they need version 8 (rebuild libstof_capi.so)")
            P = mask_bytes.size // max(Lq * L, 1)
            from ._numpy import numpy
            pattern_of = numpy().ascontiguousarray(pattern_of, dtype=numpy().int32)
            if pattern_of.size != B * H:
                raise StofError(f"pattern_of: expected {B}x{H} indices, got "
                                f"{pattern_of.shape}")
        if mask_bytes.size != P * Lq * L or not mask_bytes.flags["C_CONTIGUOUS"]:
            raise StofError(f"mask: expected {P}x{Lq}x{L} contiguous bytes, got "
                            f"{mask_bytes.shape}")
        self._lib = lib
        self._h = ctypes.c_void_p()
        self._bound = weakref.WeakSet()
        self.shape = (B, H, L, d)
        self.kv_heads, self.q_len = Hkv, Lq
        self.device = device
        err = ctypes.create_string_buffer(_ERR_LEN)
        self.dtype = dtype
        if pattern_of is not None:
            code = lib.stof_prepare_patterns(mask_bytes.ctypes.data, P, pattern_of.ctypes.data,
                                             B, H, Hkv, Lq, L, d, DTYPES[dtype], KERNELS[kernel],
                                             block_m, block_n, num_warps, device,
                                             ctypes.byref(self._h), err, _ERR_LEN)
        elif shaped:
            code = lib.stof_prepare_shape(mask_bytes.ctypes.data, B, H, Hkv, Lq, L, d,
                                          DTYPES[dtype], KERNELS[kernel], block_m, block_n,
                                          num_warps, device, ctypes.byref(self._h), err,
                                          _ERR_LEN)
        elif dtype == "f16":
            code = lib.stof_prepare(mask_bytes.ctypes.data, B, H, L, d, KERNELS[kernel], block_m,
                                    block_n, num_warps, device, ctypes.byref(self._h), err,
                                    _ERR_LEN)
        else:
            code = lib.stof_prepare_dtype(mask_bytes.ctypes.data, B, H, L, d, DTYPES[dtype],
                                          KERNELS[kernel], block_m, block_n, num_warps, device,
                                          ctypes.byref(self._h), err, _ERR_LEN)
        of = "" if dtype == "f16" else f", {dtype}"
        if shaped:
            of += f", H_kv={Hkv}, L_q={Lq}"
        if pattern_of is not None:
            of += f", {P} mask pattern(s)"
        _check(code, err, f"stof_prepare (B={B}, H={H}, L={L}, d={d}{of}, device {device})")
        self.kernel, self.block_m, self.block_n, self.num_warps, self.text = self._choice()

    def _choice(self):
        k, fb = ctypes.c_int(), ctypes.c_int()
        bm, bn, nw = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
        text = ctypes.create_string_buffer(_ERR_LEN)
        code = self._lib.stof_choice(self._h, ctypes.byref(k), ctypes.byref(bm),
                                     ctypes.byref(bn), ctypes.byref(nw), ctypes.byref(fb), text,
                                     _ERR_LEN)
        _check(code, text, "stof_choice")
        return (KERNEL_NAMES.get(k.value, str(k.value)), bm.value, bn.value, nw.value,
                text.value.decode("utf-8", "replace"))

    def run(self, q, k, v, o, stream):
        """Packed [B, H, L, d] operands (device addresses as ints), on `stream` (an int)."""
        err = _error_buffer()
        code = self._lib.stof_run(self._h, q, k, v, o, stream, err, _ERR_LEN)
        _check(code, err, "stof_run")

    def run_views(self, q, k, v, o, B, H, q_strides, kv_strides, o_strides, scale, stream,
                  kv_len=None, key_ranges=0, key_bits=0, key_words=0):
        """Strided operands (3 element strides each: batch, head, row; None = packed) and a
        score scale (0 = 1/sqrt(d)). Needs C API version 3. kv_len: fewer keys than the plan's
        (a KV cache prepared for its capacity); key_ranges: the device address of int32 [B][2],
        per batch row the keys it attends (0: none); key_bits: the device address of uint64
        [B][key_words], per batch row the keys it keeps (0: none); C API version 6 (key ranges:
        7, key bits: 8)."""
        if key_ranges or key_bits or (kv_len is not None and kv_len != self.shape[2]):
            bound = self.bind_views(B, H, q_strides, kv_strides, o_strides, scale, kv_len)
            try:
                bound(q, k, v, o, stream, key_ranges, key_bits, key_words)
            finally:
                bound.close()
            return
        if not has_views():
            raise StofError(f"stof_run_views: the library is C API version {version()}, "
                            f"strided views need version 3 (rebuild libstof_capi.so)")
        err = _error_buffer()
        code = self._lib.stof_run_views(self._h, q, k, v, o, B, H, _strides(q_strides),
                                        _strides(kv_strides), _strides(o_strides),
                                        float(scale), stream, err, _ERR_LEN)
        _check(code, err, "stof_run_views")

    def bind_views(self, B, H, q_strides, kv_strides, o_strides, scale, kv_len=None):
        """run_views with all but the four addresses and the stream fixed, for the eager hot
        path of attention.py (one call signature, many calls): a BoundViews, called as
        run(q, k, v, o, stream), released with this plan. Needs C API version 5 (6 with a
        kv_len below the plan's keys)."""
        _require_bound("stof_bind_views")
        if kv_len is not None and kv_len != self.shape[2] and version() < 6:
            raise StofError(f"kv_len {kv_len}: the library is C API version {version()}, fewer "
                            f"keys than prepared need version 6 (rebuild libstof_capi.so)")
        keys = None if kv_len is None or kv_len == self.shape[2] else int(kv_len)
        bound = BoundViews(self, B, H, q_strides, kv_strides, o_strides, scale, keys)
        self._bound.add(bound)
        return bound

    def close(self):
        """Releases the plan and every call bound to it (their later calls raise StofError)."""
        for bound in list(self._bound):
            bound.close()
        if self._h:
            self._lib.stof_release(self._h)
            self._h = ctypes.c_void_p()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class BoundViews:
    """A stof_bound: one plan bound to B, H, strides and a scale (C API version 5). Calling it
    launches with the four addresses and the stream: six arguments for ctypes to convert
    instead of stof_run_views' twelve. Released by close(), its plan's close() or when
    garbage-collected (host memory only)."""

    __slots__ = ("_h", "_fn", "_fn_ranges", "_fn_keys", "_release", "__weakref__")

    def __init__(self, plan, B, H, q_strides, kv_strides, o_strides, scale, kv_len=None):
        lib = plan._lib
        self._h = None
        self._fn, self._release = lib.stof_run_bound, lib.stof_bound_release
        self._fn_ranges = lib.stof_run_bound_ranges if version() >= 7 else None
        self._fn_keys = lib.stof_run_bound_keys if version() >= 8 else None
        h, err = ctypes.c_void_p(), ctypes.create_string_buffer(_ERR_LEN)
        if kv_len is None:
            code = lib.stof_bind_views(plan._h, B, H, _strides(q_strides), _strides(kv_strides),
                                       _strides(o_strides), float(scale), ctypes.byref(h), err,
                                       _ERR_LEN)
        else:
            code = lib.stof_bind_views_keys(plan._h, B, H, kv_len, _strides(q_strides),
                                            _strides(kv_strides), _strides(o_strides),
                                            float(scale), ctypes.byref(h), err, _ERR_LEN)
        _check(code, err, f"stof_bind_views (B={B}, H={H}" +
               ("" if kv_len is None else f", L_k={kv_len}") + ")")
        self._h = h

    def __call__(self, q, k, v, o, stream, key_ranges=0, key_bits=0, key_words=0):
        h = self._h
        if h is None:
            raise StofError("stof.attention: this bound call's plan was released "
                            "(stof.clear_cache); the next stof.attention call prepares it again")
        err = _error_buffer()
        if key_bits:
            if self._fn_keys is None:
                raise StofError(f"key masks: the library is C API version {version()}, they "
                                f"need version 8 (rebuild libstof_capi.so)")
            code = self._fn_keys(h, q, k, v, o, key_ranges or None, key_bits, key_words, stream,
                                 err, _ERR_LEN)
        elif key_ranges:
            if self._fn_ranges is None:
                raise StofError(f"key ranges: the library is C API version {version()}, they "
                                f"need version 7 (rebuild libstof_capi.so)")
            code = self._fn_ranges(h, q, k, v, o, key_ranges, stream, err, _ERR_LEN)
        else:
            code = self._fn(h, q, k, v, o, stream, err, _ERR_LEN)
        if code:
            _check(code, err, "stof_run_bound")

    def close(self):
        h, self._h = self._h, None
        if h is not None:
            self._release(h)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
