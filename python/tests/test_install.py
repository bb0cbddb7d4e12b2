"""CPU test of the package's offline editable install (issue 35): in a fresh virtual environment
(Debian's python3-venv, with the system's site packages for numpy and setuptools),
`pip install --no-index --no-build-isolation -e python` installs it without any index, and the
installed `stof` is the repository's. An isolated build would fetch setuptools from an index,
which is why the README gives --no-build-isolation."""

import os
import subprocess
import sys
import tempfile
import unittest

from _util import REPO


def _venv_available():
    try:
        import ensurepip  # noqa: F401  (python3-venv)
        import venv  # noqa: F401
        import setuptools  # noqa: F401
    except ImportError as e:
        return False, str(e)
    return True, ""


OK, WHY = _venv_available()


@unittest.skipUnless(OK, f"needs python3-venv and python3-setuptools (scripts/setup): {WHY}")
class EditableInstallTest(unittest.TestCase):
    def test_offline_editable_install(self):
        with tempfile.TemporaryDirectory(prefix="stof_venv_") as d:
            env = dict(os.environ, PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
            env.pop("PYTHONPATH", None)
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", d],
                           check=True, capture_output=True, timeout=120)
            py = os.path.join(d, "bin", "python")
            p = subprocess.run([py, "-m", "pip", "install", "--no-index", "--no-build-isolation",
                                "-e", os.path.join(REPO, "python")], capture_output=True,
                               text=True, timeout=300, env=env)
            self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
            p = subprocess.run([py, "-c", "import stof; print(stof.__file__)"],
                               capture_output=True, text=True, timeout=60, env=env,
                               cwd=d)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(os.path.realpath(p.stdout.strip()),
                             os.path.realpath(os.path.join(REPO, "python", "stof",
                                                           "__init__.py")))


if __name__ == "__main__":
    unittest.main()
