"""CPU tests of stof/_warn.py: a reason warns once per process until reset(), other reasons
still warn, and the warning points at the line stacklevel names."""

import inspect
import unittest
import warnings

import _util  # noqa: F401  (sys.path)

from stof import _warn


def library_call(key):
    # stands for a package function: the warning should name its caller (this file's test)
    _warn.warn_once(key, f"stof test: {key}")


class WarnOnce(unittest.TestCase):
    def setUp(self):
        _warn.reset()

    def test_once_per_reason_until_reset(self):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            library_call("a")
            library_call("a")
            library_call(("b", 1))
            library_call(("b", 1))
            _warn.reset()
            library_call("a")
        self.assertEqual([str(x.message) for x in w],
                         ["stof test: a", "stof test: ('b', 1)", "stof test: a"])

    def test_points_at_the_callers_caller(self):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            line = inspect.currentframe().f_lineno + 1
            library_call("line")
        self.assertEqual(len(w), 1)
        self.assertEqual((w[0].filename, w[0].lineno), (__file__, line))


if __name__ == "__main__":
    unittest.main()
