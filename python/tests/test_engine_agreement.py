"""Python and the `stof` CLI read every file alike: each input of the fuzz corpus
(tests/fuzz/corpus/: NPY, PNG and JSON masks, plans) goes through the package's loader
(stof.Mask.from_file, stof.load_plan; libstof_engine_capi.so) and through `stof mask --mask F
--json` / `stof plan validate F --json`. Both accept it with the same mask hash, or both refuse
it with the same message (the CLI's prefixed with "stof <command>: "). Before, the package had
its own readers, which accepted files stof refused and refused files stof read (issue 34)."""

import glob
import json
import os
import subprocess
import unittest

from _util import REPO
import stof
from stof import _cli, _engine

CORPUS = os.path.join(REPO, "tests", "fuzz", "corpus")


def _have(fn):
    try:
        fn()
        return True
    except stof.StofError:
        return False


def _stof(args):
    p = subprocess.run([_cli.cli_path()] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, errors="replace")
    return p.returncode, p.stdout, p.stderr.strip()


@unittest.skipIf(not _have(_engine.library_path), "libstof_engine_capi.so is not built")
@unittest.skipIf(not _have(_cli.cli_path), "the stof CLI is not built")
class CorpusAgreementTest(unittest.TestCase):
    def check(self, path, python, cli_args, cli_prefix, hash_key):
        try:
            got = ("ok", python(path))
        except stof.StofError as e:
            got = ("refused", str(e))
        rc, out, err = _stof(cli_args + [path, "--json"])
        if rc == 0:
            want = ("ok", json.loads(out)[hash_key])
        else:
            self.assertTrue(err.startswith(cli_prefix), err)
            want = ("refused", err[len(cli_prefix):])
        self.assertEqual(got, want, path)
        return got[0]

    def test_masks(self):
        verdicts = {}
        for kind in ("npy_mask", "png_mask", "json_mask"):
            for path in sorted(glob.glob(os.path.join(CORPUS, kind, "*"))):
                with self.subTest(path=path):
                    verdicts[path] = self.check(path, lambda p: stof.Mask.from_file(p).hash_hex(),
                                                ["mask", "--mask"], "stof mask: ", "hash")
        self.assertGreaterEqual(len(verdicts), 30)
        # The corpus holds both kinds: agreement on refusals alone would prove little.
        self.assertIn("ok", verdicts.values())
        self.assertIn("refused", verdicts.values())

    def test_plans(self):
        verdicts = {}
        for kind in ("plan", "plan_run"):
            for path in sorted(glob.glob(os.path.join(CORPUS, kind, "*"))):
                with self.subTest(path=path):
                    verdicts[path] = self.check(path, lambda p: stof.load_plan(p).mask.hash_hex(),
                                                ["plan", "validate"], "stof plan validate: ",
                                                "mask_hash")
        self.assertGreaterEqual(len(verdicts), 20)
        self.assertIn("ok", verdicts.values())
        self.assertIn("refused", verdicts.values())


if __name__ == "__main__":
    unittest.main()
