"""The reproductions of issue 34 for the Python package, which reads every file through the
engine's loaders (libstof_engine_capi.so): special files refused by kind without blocking (a
FIFO hung Mask.from_file and load_plan; /dev/zero ran out of memory); a symlink loop said as
one; a legal 2 GiB float64 .npy read without holding the file in memory (it was read whole:
17.9 GB for the 8 GiB one); inputs that raised TypeError, ValueError or OverflowError now a
MaskFileError / PlanError naming the file; and the verdicts where Python and `stof` disagreed
(each of these files is also in the fuzz corpus, which test_engine_agreement.py compares with
the CLI as a whole)."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

from _util import REPO
import numpy as np

import stof
from stof import _engine

CORPUS = os.path.join(REPO, "tests", "fuzz", "corpus")


def _library():
    try:
        return _engine.library_path()
    except stof.StofError:
        return None


def run_python(code, timeout=120):
    """Runs `code` in a fresh interpreter with the package on its path; (rc, stdout+stderr).
    A child, so a reader that blocks fails the test by the timeout instead of hanging it."""
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, timeout=timeout,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


@unittest.skipIf(_library() is None, "libstof_engine_capi.so is not built")
class SpecialFilesTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def test_fifo_is_refused_without_blocking(self):
        fifos = [os.path.join(self.dir.name, n) for n in ("m.npy", "m.png", "m.json", "p.json")]
        for f in fifos:
            os.mkfifo(f)
        rc, out = run_python(f"""
            import stof
            for f in {fifos[:3]!r}:
                try:
                    stof.Mask.from_file(f)
                except stof.MaskFileError as e:
                    print(e)
            try:
                stof.load_plan({fifos[3]!r})
            except stof.PlanError as e:
                print(e)
            """, timeout=60)
        self.assertEqual(rc, 0, out)
        self.assertEqual(out.splitlines(),
                         [f"{f}: is a FIFO (named pipe), not a regular file" for f in fifos])

    def test_devices_loops_and_folders_are_named(self):
        zero = os.path.join(self.dir.name, "zero.npy")
        os.symlink("/dev/zero", zero)
        with self.assertRaises(stof.MaskFileError) as cm:
            stof.Mask.from_file(zero)
        self.assertEqual(str(cm.exception), f"{zero}: is a character device, not a regular file")
        with self.assertRaises(stof.PlanError) as cm:
            stof.load_plan("/dev/zero")
        self.assertEqual(str(cm.exception), "/dev/zero: is a character device, not a regular file")
        a, b = os.path.join(self.dir.name, "a.json"), os.path.join(self.dir.name, "b.json")
        os.symlink(b, a)
        os.symlink(a, b)
        with self.assertRaises(stof.PlanError) as cm:
            stof.load_plan(a)
        self.assertEqual(str(cm.exception),
                         f"{a}: cannot open: a symlink loop (too many levels of symbolic links)")
        with self.assertRaises(stof.PlanError) as cm:
            stof.load_plan(self.dir.name)
        self.assertEqual(str(cm.exception), f"{self.dir.name}: is a directory, not a regular file")

    def test_a_large_float64_npy_is_streamed(self):
        # 16384 x 16384 float64: 2 GiB of data, a sparse file (no disk used). The engine streams
        # it a row at a time; reading it whole would need more than 2 GiB.
        L = 16384
        p = os.path.join(self.dir.name, "big.npy")
        with open(p, "wb") as f:
            np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False,
                                                     "shape": (L, L)})
            f.seek(8 * L * L - 8, os.SEEK_CUR)
            f.write(np.array([1.0], "<f8").tobytes())
        rc, out = run_python(f"""
            import resource, stof
            m = stof.Mask.from_file({p!r})
            print(m.L, m.nnz, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
            """)
        self.assertEqual(rc, 0, out)
        L_read, nnz, peak = (int(x) for x in out.split())
        self.assertEqual((L_read, nnz), (L, 1))
        # The bool array (256 MiB) and the engine's packed mask (32 MiB), not the 2 GiB file.
        self.assertLess(peak, 1 << 30, f"peak RSS {peak} bytes")


@unittest.skipIf(_library() is None, "libstof_engine_capi.so is not built")
class Issue34InputsTest(unittest.TestCase):
    def mask(self, name):
        return os.path.join(CORPUS, name)

    def refused(self, loader, error, path, text):
        with self.assertRaises(error) as cm:
            loader(path)
        self.assertEqual(str(cm.exception), f"{path}: {text}")

    def test_errors_are_stof_errors_naming_the_file(self):
        # Before: TypeError (IEND first), numpy's ValueError (short PLTE), OverflowError (NPY
        # shape 1e23), "Exceeds the limit (4300 digits)" (a 5001-digit number in a plan), and a
        # plan with params.variant [1] that loaded and then made repr(plan) raise TypeError.
        m, p = stof.Mask.from_file, stof.load_plan
        self.refused(m, stof.MaskFileError, self.mask("png_mask/iend-first.png"),
                     "PNG: cannot read the header: unknown image type")
        self.refused(m, stof.MaskFileError, self.mask("png_mask/short-plte.png"),
                     "PNG: cannot read the header: unknown image type")
        self.refused(m, stof.MaskFileError, self.mask("npy_mask/shape-1e23.npy"),
                     "header: shape: dimension too large (at byte 70 of the header)")
        with self.assertRaises(stof.PlanError) as cm:
            p(self.mask("plan/digits-5001.json"))
        self.assertTrue(str(cm.exception).startswith(
            self.mask("plan/digits-5001.json") + ": not valid JSON (byte 5405): number overflow"))
        self.refused(p, stof.PlanError, self.mask("plan/variant-list.json"),
                     "fusion.segments[1].params.variant: expected a string, got [1]")

    def test_verdicts_are_the_engines(self):
        # Python accepted these and stof refused them:
        m, p = stof.Mask.from_file, stof.load_plan
        self.refused(p, stof.PlanError, self.mask("plan/mha-block-m-float.json"),
                     "mha.block_m: expected one of 16, 32, 64, 128, 256, got 64.0")
        self.refused(p, stof.PlanError, self.mask("plan/mha-num-warps-float.json"),
                     "mha.num_warps: expected one of 1, 2, 4, 5, 8, 12, got 8.0")
        self.refused(p, stof.PlanError, self.mask("plan/schema-version-float.json"),
                     "schema_version: expected an integer, got 1.0")
        self.refused(m, stof.MaskFileError, self.mask("json_mask/version-float.json"),
                     "version: expected 1, got 1.0")
        self.refused(m, stof.MaskFileError, self.mask("npy_mask/trailing-700.npy"),
                     "data: 700 unexpected bytes after the data of shape (4, 4) of '|b1'")
        with self.assertRaises(stof.PlanError) as cm:
            p(self.mask("plan/deep-300.json"))
        self.assertIn("JSON nested deeper than 256 levels at fusion.segments[1].params.num_warps",
                      str(cm.exception))
        # and Python refused these, which stof reads:
        bom = m(self.mask("json_mask/bom.json"))
        np.testing.assert_array_equal(bom.numpy(), [[True, False], [True, True]])
        plan = p(self.mask("plan/mha-num-warps-5.json"))
        self.assertEqual(plan.mha["num_warps"], 5)
        # Its sparse_mha segment's params override the plan's mha section (4 warps).
        self.assertTrue(repr(plan).endswith("mha={'kernel': 'block_wise', 'block_m': 64, "
                                            "'block_n': 64, 'num_warps': 4})"), repr(plan))


if __name__ == "__main__":
    unittest.main()
