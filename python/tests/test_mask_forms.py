"""CPU tests of the mask constructors beside the generators: Mask.document, Mask.from_slices
(MagiAttention's slice form) and Mask.from_intervals (FlashMask's column form), built by the
engine (engine/mask/mask_slices.h through libstof_engine_capi.so): random cases against numpy
evaluations of the definitions, the known masks against the generators and Mask.causal, and
refusals naming the argument."""

import unittest

import _util  # noqa: F401  (sys.path)
import numpy as np

import stof
from stof import StofError

KINDS = ("full", "causal", "inv_causal", "bi_causal")


def slice_cells(rows, cols, q, k, kind):
    """The definition of one slice, cell by cell."""
    out = np.zeros((rows, cols), dtype=bool)
    nq, nk = q[1] - q[0], k[1] - k[0]
    i = np.arange(nq).reshape(-1, 1)
    j = np.arange(nk).reshape(1, -1)
    keep = np.ones((nq, nk), dtype=bool)
    if kind in ("causal", "bi_causal"):
        keep &= j <= i + (nk - nq)
    if kind in ("inv_causal", "bi_causal"):
        keep &= j >= i
    out[q[0]:q[1], k[0]:k[1]] = keep
    return out


class SlicesTest(unittest.TestCase):
    def test_random_slices_equal_the_union_of_their_cells(self):
        rng = np.random.default_rng(5)
        for _ in range(60):
            rows, cols = rng.integers(1, 50, size=2)
            n = int(rng.integers(1, 6))
            qs, ks, kinds = [], [], []
            want = np.zeros((rows, cols), dtype=bool)
            for _ in range(n):
                qb = int(rng.integers(0, rows)); qe = int(rng.integers(qb + 1, rows + 1))
                kb = int(rng.integers(0, cols)); ke = int(rng.integers(kb + 1, cols + 1))
                kind = KINDS[int(rng.integers(0, 4))]
                qs.append((qb, qe)); ks.append((kb, ke)); kinds.append(kind)
                want |= slice_cells(rows, cols, (qb, qe), (kb, ke), kind)
            got = stof.Mask.from_slices(qs, ks, kinds, q_len=rows, kv_len=cols)
            np.testing.assert_array_equal(got.numpy(), want)

    def test_known_masks(self):
        L = 300
        causal = stof.Mask.from_slices([(0, L)], [(0, L)], "causal")
        self.assertEqual(causal, stof.Mask.generate("causal", L))
        # A KV cache's 4 new rows over 300 keys: the bottom-right causal rows.
        self.assertEqual(stof.Mask.from_slices([(0, 4)], [(0, L)], "causal"),
                         stof.Mask.causal(4, L))
        docs = [100, 1, 199]
        starts = np.cumsum([0] + docs[:-1])
        ranges = [(int(s), int(s + n)) for s, n in zip(starts, docs)]
        for causal_docs in (False, True):
            self.assertEqual(
                stof.Mask.from_slices(ranges, ranges, "causal" if causal_docs else "full"),
                stof.Mask.document(docs, causal=causal_docs))
        self.assertEqual(stof.Mask.document(docs).nnz, sum(n * n for n in docs))

    def test_refusals_name_the_argument(self):
        with self.assertRaisesRegex(StofError, r"kinds\[1\]: expected one of full, causal, "
                                               r"inv_causal, bi_causal, got 'lower'"):
            stof.Mask.from_slices([(0, 2), (0, 2)], [(0, 2), (0, 2)], ["full", "lower"])
        with self.assertRaisesRegex(StofError, r"slices\[0\]\.q_end: must be in 1\.\.8 and above "
                                               r"q_begin 3, got 3"):
            stof.Mask.from_slices([(3, 3)], [(0, 8)], q_len=8, kv_len=8)
        with self.assertRaisesRegex(StofError, "2 q_ranges but 1 k_ranges"):
            stof.Mask.from_slices([(0, 1), (1, 2)], [(0, 2)])
        with self.assertRaisesRegex(StofError, "at most 32768"):
            stof.Mask.from_slices([(0, 40000)], [(0, 40000)], "causal")


class IntervalsTest(unittest.TestCase):
    def test_random_intervals_equal_the_cells(self):
        rng = np.random.default_rng(9)
        for _ in range(60):
            rows, cols = (int(x) for x in rng.integers(1, 50, size=2))
            lower = np.sort(rng.integers(0, rows + 1, size=(cols, 2)), axis=1)
            upper = rng.integers(0, rows + 1, size=(cols, 2))  # some empty (begin >= end)
            r = np.arange(rows).reshape(-1, 1)
            masked = ((r >= lower[:, 0]) & (r < lower[:, 1])) | \
                     ((r >= upper[:, 0]) & (r < upper[:, 1]))
            got = stof.Mask.from_intervals(lower, upper, q_len=rows)
            np.testing.assert_array_equal(got.numpy(), ~masked)

    def test_causal_and_window(self):
        L, w = 257, 32
        j = np.arange(L)
        upper = np.stack([np.zeros(L, dtype=np.int64), j], axis=1)          # rows above j
        lower = np.stack([np.minimum(j + w, L), np.full(L, L)], axis=1)     # w or more below
        self.assertEqual(stof.Mask.from_intervals(np.full((L, 2), L), upper),
                         stof.Mask.generate("causal", L))
        self.assertEqual(stof.Mask.from_intervals(lower, upper),
                         stof.Mask.generate("sliding_window", L, width=w, causal=True))

    def test_refusals(self):
        with self.assertRaisesRegex(StofError, r"upper_end\[1\]: must be in 0\.\.4, got 5"):
            stof.Mask.from_intervals([(0, 0)] * 3, [(0, 0), (0, 5), (0, 0)], q_len=4)
        with self.assertRaisesRegex(StofError, "upper has 2 columns, lower 3"):
            stof.Mask.from_intervals([(0, 0)] * 3, [(0, 0)] * 2)


class SpecLastRowsTest(unittest.TestCase):
    """Mask.from_spec / generate with q_len: a spec's last rows, past a square mask's 32768."""

    def test_last_rows_equal_the_square_masks(self):
        for pattern, params in (("bigbird", {"seed": 3}), ("sliding_window", {"width": 17}),
                                ("dilated", {"width": 40, "dilation": 2})):
            square = stof.Mask.generate(pattern, 1000, **params)
            for q in (1, 7, 1000):
                rows = stof.Mask.generate(pattern, 1000, q_len=q, **params)
                self.assertEqual((rows.q_len, rows.kv_len), (q, 1000))
                np.testing.assert_array_equal(rows.numpy(), square.numpy()[-q:],
                                              err_msg=f"{pattern} q_len {q}")

    def test_long_caches(self):
        L = 131072
        causal = stof.Mask.generate("causal", L, q_len=1)
        self.assertEqual((causal.q_len, causal.kv_len, causal.nnz), (1, L, L))
        window = stof.Mask.from_spec({"pattern": "sliding_window", "seq_len": 262144,
                                      "width": 4096, "causal": True}, q_len=16)
        want = np.zeros((16, 262144), dtype=bool)
        for r in range(16):
            pos = 262144 - 16 + r
            want[r, pos - 4095:pos + 1] = True
        np.testing.assert_array_equal(window.numpy(), want)
        self.assertIsNone(window.spec)

    def test_refusals(self):
        with self.assertRaisesRegex(StofError, r"spec: rows: expected 1\.\.1000 \(the mask's rows\), "
                                               r"got 0"):
            stof.Mask.generate("causal", 1000, q_len=0)
        with self.assertRaisesRegex(StofError, r"expected 1\.\.1000 .*got 1001"):
            stof.Mask.generate("causal", 1000, q_len=1001)
        with self.assertRaisesRegex(StofError, "size 4097 x 262144 is too large"):
            stof.Mask.generate("causal", 262144, q_len=4097)
        with self.assertRaisesRegex(StofError, "size 1 x 300000 is too large; .* at most 262144 "
                                               "on a side"):
            stof.Mask.generate("causal", 300000, q_len=1)


if __name__ == "__main__":
    unittest.main()
