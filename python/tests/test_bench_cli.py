"""CPU test of python/bench/hf_compare.py (the Hugging Face / bridge benchmark): --dry-run lists
the cases and exits 0 without importing torch (a stub torch that raises on import is put first
on the path), and bad arguments exit 2 with the reason. The benchmark itself needs a GPU."""

import os
import subprocess
import sys
import tempfile
import unittest

import _util

SCRIPT = os.path.join(_util.REPO, "python", "bench", "hf_compare.py")


def run(*args):
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "torch.py"), "w") as f:
            f.write("raise ImportError('hf_compare --dry-run must not import torch')\n")
        env = dict(os.environ, PYTHONPATH=d)
        return subprocess.run([sys.executable, SCRIPT] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env, timeout=60)


class BenchCliTest(unittest.TestCase):
    def test_dry_run_lists_cases_without_torch(self):
        p = run("--dry-run")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertIn("bert-base/N12/16x2048/sliding_window (stof, flex_attention, sdpa)", lines)
        self.assertIn("gpt2/N12/1x128/bigbird (stof, flex_attention, sdpa)", lines)
        cli = "bridge/8x512/bigbird stof bench mha --pattern bigbird --seq 512 --batch 8"
        self.assertTrue(any(ln.startswith(cli + " --heads 12 --dim 64") for ln in lines), lines)
        self.assertEqual(lines[-1], "18 cases; time budget 300 s")

    def test_dry_run_selection(self):
        p = run("--dry-run", "--models", "gpt2", "--shapes", "2x256", "--masks", "bigbird",
                "--parts", "models", "--layers", "2", "--impls", "stof,sdpa")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.splitlines()[0], "gpt2/N2/2x256/bigbird (stof, sdpa)")

    def test_bad_arguments_exit_2_with_reason(self):
        for args, why in ((["--shapes", "8x"], "--shapes: expected BATCHxSEQ"),
                          (["--models", "llama"], "--models: expected a comma list"),
                          (["--impls", "eager"], "--impls: expected a comma list"),
                          (["--bridge-runs", "10"], "--bridge-runs >= 50")):
            with self.subTest(args=args):
                p = run("--dry-run", *args)
                self.assertEqual(p.returncode, 2)
                self.assertIn(why, p.stderr)


if __name__ == "__main__":
    unittest.main()
