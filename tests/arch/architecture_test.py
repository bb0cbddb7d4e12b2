#!/usr/bin/env python3
"""ctest `architecture` (label cpu): the repository passes check_architecture.py's rules, and
each rule catches a tree built to break it (so the check cannot pass by reading nothing)."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import check_architecture as arch  # noqa: E402


def tree(files):
    """A temporary repository root holding `files` ({path: text}) and the four modules."""
    d = tempfile.TemporaryDirectory(prefix="stof_arch_")
    for module in arch.MODULES:
        os.makedirs(os.path.join(d.name, module), exist_ok=True)
    for path, text in files.items():
        full = os.path.join(d.name, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    return d


class RepositoryTest(unittest.TestCase):
    def test_the_tree_follows_the_rules(self):
        bad = arch.check(ROOT)
        self.assertEqual(bad, [], "\n".join(bad))
        self.assertGreater(sum(1 for _ in arch.sources(ROOT)), 200)  # it read the tree

    def test_command_line(self):
        r = subprocess.run([sys.executable, os.path.join(HERE, "check_architecture.py"), ROOT],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("0 violation(s)", r.stdout)
        with tempfile.TemporaryDirectory() as empty:
            r = subprocess.run([sys.executable, os.path.join(HERE, "check_architecture.py"),
                                empty], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no engine/ folder", r.stderr)


class BrokenTreeTest(unittest.TestCase):
    def violations(self, files):
        d = tree(files)
        try:
            return arch.check(d.name)
        finally:
            d.cleanup()

    def test_engine_including_kernels_profiler_or_app(self):
        bad = self.violations({"engine/a.cpp": '#include "kernels/cuda_backend.h"\n'
                                               '#include "profiler/profiler.h"\n'
                                               '#include "app/common/x.h"\n'})
        self.assertEqual(len(bad), 3, bad)
        self.assertTrue(all(b.startswith("engine/a.cpp:") and "engine/ includes" in b
                            for b in bad), bad)

    def test_core_including_the_engine_above_it(self):
        bad = self.violations({"engine/core/w.cpp": '#include "engine/core/status.h"\n'
                                                    '#include "engine/mask/mask.h"\n'})
        self.assertEqual(bad, ["engine/core/w.cpp:2: engine/core/ includes engine/mask/mask.h "
                               "(core is the bottom of the engine: it includes only core/)"])

    def test_kernels_including_app(self):
        bad = self.violations({"kernels/k.cpp": '\n#include "app/cli/cli_common.h"\n'})
        self.assertEqual(bad, ["kernels/k.cpp:2: kernels/ includes app/cli/cli_common.h "
                               "(nothing below app/ includes it)"])

    def test_app_including_a_private_kernels_header(self):
        bad = self.violations({"app/cli/c.cpp": '#include "kernels/cuda_backend.h"\n'
                                                '#include "kernels/cuda_backend_state.h"\n'})
        self.assertEqual(len(bad), 1, bad)
        self.assertIn("app/ includes kernels/cuda_backend_state.h, not a public", bad[0])

    def test_cuda_through_a_chain_of_headers(self):
        bad = self.violations({
            "engine/top.h": '#include "engine/mid.h"\n',
            "engine/mid.h": '#include "kernels/cuda_check.h"\n',
            "kernels/cuda_check.h": "#include <cuda_runtime.h>\n",
            "app/ok.h": "#include <vector>\n",
        })
        chains = [b for b in bad if "reaches a CUDA header" in b]
        self.assertEqual(len(chains), 2, bad)  # top.h and mid.h; cuda_check.h is allowed
        self.assertIn("engine/top.h -> engine/mid.h -> kernels/cuda_check.h -> "
                      "<cuda_runtime.h>", chains[1])
        self.assertTrue(any(b.startswith("engine/mid.h:") and "engine/ includes" in b
                            for b in bad), bad)

    def test_a_header_including_cupti_directly(self):
        bad = self.violations({"profiler/p.h": "#include <cupti_activity.h>\n"})
        self.assertEqual(len(bad), 1, bad)
        self.assertIn("profiler/p.h -> <cupti_activity.h>", bad[0])

    def test_kernel_folders_including_each_other(self):
        bad = self.violations({"kernels/a/x.cpp": '#include "kernels/b/y.h"\n',
                               "kernels/b/y.h": '#include "kernels/c/z.h"\n',
                               "kernels/c/z.h": '\n#include "kernels/a/w.h"\n',
                               "kernels/c/ok.h": '#include "kernels/common/q.h"\n'})
        self.assertEqual(len(bad), 3, bad)
        self.assertTrue(bad[0].startswith("kernels/a/x.cpp:1: kernels/a/ includes kernels/b/"),
                        bad)
        self.assertTrue(any(b.startswith("kernels/c/z.h:2:") for b in bad), bad)
        self.assertFalse(any("common" in b for b in bad), bad)
    def test_a_panel_including_the_studio(self):
        bad = self.violations({"app/studio/panels/p.cpp": '#include "app/studio/panels/p.h"\n'
                                                          '#include "app/studio/studio.h"\n',
                               "app/studio/panels/p.h": "#pragma once\n",
                               "app/studio/studio.h": "#pragma once\n",
                               # the shell may include it: only panels/ is held to rule 6
                               "app/studio/studio_views.cpp": '#include "app/studio/studio.h"\n'})
        self.assertEqual(bad, ["app/studio/panels/p.cpp:2: a panel includes app/studio/studio.h "
                               "(a panel draws a view state and returns actions; the studio "
                               "fills and applies them)"])

    def test_a_panel_reaching_the_studio_through_a_header(self):
        bad = self.violations({"app/studio/panels/p.h": '#include "app/studio/canvas_key.h"\n',
                               "app/studio/canvas_key.h": '#include "app/studio/studio.h"\n',
                               "app/studio/studio.h": "#pragma once\n"})
        self.assertEqual(len(bad), 1, bad)
        self.assertIn("app/studio/panels/p.h:1: a panel reaches app/studio/studio.h through "
                      "app/studio/canvas_key.h -> app/studio/studio.h", bad[0])

    def test_a_panel_taking_the_studio_or_the_workbench(self):
        for cls in ("Studio", "LayerWorkbench"):
            with self.subTest(cls=cls):
                bad = self.violations({"app/studio/panels/p.h": f"// Was DrawX({cls}& s).\n"
                                                                f"class {cls};\n"
                                                                f"void DrawX({cls}& s);\n"
                                                                f"void DrawY(const {cls} &s);\n"
                                                                f"void DrawZ({cls} const* s);\n"
                                                                f"void DrawW(const {cls}View& v);\n"})
                self.assertEqual([b.split(": ")[0] for b in bad],
                                 ["app/studio/panels/p.h:3", "app/studio/panels/p.h:4",
                                  "app/studio/panels/p.h:5"], bad)
                self.assertTrue(all(f"a panel takes a {cls} " in b for b in bad), bad)

    def test_a_panel_reaching_the_layer_workbench(self):
        bad = self.violations({"app/studio/panels/p.cpp": '#include "app/studio/layer_workbench.h"\n',
                               "app/studio/panels/q.h": '#include "app/studio/tune_view.h"\n',
                               "app/studio/tune_view.h": '#include "app/studio/layer_workbench.h"\n',
                               "app/studio/layer_workbench.h": "#pragma once\n",
                               # the views' builder may include it: only panels/ is held to rule 6
                               "app/studio/layer_views.cpp": '#include "app/studio/layer_workbench.h"\n'})
        self.assertEqual(bad, ["app/studio/panels/p.cpp:1: a panel includes app/studio/layer_workbench.h "
                               "(a panel draws a view state and returns actions; the studio "
                               "fills and applies them)",
                               "app/studio/panels/q.h:1: a panel reaches app/studio/layer_workbench.h "
                               "through app/studio/tune_view.h -> app/studio/layer_workbench.h (a "
                               "panel draws a view state and returns actions; the studio fills and "
                               "applies them)"])

    def test_an_include_cycle_ends(self):
        bad = self.violations({"engine/a.h": '#include "engine/b.h"\n',
                               "engine/b.h": '#include "engine/a.h"\n'})
        self.assertEqual(bad, [])


if __name__ == "__main__":
    unittest.main()
