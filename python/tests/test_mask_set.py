"""CPU tests of stof.MaskSet (python/stof/mask_set.py), the masks per batch row and head of one
stof.attention call: equal masks merged and unused ones dropped as the engine's MaskSet does,
slices of a [B, L, L] / [B, H, L, L] array kept once with size-1 dimensions broadcast, the
bytes the C API takes, content keys, and refusals naming the argument."""

import unittest

import _util  # noqa: F401  (sys.path)
import numpy as np

import stof
from stof import StofError


def causal(L):
    return np.tril(np.ones((L, L), dtype=bool))


def band(L, w):
    i = np.arange(L)
    return causal(L) & (i.reshape(1, -1) > i.reshape(-1, 1) - w)


class MaskSetTest(unittest.TestCase):
    def test_merges_equal_masks_and_drops_unused_ones(self):
        s = stof.MaskSet([causal(40), band(40, 5), stof.Mask(causal(40)), band(40, 9)],
                         [[2, 1], [0, 1], [1, 2]])
        self.assertEqual(s.patterns, 2)
        self.assertEqual(s.pattern_of.tolist(), [[0, 1], [0, 1], [1, 0]])
        self.assertEqual((s.batch, s.heads, s.q_len, s.kv_len), (3, 2, 40, 40))
        raw = s.bytes_u8()
        self.assertEqual(raw.shape, (2, 40, 40))
        self.assertTrue(np.array_equal(raw[0], causal(40).astype(np.uint8)))
        self.assertTrue(np.array_equal(raw[1], band(40, 5).astype(np.uint8)))
        again = stof.MaskSet([band(40, 5), causal(40)], [[1, 0], [1, 0], [0, 1]])
        self.assertEqual(again.key, s.key)  # the same content, other indices given
        other = stof.MaskSet([causal(40), band(40, 5)], [[0, 1], [1, 0], [1, 0]])
        self.assertNotEqual(other.key, s.key)

    def test_from_tensor_keeps_each_slice_once_and_broadcasts(self):
        rows = np.stack([causal(32), band(32, 4), causal(32)])        # [B, L, L]
        s = stof.MaskSet.from_tensor(rows, 3, 4)
        self.assertEqual(s.patterns, 2)
        self.assertEqual(s.pattern_of.tolist(), [[0] * 4, [1] * 4, [0] * 4])
        heads = np.stack([causal(32), band(32, 4)])[None]              # [1, H, L, L]
        t = stof.MaskSet.from_tensor(heads, 2, 2)
        self.assertEqual(t.pattern_of.tolist(), [[0, 1], [0, 1]])
        one = stof.MaskSet.from_tensor(causal(32)[None, None], 5, 3)  # one slice for all
        self.assertEqual((one.patterns, one.batch, one.heads), (1, 5, 3))
        rect = stof.MaskSet.from_tensor(np.ones((2, 1, 4, 32), dtype=bool), 2, 1)
        self.assertEqual((rect.q_len, rect.kv_len), (4, 32))

    def test_refusals_name_the_argument(self):
        with self.assertRaisesRegex(StofError, "at least one mask expected"):
            stof.MaskSet([], [[0]])
        with self.assertRaisesRegex(StofError, r"pattern_of: expected integers \[B, H\]"):
            stof.MaskSet([causal(8)], [0, 0])
        with self.assertRaisesRegex(StofError, r"pattern_of\[1\]\[0\] is 1, expected 0..0"):
            stof.MaskSet([causal(8)], [[0], [1]])
        with self.assertRaisesRegex(StofError, r"mask set\[1\]: 9 x 9, expected 8 x 8"):
            stof.MaskSet([causal(8), causal(9)], [[0, 1]])
        with self.assertRaisesRegex(StofError, r"expected \[B, L_q, L_k\] or \[B, H, L_q, L_k\] "
                                               r"with B 1 or 2 and H 1 or 4, got shape"):
            stof.MaskSet.from_tensor(np.ones((3, 8, 8), dtype=bool), 2, 4)
        with self.assertRaisesRegex(StofError, "expected a bool array, got dtype"):
            stof.MaskSet.from_tensor(np.ones((2, 8, 8)), 2, 4)


if __name__ == "__main__":
    unittest.main()
