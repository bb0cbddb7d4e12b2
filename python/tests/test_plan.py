"""CPU tests of stof.load_plan (stof/plan.py over the engine's loader, _engine.py): the
checked-in example plans load; malformed, truncated and wrong-type files are refused with the
file and JSON path, in the words of `stof plan validate`; inline masks are hash-checked; spec
masks regenerated and hash-checked (a version 3 plan's last rows too); check_run warns on
another device or shape; stof.Mask's checks and the engine's hash."""

import copy
import json
import os
import tempfile
import unittest
import warnings

from _util import REPO
import numpy as np

import stof
from _util import array_to_runs

EXAMPLE = os.path.join(REPO, "assets", "plans", "bigbird-1024-bert-base-h100.json")
TUNED = os.path.join(REPO, "assets", "plans", "bert-base_8x512_bigbird.h100.plan.json")


class PlanTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        with open(EXAMPLE) as f:
            self.doc = json.load(f)

    def tearDown(self):
        self.dir.cleanup()

    def write(self, doc_or_text, name="p.json"):
        p = os.path.join(self.dir.name, name)
        with open(p, "w") as f:
            f.write(doc_or_text if isinstance(doc_or_text, str) else json.dumps(doc_or_text))
        return p

    def refused(self, doc_or_text, *texts):
        p = self.write(doc_or_text)
        with self.assertRaises(stof.PlanError) as cm:
            stof.load_plan(p, check_mask=False)  # the mask: tested below
        msg = str(cm.exception)
        self.assertTrue(msg.startswith(p + ": "), msg)
        for t in texts:
            self.assertIn(t, msg)
        return msg

    def test_examples_load(self):
        p = stof.load_plan(EXAMPLE, check_mask=False)
        self.assertEqual(p.shape, (8, 12, 1024, 64))
        self.assertEqual(p.device_name, "H100-SXM-80GB")
        self.assertEqual(p.workload["dtype"], "f16")
        self.assertIn(p.mha_choice()["kernel"], ("block_wise", "row_wise"))
        t = stof.load_plan(TUNED, check_mask=False)
        self.assertEqual(t.shape[2], 512)
        self.assertIsNotNone(t.model)
        self.assertEqual(len(t.segment_choices()), len(t.segments))

    def test_mha_runs(self):
        # Issue 35: a plan records what the engine runs beside Eq. 1 / Eq. 2's pick; the
        # attention request is what runs, and the record is checked as the engine checks it.
        d = copy.deepcopy(self.doc)
        self.assertEqual(d["mha"]["runs"]["num_warps"], 5)  # the example: the Hopper kernel
        p = stof.load_plan(self.write(d, "runs.json"), check_mask=False)
        want = {k: d["mha"]["runs"][k] for k in ("kernel", "block_m", "block_n", "num_warps")}
        self.assertEqual(p.mha_choice(), want)
        d["mha"]["runs"]["family"] = "portable"
        self.refused(d, "mha.runs.family: num_warps 5 is the hopper kernel, got 'portable'")
        d = copy.deepcopy(self.doc)
        d["mha"]["runs"]["decided_by"] = "guess"
        self.refused(d, "mha.runs.decided_by: expected one of kernels, engine model, tuned")
        d = copy.deepcopy(self.doc)
        d["mha"]["runs"] = {"kernel": "row_wise", "decided_by": "kernels", "block_m": 64}
        self.refused(d, "mha.runs.block_m: the row-wise kernel has no block parameters")

    def test_grouped_workload_version_two(self):
        # Issue 31: grouped key/value heads and a KV cache's query rows (schema version 2); the
        # plan's mask stays the square one and the workload runs its last q_len rows.
        d = copy.deepcopy(self.doc)
        d["schema_version"] = 2
        d["workload"].update({"heads": 12, "kv_heads": 4, "q_len": 3})
        d["mha"].update({"kernel": "block_wise", "block_m": 64, "block_n": 64, "num_warps": 5,
                         "chosen_by": "shape"})
        d["mha"].pop("runs", None)
        p = stof.load_plan(self.write(d, "gqa.json"))
        self.assertEqual((p.kv_heads, p.q_len), (4, 3))
        q = p.query_mask
        self.assertEqual((q.q_len, q.kv_len), (3, 1024))
        np.testing.assert_array_equal(q.numpy(), p.mask.numpy()[-3:])
        self.assertIs(p.query_mask, q, "built once")
        v1 = copy.deepcopy(d)
        v1["schema_version"] = 1
        self.refused(v1, "workload.kv_heads: unknown key")
        d["workload"]["kv_heads"] = 5
        self.refused(d, "workload.kv_heads: expected a divisor of workload.heads = 12, got 5")

    def cache_rows_doc(self, spec, q_len):
        """A version 3 plan of `spec`'s last q_len rows (mask.rows "last"), hash and density
        those of the q_len x seq_len mask."""
        rows = stof.Mask.from_spec(spec, q_len=q_len)
        d = copy.deepcopy(self.doc)
        d["schema_version"] = 3
        d["workload"].update({"seq_len": spec["seq_len"], "heads": 32, "kv_heads": 8,
                              "q_len": q_len, "head_dim": 128, "dtype": "bf16"})
        d["mask"] = {"spec": spec, "rows": "last", "seq_len": spec["seq_len"],
                     "hash": rows.hash_hex(), "density": rows.density}
        d["mha"] = {"kernel": "block_wise", "block_m": 64, "block_n": 64, "num_warps": 5,
                    "chosen_by": "shape"}
        return d, rows

    def test_cache_rows_version_three(self):
        # Issue 33: a KV cache past a square mask's 32768 keys; the plan holds the spec's last
        # q_len rows (mask.rows "last"), regenerated from those rows and hash-checked.
        spec = {"pattern": "sliding_window", "seq_len": 131072, "width": 4096}
        d, rows = self.cache_rows_doc(spec, 1)
        p = stof.load_plan(self.write(d, "long.json"))
        self.assertEqual((p.mask_rows, p.q_len, p.kv_heads, p.shape[2]), ("last", 1, 8, 131072))
        self.assertEqual((p.mask.q_len, p.mask.kv_len), (1, 131072))
        self.assertEqual(p.mask, rows)
        self.assertIsNone(p.mask.spec, "the spec describes the square mask, not these rows")
        self.assertIs(p.query_mask, p.mask)
        self.assertEqual(p.doc["mask"]["rows"], "last")
        self.assertEqual(stof.load_plan(EXAMPLE, check_mask=False).mask_rows, "all")
        bb = {"pattern": "bigbird", "seq_len": 65536, "seed": 3}
        d4, rows4 = self.cache_rows_doc(bb, 4)
        self.assertEqual(stof.load_plan(self.write(d4, "bb.json")).mask, rows4)
        # A corrupted hash: refused when the rows are regenerated.
        bad = copy.deepcopy(d)
        bad["mask"]["hash"] = "0123456789abcdef"
        with self.assertRaises(stof.PlanError) as cm:
            stof.load_plan(self.write(bad))
        self.assertIn("mask.hash: the plan was made for mask 0123456789abcdef, but its spec's "
                      "last 1 rows now generate " + rows.hash_hex(), str(cm.exception))
        bad = copy.deepcopy(d)
        del bad["mask"]["rows"]
        self.refused(bad, "mask.rows: required when workload.seq_len (131072) is past a square "
                          "mask's 32768")
        bad = copy.deepcopy(d)
        bad["schema_version"] = 2
        self.refused(bad, "workload.seq_len: expected an integer <= 32768, got 131072")

    def test_wrong_types_and_ranges(self):
        d = copy.deepcopy(self.doc)
        d["workload"]["batch"] = 0
        self.refused(d, "workload.batch: expected an integer >= 1, got 0")
        d = copy.deepcopy(self.doc)
        d["workload"]["batch"] = "8"
        self.refused(d, "workload.batch: expected an integer, got \"8\"")
        d = copy.deepcopy(self.doc)
        d["workload"]["head_dim"] = 64.0
        self.refused(d, "workload.head_dim: expected an integer, got 64.0")
        d = copy.deepcopy(self.doc)
        d["mha"]["num_warps"] = 3
        self.refused(d, "mha.num_warps: expected one of 1, 2, 4, 5, 8, 12, got 3")
        d = copy.deepcopy(self.doc)
        d["workload"]["batchsize"] = 1
        self.refused(d, "workload.batchsize: unknown key")
        d = copy.deepcopy(self.doc)
        del d["mha"]
        self.refused(d, "mha: required field is missing")
        d = copy.deepcopy(self.doc)
        d["schema_version"] = 4
        d["newer_field"] = 1
        self.refused(d, "schema_version: unsupported version 4 (this build reads 1..3)")
        d = copy.deepcopy(self.doc)
        d["mask"]["seq_len"] = 512
        self.refused(d, "mask.seq_len: expected 1024 (workload.seq_len), got 512")
        d = copy.deepcopy(self.doc)
        d["tuning"]["seed"] = 2 ** 60
        self.refused(d, "tuning.seed")
        d = copy.deepcopy(self.doc)
        d["mask"]["spec"]["pattern"] = "stripes"
        self.refused(d, "mask.spec.pattern: unknown pattern \"stripes\" (known: full")
        d = copy.deepcopy(self.doc)
        d["mask"]["spec"]["doc_lengths"] = [1024]
        self.refused(d, "mask.spec.doc_lengths: only 'document' takes document lengths")

    def test_malformed_and_truncated(self):
        with open(EXAMPLE) as f:
            text = f.read()
        self.refused(text[: len(text) // 2], "not valid JSON")
        self.refused("", "file is empty")
        self.refused("[1, 2]", "expected a JSON object at the top level, got [1,2]")
        self.refused(text.replace('"batch": 8', '"batch": 8, "batch": 8', 1),
                     "batch: duplicate key")
        missing = os.path.join(self.dir.name, "nosuch.json")
        with self.assertRaises(stof.PlanError) as cm:
            stof.load_plan(missing)
        self.assertIn(f"{missing}: cannot open", str(cm.exception))

    def test_inline_mask_checked(self):
        L = 16
        i, j = np.indices((L, L))
        arr = j <= i
        m = stof.Mask(arr)
        d = copy.deepcopy(self.doc)
        d["workload"]["seq_len"] = L
        d["mask"] = {"inline": array_to_runs(arr), "seq_len": L, "hash": m.hash_hex(),
                     "density": m.density}
        p = stof.load_plan(self.write(d))
        self.assertEqual(p.mask, m)
        d["mask"]["hash"] = "0" * 16
        self.refused(d, "mask.hash: does not match the inline mask")
        d["mask"]["hash"] = m.hash_hex()
        d["mask"]["density"] = 0.5
        self.refused(d, "mask.density: does not match")
        d["mask"]["density"] = m.density
        d["mask"]["inline"]["runs"][3] = [2, 1, 1, 1]
        self.refused(d, "mask.inline.runs[3][2]: run starts at 1, before the end of the previous "
                        "run (3); runs must be sorted")

    def test_spec_mask_regenerated_and_hash_checked(self):
        p = stof.load_plan(EXAMPLE)
        self.assertEqual(p.mask.hash_hex(), self.doc["mask"]["hash"])
        self.assertEqual(p.mask.seq_len, 1024)
        d = copy.deepcopy(self.doc)
        d["mask"]["hash"] = "0123456789abcdef"
        with self.assertRaises(stof.PlanError) as cm:
            stof.load_plan(self.write(d))
        self.assertIn("mask.hash: the plan was made for mask 0123456789abcdef", str(cm.exception))
        d = copy.deepcopy(self.doc)
        d["mask"]["spec"]["width"] = 5000
        self.refused(d, "mask.spec.width: must be in 1..1024, got 5000")
        # check_mask=False defers generating the mask and its hash check to plan.mask.
        d = copy.deepcopy(self.doc)
        d["mask"]["hash"] = "0123456789abcdef"
        p = stof.load_plan(self.write(d), check_mask=False)
        with self.assertRaises(stof.PlanError):
            p.mask

    def test_check_run_warns(self):
        p = stof.load_plan(EXAMPLE, check_mask=False)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            self.assertEqual(p.check_run("H100-SXM-80GB", (8, 12, 1024, 64)), [])
            texts = p.check_run("RTX-4090", (1, 12, 1024, 64))
        self.assertEqual(len(texts), 2)
        self.assertIn("plan made on H100-SXM-80GB, running on RTX-4090", texts[0])
        self.assertIn("batch 1 (plan 8)", texts[1])
        self.assertEqual(len(w), 2)


class MaskTest(unittest.TestCase):
    def test_engine_hash_and_checks(self):
        i, j = np.indices((4, 4))
        m = stof.Mask(j <= i)  # `stof mask --pattern causal --seq 4 --json`: f58ab7c0ed24b309
        self.assertEqual(m.hash_hex(), "f58ab7c0ed24b309")
        self.assertEqual((m.nnz, m.density), (10, 0.625))
        self.assertEqual(stof.Mask(np.array(j <= i)), m)
        for bad, text in ((np.ones((4, 4), np.uint8), "expected a bool array"),
                          (np.ones((4, 5, 1), bool), "expected a 2-D [L_q, L_k] array"),
                          (np.ones((0, 0), bool), "L_q must be in 1..262144"),
                          (np.ones((4, 0), bool), "L_k must be in 1..262144"),
                          (np.ones((1, 262145), bool), "L_k must be in 1..262144"),
                          # A view of one element: refused before anything is allocated.
                          (np.broadcast_to(np.ones(1, bool), (4097, 262144)),
                           "4097 x 262144 is more than 32768 x 32768 cells")):
            with self.assertRaises(stof.StofError) as cm:
                stof.Mask(bad)
            self.assertIn(text, str(cm.exception))
        # A decode row over 131072 keys (past a square mask's side): kept, hashed as the
        # engine hashes it.
        wide = stof.Mask.causal(1, 131072)
        self.assertEqual((wide.q_len, wide.kv_len, wide.nnz), (1, 131072, 131072))
        self.assertEqual(len(wide.hash_hex()), 16)

    def test_registry_finds_a_live_mask_after_an_equal_one_died(self):
        """Two Masks of one content share the attention op's key; the first dying must leave
        the second findable (a WeakSet kept only one of two equal Masks)."""
        import gc
        from stof.mask import lookup
        first = stof.Mask(np.ones((3, 7), bool), source="first")
        second = stof.Mask(np.ones((3, 7), bool), source="second")
        self.assertEqual(first.key, second.key)
        del first
        gc.collect()
        self.assertIs(lookup(second.key), second)
        key = second.key
        del second
        gc.collect()
        with self.assertRaises(stof.StofError) as cm:
            lookup(key)
        self.assertIn("no live stof.Mask", str(cm.exception))

    def test_rectangular_and_bottom_right_causal(self):
        """A KV cache's rows: L_q x L_k masks, causal aligned to the bottom right."""
        m = stof.Mask.causal(3, 5)
        self.assertEqual((m.q_len, m.kv_len, m.seq_len), (3, 5, 5))
        expected = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], bool)
        np.testing.assert_array_equal(m.numpy(), expected)
        self.assertTrue(stof.Mask.causal(1, 4096).numpy().all(), "a decode row attends all")
        i, j = np.indices((6, 6))
        self.assertEqual(stof.Mask.causal(6), stof.Mask(j <= i))
        self.assertIn("L_q=3, L_k=5", repr(m))
        self.assertEqual(m.bytes_u8().size, 15)
        for q_len, kv_len in ((0, 4), (5, 4)):
            with self.assertRaises(stof.StofError) as cm:
                stof.Mask.causal(q_len, kv_len)
            self.assertIn("1 <= q_len <= kv_len", str(cm.exception))

    def test_attention_without_torch_says_so(self):
        import importlib.util
        if importlib.util.find_spec("torch") is not None:
            self.skipTest("torch is installed: the GPU tests cover attention")
        with self.assertRaises(stof.StofError) as cm:
            stof.attention(None, None, None)
        self.assertIn("needs PyTorch", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
