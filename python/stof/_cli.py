"""Running the `stof` command-line tool for what only the C++ engine defines: generator masks
(a JSON mask spec, a pattern name with its parameters), regenerated exactly as the engine does.

Lookup: $STOF_CLI when set, else the build trees' build/app/stof, then build-nocuda/app/stof,
then `stof` on PATH. Used by mask.py (Mask.from_spec, Mask.generate, spec-form JSON files) and
plan.py (a plan's spec mask). Errors are StofError naming the command and stof's own message.
"""

import os
import shutil
import subprocess
import tempfile

from ._capi import StofError, _REPO_ROOT

ENV_VAR = "STOF_CLI"
BUILD_TREE_PATHS = [os.path.join(_REPO_ROOT, d, "app", "stof") for d in ("build", "build-nocuda")]


def cli_path():
    env = os.environ.get(ENV_VAR, "")
    if env:
        if not os.path.isfile(env):
            raise StofError(f"{ENV_VAR}={env}: no such file")
        return env
    for p in BUILD_TREE_PATHS:
        if os.path.isfile(p):
            return p
    found = shutil.which("stof")
    if found:
        return found
    raise StofError(f"the stof CLI is needed to generate masks from a spec and was not found: "
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


def mask_to_npy(argv, what):
    """Runs `stof mask ARGV --out TMP.npy --json` and returns the bool numpy array it wrote
    and the engine's hash of it (Mask::HashHex, from the JSON it printed)."""
    import json
    import numpy as np
    with tempfile.TemporaryDirectory(prefix="stof-mask-") as d:
        out = os.path.join(d, "m.npy")
        text = run(["mask"] + list(argv) + ["--out", out, "--json"], what)
        try:
            info = json.loads(text[text.index("{"):])
            engine_hash = info["hash"]
        except (ValueError, KeyError):
            raise StofError(f"{what}: stof mask printed no JSON with a hash: {text[:200]!r}")
        return np.load(out).astype(bool), engine_hash
