"""CPU tests of the ctypes layer (stof/_capi.py): where libstof_capi.so is looked up and the
errors naming both places; with a library present (ctest sets STOF_CAPI_LIB in a CUDA build),
its version and each error code carried as StofError with the library's own message: an
argument error (STOF_ERR_INVALID, checked before any CUDA call) and a failed device switch
(STOF_ERR_CUDA, with or without a GPU). Also where libstof_engine_capi.so is looked up."""

import os
import unittest

__import__("_util")  # puts python/ on sys.path
import numpy as np

import stof
from stof import _capi


def library_or_none():
    try:
        return _capi.library_path()
    except stof.StofError:
        return None


class CapiLookupTest(unittest.TestCase):
    def test_env_names_missing_file(self):
        from stof import _capi
        old = os.environ.get(_capi.ENV_VAR)
        os.environ[_capi.ENV_VAR] = "/nonexistent/libstof_capi.so"
        try:
            with self.assertRaises(stof.StofError) as cm:
                _capi.library_path()
            self.assertIn("STOF_CAPI_LIB=/nonexistent/libstof_capi.so: no such file",
                          str(cm.exception))
        finally:
            if old is None:
                del os.environ[_capi.ENV_VAR]
            else:
                os.environ[_capi.ENV_VAR] = old

    def test_not_found_names_both_places(self):
        from stof import _capi
        old_env = os.environ.pop(_capi.ENV_VAR, None)
        old_path = _capi.BUILD_TREE_PATH
        _capi.BUILD_TREE_PATH = "/nonexistent/build/kernels/libstof_capi.so"
        try:
            with self.assertRaises(stof.StofError) as cm:
                _capi.library_path()
            msg = str(cm.exception)
            self.assertIn("STOF_CAPI_LIB is not set", msg)
            self.assertIn("/nonexistent/build/kernels/libstof_capi.so", msg)
        finally:
            _capi.BUILD_TREE_PATH = old_path
            if old_env is not None:
                os.environ[_capi.ENV_VAR] = old_env



@unittest.skipIf(library_or_none() is None, "libstof_capi.so not found (a CUDA build makes it)")
class CapiLibraryTest(unittest.TestCase):
    def test_version_and_errors_carry_the_message(self):
        self.assertGreaterEqual(_capi.version(), 2)
        mask = np.ones((128, 128), np.uint8)
        with self.assertRaises(stof.StofError) as cm:
            _capi.PreparedPlan(mask, 1, 2, 128, 100, 0)
        self.assertEqual(cm.exception.code, 1)
        self.assertIn("stof_capi: workload.head_dim: the sparse MHA kernels support multiples "
                      "of 8 from 8 to 256", str(cm.exception))
        self.assertIn("got 100", str(cm.exception))
        with self.assertRaises(stof.StofError) as cm:
            _capi.PreparedPlan(mask, 1, 2, 128, 64, 0, kernel="nosuch")
        self.assertIn("kernel: expected one of auto", str(cm.exception))

    def test_a_failed_device_switch_is_a_cuda_error(self):
        # STOF_ERR_CUDA (2), as the header promises for a missing GPU or a failed CUDA call:
        # a device switch that fails ("CUDA driver version is insufficient ..." without a
        # driver, "invalid device ordinal" for device 99 on a GPU machine) was STOF_ERR_INVALID,
        # since the code was chosen by a case-sensitive match of "cuda" in the message.
        mask = np.ones((128, 128), np.uint8)
        with self.assertRaises(stof.StofError) as cm:
            _capi.PreparedPlan(mask, 1, 2, 128, 64, 99)
        self.assertEqual(cm.exception.code, 2, str(cm.exception))
        self.assertIn("stof_capi: making device 99 current: cudaSetDevice: ", str(cm.exception))

    def test_bound_calls_refuse_null_handles(self):
        # Version 5's bound call: a null plan or bound handle is refused with a message, no
        # crash (checked before any CUDA call, so no GPU is needed).
        import ctypes
        lib = _capi.load()
        if _capi.version() < 5:
            self.skipTest(f"C API version {_capi.version()}: no bound calls")
        err = ctypes.create_string_buffer(256)
        h = ctypes.c_void_p()
        self.assertEqual(lib.stof_bind_views(None, 1, 2, None, None, None, 0.0, ctypes.byref(h),
                                             err, 256), 1)
        self.assertEqual(err.value.decode(), "stof_capi: plan: must not be null")
        self.assertFalse(h.value)
        self.assertEqual(lib.stof_bind_views(None, 1, 2, None, None, None, 0.0, None, err, 256),
                         1)
        self.assertEqual(err.value.decode(), "stof_capi: bound: must not be null")
        self.assertEqual(lib.stof_run_bound(None, None, None, None, None, None, err, 256), 1)
        self.assertEqual(err.value.decode(), "stof_capi: bound: must not be null")
        lib.stof_bound_release(None)  # ignored


    def test_patterns_and_key_bits_refuse_bad_input(self):
        # Version 8: masks per batch row / head and kept keys; the inputs are checked before any
        # CUDA call, so no GPU is needed.
        import ctypes
        if _capi.version() < 8:
            self.skipTest(f"C API version {_capi.version()}: no masks per row / head")
        masks = np.ones((2, 64, 64), np.uint8)

        def prepare(P, pattern_of, code=1):
            with self.assertRaises(stof.StofError) as cm:
                _capi.PreparedPlan(masks[:P].reshape(-1), 2, 2, 64, 64, 0, dtype="bf16",
                                   pattern_of=pattern_of)
            self.assertEqual(cm.exception.code, code, str(cm.exception))
            return str(cm.exception)
        self.assertIn("stof_capi: masks_host: pattern_of[3] (batch 1, head 1) is 2, expected "
                      "0..1", prepare(2, [0, 1, 1, 2]))
        self.assertIn("stof_capi: masks_host: pattern_of[1] (batch 0, head 1) is -1",
                      prepare(2, [0, -1, 0, 0]))
        # Refused by the Python layer before the call (no C code).
        self.assertIn("pattern_of: expected 2x2 indices", prepare(2, [0, 1, 0], code=None))
        lib = _capi.load()
        err = ctypes.create_string_buffer(256)
        plan = ctypes.c_void_p()
        raw = masks.reshape(-1)
        of = np.zeros(4, np.int32)
        self.assertEqual(lib.stof_prepare_patterns(raw.ctypes.data, 5, of.ctypes.data, 2, 2, 2,
                                                   64, 64, 64, 1, 0, 0, 0, 0, 0,
                                                   ctypes.byref(plan), err, 256), 1)
        self.assertEqual(err.value.decode(), "stof_capi: P: expected 1..B*H = 4 mask patterns, "
                                             "got 5")
        self.assertEqual(lib.stof_prepare_patterns(raw.ctypes.data, 2, None, 2, 2, 2, 64, 64, 64,
                                                   1, 0, 0, 0, 0, 0, ctypes.byref(plan), err,
                                                   256), 1)
        self.assertEqual(err.value.decode(), "stof_capi: pattern_of: must not be null")
        self.assertFalse(plan.value)
        self.assertEqual(lib.stof_run_bound_keys(None, None, None, None, None, None, None, 0,
                                                 None, err, 256), 1)
        self.assertEqual(err.value.decode(), "stof_capi: bound: must not be null")


class EngineLookupTest(unittest.TestCase):
    def setUp(self):
        from stof import _engine
        self.env = {k: os.environ.pop(k, None) for k in (_engine.ENV_VAR, _capi.ENV_VAR)}

    def tearDown(self):
        from stof import _engine
        for k, v in self.env.items():
            os.environ.pop(k, None)
            if v is not None:
                os.environ[k] = v

    def test_env_names_missing_file_and_capi_tree_is_searched(self):
        import tempfile
        from stof import _engine
        os.environ[_engine.ENV_VAR] = "/nonexistent/libstof_engine_capi.so"
        with self.assertRaises(stof.StofError) as cm:
            _engine.library_path()
        self.assertIn("STOF_ENGINE_LIB=/nonexistent/libstof_engine_capi.so: no such file",
                      str(cm.exception))
        del os.environ[_engine.ENV_VAR]
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "engine"))
            lib = os.path.join(d, "engine", "libstof_engine_capi.so")
            open(lib, "w").close()
            os.environ[_capi.ENV_VAR] = os.path.join(d, "kernels", "libstof_capi.so")
            self.assertEqual(_engine.library_path(), lib)

    def test_not_found_names_every_place(self):
        from stof import _engine
        old = _engine.BUILD_TREE_PATHS
        _engine.BUILD_TREE_PATHS = ["/nonexistent/build/engine/libstof_engine_capi.so"]
        try:
            with self.assertRaises(stof.StofError) as cm:
                _engine.library_path()
            msg = str(cm.exception)
            self.assertIn("STOF_ENGINE_LIB is not set", msg)
            self.assertIn("/nonexistent/build/engine/libstof_engine_capi.so", msg)
            self.assertIn("STOF_CUDA=OFF scripts/build build-nocuda", msg)
        finally:
            _engine.BUILD_TREE_PATHS = old


if __name__ == "__main__":
    unittest.main()
