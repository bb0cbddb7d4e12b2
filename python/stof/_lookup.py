"""Finding a build artefact the package runs or loads: $ENV when set (an error naming it if that
file does not exist), else the first of the build-tree paths that exists, else None. Used by
_engine.py (libstof_engine_capi.so) and _cli.py (the stof CLI), which say what to build."""

import os

from ._capi import StofError


def find(env_var, candidates):
    """The path to use, or None when neither $env_var nor any candidate names a file."""
    env = os.environ.get(env_var, "")
    if env:
        if not os.path.isfile(env):
            raise StofError(f"{env_var}={env}: no such file (unset it to use the build tree's)")
        return env
    for p in candidates:
        if os.path.isfile(p):
            return p
    return None
