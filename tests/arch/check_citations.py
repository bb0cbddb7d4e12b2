#!/usr/bin/env python3
"""The project cites only itself: every relative link of a Markdown page and every repository
path a source file or page names (`docs/kernels.md`, `kernels/attention/prepared_mha.h`, ...)
must exist. Run by tests/arch/citations_test.py (ctest `citations`); `python3 check_citations.py
ROOT` prints each broken citation as "file: link|path: target" and exits 1 when there is one.
Skipped: build folders, docs/bench/ (run logs quote the paths of their machines) and
tests/arch/ (its tests build trees with made-up paths)."""

import os
import re
import sys

SKIP_DIRS = {".git", ".devdeps", ".gl", ".whl", "node_modules", "__pycache__"}
SKIP_PREFIXES = ("docs/bench", "tests/arch", "build")
EXTENSIONS = {".md", ".h", ".cpp", ".cu", ".cuh", ".py", ".sh", ".cmake", ".txt"}
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# A repository path: a top-level folder of the project, then a file with a known extension.
PATH = re.compile(r"(?<![\w/.~-])((?:docs|engine|kernels|app|profiler|python|tests|scripts|assets)"
                  r"/[\w./-]*[\w-]\.(?:h|cpp|cu|cuh|py|md|sh|json|txt|cmake))\b")


def files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and
                       not os.path.join(rel, d).lstrip("./").startswith(SKIP_PREFIXES)]
        for name in filenames:
            if os.path.splitext(name)[1] in EXTENSIONS or name == "CMakeLists.txt":
                yield os.path.join(dirpath, name)


def broken(root):
    """[(file, kind, target)] of every citation that points at nothing."""
    out = []
    for path in files(root):
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            continue
        rel = os.path.relpath(path, root)
        if path.endswith(".md"):
            for m in LINK.finditer(text):
                target = m.group(1).split("#")[0]
                if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue  # an anchor on the page, or a URL
                if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(path),
                                                                    target))):
                    out.append((rel, "link", target))
        for m in PATH.finditer(text):
            if not os.path.exists(os.path.join(root, m.group(1))):
                out.append((rel, "path", m.group(1)))
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    bad = broken(os.path.abspath(root))
    for rel, kind, target in bad:
        print(f"{rel}: {kind}: {target}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
