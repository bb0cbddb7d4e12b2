"""CPU tests of mask file reading through the engine (stof.Mask.from_file: _engine.py and
libstof_engine_capi.so) against the formats of docs/masks.md: PNG (every filter, 8/16-bit,
gray/RGB/RGBA/palette, refusals), NPY (dtypes, -0.0 and NaN, refusals), JSON (runs and spec
forms, refusals), every refusal a MaskFileError naming the file; files written by `stof mask`
read back to its hash."""

import json
import os
import struct
import tempfile
import unittest
import zlib

import _util  # noqa: F401  (sys.path)
import numpy as np

import stof
from stof import MaskFileError


def read_mask_file(path):
    return stof.Mask.from_file(path).numpy()


class Tmp(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, data):
        p = os.path.join(self.dir.name, name)
        with open(p, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        return p


def pattern(L=19):
    rng = np.random.default_rng(7)
    return rng.random((L, L)) < 0.4


class PngTest(Tmp):
    def decode_png(self, data, name="m.png"):
        return read_mask_file(self.write(name, data))

    def test_every_filter_8_bit_gray(self):
        m = pattern()
        rows = [[255 if x else 0 for x in r] for r in m]
        for f in range(5):
            got = self.decode_png(_util.png_bytes(rows, filters=(f,)))
            np.testing.assert_array_equal(got, m, err_msg=f"filter {f}")
        got = self.decode_png(_util.png_bytes(rows, filters=(0, 1, 2, 3, 4)))
        np.testing.assert_array_equal(got, m)

    def test_value_one_attends_16_bit(self):
        m = pattern()
        rows = [[1 if x else 0 for x in r] for r in m]  # 1 of 65535 still attends
        np.testing.assert_array_equal(self.decode_png(_util.png_bytes(rows, depth=16,
                                                                 filters=(4, 1))), m)

    def test_rgb_rgba_alpha_ignored(self):
        m = pattern()
        rgb = [[v for x in r for v in ((0, 3, 0) if x else (0, 0, 0))] for r in m]
        np.testing.assert_array_equal(self.decode_png(_util.png_bytes(rgb, color=2,
                                                                 filters=(3,))), m)
        rgba = [[v for x in r for v in ((9, 0, 0, 0) if x else (0, 0, 0, 255))] for r in m]
        np.testing.assert_array_equal(self.decode_png(_util.png_bytes(rgba, color=6,
                                                                 filters=(4,))), m)
        ga = [[v for x in r for v in ((7, 0) if x else (0, 200))] for r in m]
        np.testing.assert_array_equal(self.decode_png(_util.png_bytes(ga, color=4)), m)

    def test_refusals_name_the_file(self):
        ok = _util.png_bytes([[255, 0], [0, 255]])
        cases = {
            "empty.png": (b"", "not a PNG: the file is empty"),
            "sig.png": (b"GIF89a....", "not a PNG: missing the PNG signature"),
            "cut.png": (ok[:40], "PNG: decode failed"),
            "rect.png": (_util.png_bytes([[255, 0, 0], [0, 255, 0]]), "not square: 2 x 3"),
        }
        for name, (data, text) in cases.items():
            p = self.write(name, data)
            with self.assertRaises(MaskFileError) as cm:
                read_mask_file(p)
            self.assertTrue(str(cm.exception).startswith(p + ": "), str(cm.exception))
            self.assertIn(text, str(cm.exception))

    def test_too_large_from_header(self):
        def chunk(t, body):
            return struct.pack(">I", len(body)) + t + body + struct.pack(">I", zlib.crc32(t + body))
        data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 40000, 40000, 8, 0,
                                                                 0, 0, 0)) + chunk(b"IEND", b""))
        with self.assertRaises(MaskFileError) as cm:
            self.decode_png(data, "big.png")
        self.assertIn("big.png: size 40000 x 40000 is too large", str(cm.exception))
        rgba16 = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 20000, 20000, 16,
                                                                   6, 0, 0, 0)) +
                  chunk(b"IEND", b""))
        with self.assertRaises(MaskFileError) as cm:
            self.decode_png(rgba16, "rgba.png")
        self.assertIn("rgba.png: PNG of 20000 x 20000 pixels, RGBA, 16-bit: 2.98 GiB of samples, "
                      "over the PNG decoder's limit of 1 GiB", str(cm.exception))


class NpyTest(Tmp):
    def test_dtypes(self):
        m = pattern()
        for dt in ("|b1", "|u1", "<i2", ">u4", "<i8", "<f2", ">f4", "<f8"):
            p = os.path.join(self.dir.name, "m.npy")
            np.save(p, m.astype(np.dtype(dt)))
            np.testing.assert_array_equal(stof.Mask.from_file(p).numpy(), m, err_msg=dt)
        p = os.path.join(self.dir.name, "f.npy")
        np.save(p, np.asfortranarray(m.astype(np.float32)))
        np.testing.assert_array_equal(stof.Mask.from_file(p).numpy(), m)

    def test_negative_zero_masked_nan_attends(self):
        a = np.array([[-0.0, np.nan], [0.0, 1.0]])
        p = os.path.join(self.dir.name, "z.npy")
        np.save(p, a)
        np.testing.assert_array_equal(stof.Mask.from_file(p).numpy(),
                                      [[False, True], [False, True]])

    def test_refusals(self):
        d = self.dir.name
        np.save(os.path.join(d, "three.npy"), np.zeros((2, 2, 2), bool))
        np.save(os.path.join(d, "c8.npy"), np.zeros((2, 2), np.complex64))
        np.save(os.path.join(d, "rect.npy"), np.zeros((2, 3), bool))
        np.save(os.path.join(d, "ok.npy"), np.zeros((64, 64), np.float64))
        with open(os.path.join(d, "ok.npy"), "rb") as f:
            self.write("cut.npy", f.read()[:300])
        self.write("bad.npy", b"NOTNUMPY" * 10)
        for name, text in (("three.npy", "expected 2 dimensions, got 3"),
                           ("c8.npy", "descr: unsupported dtype '<c8'"),
                           ("rect.npy", "not square: 2 x 3"),
                           ("cut.npy", "data: truncated: shape (64, 64) of '<f8' needs 32768 "
                                       "bytes, the file has 172 after the header"),
                           ("bad.npy", "not an NPY file: bad magic")):
            p = os.path.join(d, name)
            with self.assertRaises(MaskFileError, msg=name) as cm:
                read_mask_file(p)
            self.assertEqual(str(cm.exception)[:len(p) + 2], p + ": ")
            self.assertIn(text, str(cm.exception))


class JsonTest(Tmp):
    def test_runs_form(self):
        # docs/masks.md's example: sliding_window with L = 4, w = 2.
        p = self.write("sw.json", json.dumps({"format": "stof-mask", "version": 1, "runs": {
            "rows": 4, "cols": 4, "runs": [[0, 2], [0, 3], [1, 3], [2, 2]]}}))
        i, j = np.indices((4, 4))
        np.testing.assert_array_equal(stof.Mask.from_file(p).numpy(), abs(i - j) < 2)

    def test_runs_round_trip(self):
        m = pattern(33)
        p = self.write("r.json", json.dumps({"format": "stof-mask", "version": 1,
                                             "runs": _util.array_to_runs(m)}))
        np.testing.assert_array_equal(read_mask_file(p), m)

    def test_refusals(self):
        good = {"rows": 2, "cols": 2, "runs": [[0, 1], []]}
        cases = [
            ('{"format": "stof-mask", "version": 1, "version": 1, "runs": {}}',
             "version: duplicate key"),
            ('{"format": "stof-mask", "version": 1', "not valid JSON"),
            (json.dumps({"format": "x", "version": 1, "runs": good}), "format: expected"),
            (json.dumps({"format": "stof-mask", "version": 2, "runs": good}), "version: expected 1"),
            (json.dumps({"format": "stof-mask", "version": 1, "runs": good, "extra": 1}),
             "extra: unknown key"),
            (json.dumps({"format": "stof-mask", "version": 1}),
             "expected exactly one of \"spec\" and \"runs\", got neither"),
            (json.dumps({"format": "stof-mask", "version": 1,
                         "runs": {"rows": 2, "cols": 2, "runs": [[1, 1, 0, 1], []]}}),
             "runs must be sorted"),
            (json.dumps({"format": "stof-mask", "version": 1,
                         "runs": {"rows": 2, "cols": 2, "runs": [[1, 2], []]}}),
             "ends past the last column (cols 2)"),
            (json.dumps({"format": "stof-mask", "version": 1,
                         "runs": {"rows": 2, "cols": 2, "runs": [["0", 1], []]}}),
             "runs[0][0]: expected an integer, got \"0\""),
            (json.dumps({"format": "stof-mask", "version": 1,
                         "runs": {"rows": 3, "cols": 2, "runs": [[], []]}}),
             "expected 3 row arrays (rows), got 2"),
        ]
        for i, (text, want) in enumerate(cases):
            p = self.write(f"bad{i}.json", text)
            with self.assertRaises(MaskFileError, msg=want) as cm:
                read_mask_file(p)
            self.assertTrue(str(cm.exception).startswith(p + ": "), str(cm.exception))
            self.assertIn(want, str(cm.exception))


def _cli():
    from stof import _cli
    try:
        return _cli.cli_path()
    except stof.StofError:
        return None


@unittest.skipIf(_cli() is None, "the stof CLI is not built (STOF_CUDA=OFF scripts/build "
                 "build-nocuda), so files it writes cannot be compared")
class AgainstEngineTest(Tmp):
    def test_engine_written_files_agree(self):
        from stof import _cli
        for fmt in ("png", "npy", "json"):
            p = os.path.join(self.dir.name, f"bb.{fmt}")
            out = _cli.run(["mask", "--pattern", "bigbird", "--seq", 200, "--out", p, "--json"],
                           "stof mask")
            info = json.loads(out[out.index("{"):])
            m = stof.Mask.from_file(p)
            self.assertEqual(m.hash_hex(), info["hash"], fmt)
            self.assertEqual(m.nnz, info["nnz"], fmt)
            # The hash of the bits alone (not the one the engine gave with the file) agrees.
            self.assertEqual(stof.Mask(m.numpy()).hash_hex(), info["hash"], fmt)


class SpecTest(Tmp):
    def test_spec_form_and_generate(self):
        p = self.write("s.json", json.dumps({"format": "stof-mask", "version": 1, "spec": {
            "pattern": "sliding_window", "seq_len": 8, "width": 2}}))
        i, j = np.indices((8, 8))
        m = stof.Mask.from_file(p)
        np.testing.assert_array_equal(m.numpy(), abs(i - j) < 2)
        self.assertEqual(m.spec["pattern"], "sliding_window")
        self.assertEqual(stof.Mask.generate("sliding_window", 8, width=2), m)
        with self.assertRaises(MaskFileError) as cm:
            stof.Mask.generate("sliding_window", 8, width=0)
        self.assertEqual(str(cm.exception), "spec: mask.width: must be in 1..8, got 0")
        with self.assertRaises(MaskFileError) as cm:
            stof.Mask.from_spec({"pattern": "causal", "seq_len": 8, "width": float("nan")})
        self.assertIn("spec: not a JSON spec", str(cm.exception))


class SaveTest(Tmp):
    """Mask.save writes with the engine's writer (issue 35): every format reads back to the same
    bits and the engine's hash; .json keeps a generated mask's spec; a non-square mask and an
    unknown extension are refused naming the file, and an existing file stays."""

    def test_round_trips(self):
        m = stof.Mask.generate("bigbird", 96)
        drawn = stof.Mask(pattern(19))
        for ext in ("png", "npy", "json"):
            for mask, name in ((m, "gen"), (drawn, "drawn")):
                p = os.path.join(self.dir.name, f"{name}.{ext}")
                mask.save(p)
                back = stof.Mask.from_file(p)
                self.assertEqual(back, mask, p)
                self.assertEqual(back.hash_hex(), mask.hash_hex(), p)
                self.assertEqual(back.spec is not None, ext == "json" and name == "gen", p)

    def test_refusals_keep_the_old_file(self):
        p = self.write("keep.npy", b"old")
        with self.assertRaises(MaskFileError) as cm:
            stof.Mask.causal(3, 10).save(p)
        self.assertIn(p + ": mask files hold square L x L masks, got 3 x 10", str(cm.exception))
        with open(p, "rb") as f:
            self.assertEqual(f.read(), b"old")
        with self.assertRaises(MaskFileError) as cm:
            stof.Mask(pattern(8)).save(os.path.join(self.dir.name, "m.txt"))
        self.assertIn("m.txt: unknown mask format", str(cm.exception))


class MissingNumpyTest(unittest.TestCase):
    def test_stof_error_names_the_package(self):
        import builtins
        from stof import _numpy
        real = builtins.__import__

        def no_numpy(name, *a, **kw):
            if name == "numpy":
                raise ImportError("No module named 'numpy'")
            return real(name, *a, **kw)
        builtins.__import__ = no_numpy
        try:
            with self.assertRaises(stof.StofError) as cm:
                _numpy.numpy()
        finally:
            builtins.__import__ = real
        self.assertIn("numpy is not installed", str(cm.exception))
        self.assertIn("python3-numpy", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
