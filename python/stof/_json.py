"""Strict JSON parsing shared by mask files (mask_files.py) and plans (plan.py): duplicate keys
are errors (as the engine's ParseJson), bad UTF-8 and bad JSON name the byte offset; every
problem is raised as the caller's error class with the file name first."""

import json


def parse(data, name, error):
    """bytes -> the decoded document; raises error(f"{name}: ...")."""
    def no_duplicates(pairs):
        d = {}
        for k, v in pairs:
            if k in d:
                raise error(f"{name}: {k}: duplicate key")
            d[k] = v
        return d
    try:
        return json.loads(data.decode("utf-8"), object_pairs_hook=no_duplicates)
    except UnicodeDecodeError as e:
        raise error(f"{name}: not valid UTF-8 (byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise error(f"{name}: not valid JSON (byte {e.pos}): {e.msg} at line {e.lineno}, "
                    f"column {e.colno}") from None
    except RecursionError:
        raise error(f"{name}: JSON nested too deeply") from None
