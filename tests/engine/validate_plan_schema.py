#!/usr/bin/env python3
"""Validates plan files against docs/plan.schema.json (JSON Schema draft 2020-12).

Used by tests/engine/plan_test.cpp (PlanSchema tests) and by hand:
    validate_plan_schema.py SCHEMA FILE...                  exit 0 when every FILE is valid
    validate_plan_schema.py --expect-invalid SCHEMA FILE... exit 0 when every FILE is invalid
Prints each problem as "FILE: json.path: message". Exit codes: 0 as above, 1 when a file is
not as expected, 2 for usage errors or unreadable files, 3 when python3-jsonschema is missing
(installed by scripts/setup). The schema itself is checked first (a broken schema is exit 2).
"""
import json
import sys

try:
    from jsonschema import Draft202012Validator
except ImportError:
    print("validate_plan_schema: python3-jsonschema is missing; run scripts/setup", file=sys.stderr)
    sys.exit(3)


def json_path(error):
    path = ""
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "(top level)"


def main(argv):
    expect_invalid = False
    if argv and argv[0] == "--expect-invalid":
        expect_invalid = True
        argv = argv[1:]
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    schema_path, files = argv[0], argv[1:]
    try:
        with open(schema_path, encoding="utf-8") as f:
            schema = json.load(f)
        Draft202012Validator.check_schema(schema)
    except Exception as e:  # noqa: BLE001 - any failure here is a usage error
        print(f"{schema_path}: not a valid draft 2020-12 schema: {e}", file=sys.stderr)
        return 2
    validator = Draft202012Validator(schema)
    status = 0
    for name in files:
        try:
            with open(name, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{name}: cannot read: {e}", file=sys.stderr)
            return 2
        errors = sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])
        if expect_invalid:
            if errors:
                print(f"{name}: invalid as expected ({json_path(errors[0])}: {errors[0].message})")
            else:
                print(f"{name}: valid, but it should have been refused")
                status = 1
        else:
            for e in errors:
                print(f"{name}: {json_path(e)}: {e.message}")
            if errors:
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
