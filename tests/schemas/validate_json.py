#!/usr/bin/env python3
"""Validates memprofctl's --json output against docs/schemas/*.schema.json.

  validate_json.py SCHEMA FILE [--lines] [--result-schema SCHEMA]
      FILE holds one JSON document (or, with --lines, one per line, as
      `stats --watch`, `dump --every` and multi-target runs print them).
      --result-schema also checks the `result` of every line whose `ok` is
      true (a multi-target run embeds each target's own document there).
  validate_json.py --check-schemas DIR
      Every DIR/*.schema.json is itself a valid draft 2020-12 schema.

Exit 0 when everything is valid, 1 when something is not (each problem on
stderr with the line and the JSON path), 2 for a usage error.
"""
import argparse
import glob
import json
import os
import sys

import jsonschema


def load_schema(path):
    with open(path, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def where(error):
    return "/".join(str(p) for p in error.absolute_path) or "(top level)"


def problems(validator, document, label):
    return [f"{label}: at {where(e)}: {e.message}"
            for e in sorted(validator.iter_errors(document), key=lambda e: list(e.path))]


def documents(path, lines):
    """Yields (label, parsed document or None, parse error) for FILE."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    chunks = [(f"{path}:{n}", line) for n, line in enumerate(text.splitlines(), 1)] if lines \
        else [(path, text)]
    if lines and not chunks:
        yield path, None, "no JSON lines at all"
    for label, chunk in chunks:
        try:
            yield label, json.loads(chunk), None
        except json.JSONDecodeError as e:
            yield label, None, f"not JSON: {e}"


def validate_file(args):
    validator = load_schema(args.schema)
    result_validator = load_schema(args.result_schema) if args.result_schema else None
    found = []
    for label, document, parse_error in documents(args.file, args.lines):
        if parse_error:
            found.append(f"{label}: {parse_error}")
            continue
        found += problems(validator, document, label)
        if result_validator and isinstance(document, dict) and document.get("ok") is True:
            found += problems(result_validator, document.get("result"), label + " result")
    return found


def check_schemas(directory):
    paths = sorted(glob.glob(os.path.join(directory, "*.schema.json")))
    if not paths:
        return [f"{directory}: no *.schema.json files"]
    found = []
    for path in paths:
        try:
            load_schema(path)
        except (json.JSONDecodeError, jsonschema.SchemaError) as e:
            found.append(f"{path}: not a valid schema: {str(e).splitlines()[0]}")
    return found


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check-schemas", metavar="DIR")
    parser.add_argument("schema", nargs="?")
    parser.add_argument("file", nargs="?")
    parser.add_argument("--lines", action="store_true")
    parser.add_argument("--result-schema")
    args = parser.parse_args(argv)
    if args.check_schemas:
        found = check_schemas(args.check_schemas)
    elif args.schema and args.file:
        try:
            found = validate_file(args)
        except (OSError, json.JSONDecodeError, jsonschema.SchemaError) as e:
            found = [f"cannot validate: {e}"]
    else:
        parser.error("SCHEMA and FILE, or --check-schemas DIR")
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
