"""Running the `stof` command-line tool from Python: the tests compare the package with it
(python/tests) and the benchmarks run it (python/bench). The package itself reads masks, specs
and plans through libstof_engine_capi.so (_engine.py), not through the CLI.

Lookup: $STOF_CLI when set, else the build trees' build/app/stof, then build-nocuda/app/stof,
then `stof` on PATH. Errors are StofError naming the command and stof's own message.
"""

import os
import shutil
import subprocess

from . import _lookup
from ._capi import StofError, _REPO_ROOT

ENV_VAR = "STOF_CLI"
BUILD_TREE_PATHS = [os.path.join(_REPO_ROOT, d, "app", "stof") for d in ("build", "build-nocuda")]


def cli_path():
    found = _lookup.find(ENV_VAR, BUILD_TREE_PATHS) or shutil.which("stof")
    if found:
        return found
    raise StofError(f"the stof CLI was not found: "
                    f"{ENV_VAR} is not set, no {' or '.join(BUILD_TREE_PATHS)}, no stof on PATH "
                    f"(build it: STOF_CUDA=OFF scripts/build build-nocuda)")


def run(argv, what):
    cmd = [cli_path()] + [str(a) for a in argv]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        lines = [ln.strip() for ln in p.stderr.splitlines()
                 if ln.strip() and not ln.startswith("Run with --help")]
        raise StofError(f"{what}: {lines[-1] if lines else 'stof exit ' + str(p.returncode)}")
    return p.stdout
