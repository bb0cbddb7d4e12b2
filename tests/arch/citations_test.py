#!/usr/bin/env python3
"""ctest `citations` (label cpu): the repository cites only files it has
(tests/arch/check_citations.py), and the check finds a broken link and a broken path in a tree
built to have them (so it cannot pass by reading nothing)."""

import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import check_citations as cit  # noqa: E402


class CitationsTest(unittest.TestCase):
    def test_repository_cites_only_itself(self):
        bad = cit.broken(ROOT)
        self.assertEqual(bad, [], "\n".join(f"{f}: {k}: {t}" for f, k, t in bad))

    def test_broken_citations_are_found(self):
        with tempfile.TemporaryDirectory(prefix="stof_cit_") as d:
            os.makedirs(os.path.join(d, "docs"))
            os.makedirs(os.path.join(d, "engine"))
            with open(os.path.join(d, "docs", "a.md"), "w") as f:
                f.write("[ok](a.md) [gone](missing.md) [web](https://example.com) [here](#x)\n")
            with open(os.path.join(d, "engine", "x.h"), "w") as f:
                f.write("// see docs/a.md and docs/nowhere.md, engine/x.h and engine/y.cpp\n")
            bad = sorted(cit.broken(d))
        self.assertEqual(bad, [("docs/a.md", "link", "missing.md"),
                               ("engine/x.h", "path", "docs/nowhere.md"),
                               ("engine/x.h", "path", "engine/y.cpp")])


if __name__ == "__main__":
    unittest.main()
