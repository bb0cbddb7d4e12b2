"""CPU tests of stof/extension.py (the compiled eager path's build folder, loading and status):
STOF_EXTENSION=0 turns it off, STOF_EXT_DIR moves it, a missing or broken module is reported
(never raised) and `python -m stof.extension --status` says so with exit code 1. Without torch
(CI) the build is refused naming PyTorch. The module itself is exercised by the GPU tests
(test_gpu_attention.py, test_compiled_eager_path)."""

import contextlib
import io
import os
import tempfile
import unittest

__import__("_util")  # puts python/ on sys.path

import stof
from stof import extension


@contextlib.contextmanager
def env(**values):
    old = {k: os.environ.get(k) for k in values}
    for k, v in values.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def have_torch():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


class ExtensionTest(unittest.TestCase):
    def test_switched_off(self):
        for value in ("0", "off", "No", "false"):
            with env(STOF_EXTENSION=value):
                self.assertTrue(extension.disabled())
                self.assertIsNone(extension.load())
                self.assertIn(f"disabled (STOF_EXTENSION={value})", extension.status())
        with env(STOF_EXTENSION="1"):
            self.assertFalse(extension.disabled())

    def test_missing_module_is_reported(self):
        with tempfile.TemporaryDirectory() as d, env(STOF_EXT_DIR=d, STOF_EXTENSION=None):
            self.assertEqual(extension.build_dir(), d)
            self.assertEqual(extension.module_path(), os.path.join(d, "stof_eager.so"))
            self.assertIsNone(extension.load())
            self.assertIn("not built", extension.status())
            self.assertIn("python -m stof.extension", extension.status())
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                self.assertEqual(extension.main(["--status"]), 1)
            self.assertIn("stof_eager: not built", out.getvalue())

    def test_broken_module_is_reported_not_raised(self):
        with tempfile.TemporaryDirectory() as d, env(STOF_EXT_DIR=d, STOF_EXTENSION=None):
            with open(os.path.join(d, "stof_eager.so"), "wb") as f:
                f.write(b"not an ELF file")
            self.assertIsNone(extension.load())
            self.assertIn("failed to load", extension.status())
            self.assertIn("rebuilds it", extension.status())

    def test_default_folder_is_per_source_and_torch(self):
        if not have_torch():
            with env(STOF_EXT_DIR=None, STOF_EXTENSION=None):
                self.assertIsNone(extension.load())
                self.assertIn("unavailable: ModuleNotFoundError", extension.status())
            return
        with tempfile.TemporaryDirectory() as d, env(STOF_EXT_DIR=None, XDG_CACHE_HOME=d):
            tag = extension.tag()
            self.assertRegex(tag, r"^[0-9a-f]{16}$")
            self.assertEqual(extension.build_dir(), os.path.join(d, "stof", "ext", tag))

    def test_build_without_torch_names_it(self):
        if have_torch():
            self.skipTest("torch is installed: the GPU tests build the module")
        ok, why = extension.can_build()
        self.assertFalse(ok)
        self.assertIn("needs PyTorch", why)
        with self.assertRaises(stof.StofError) as cm:
            extension.build(verbose=False)
        self.assertIn("cannot build stof_eager: needs PyTorch", str(cm.exception))

    def test_source_ships_with_the_package(self):
        self.assertTrue(os.path.isfile(extension.SOURCE), extension.SOURCE)
        with open(extension.SOURCE) as f:
            text = f.read()
        self.assertIn("PyInit_stof_eager", text)
        self.assertIn(f'PyModule_AddIntConstant(m, "ABI", {extension.ABI})', text)


if __name__ == "__main__":
    unittest.main()
