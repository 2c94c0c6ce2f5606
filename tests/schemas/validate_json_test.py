#!/usr/bin/env python3
"""Shows that validate_json.py (and so the schema test in
tests/integration/json_schema_test.cc) fails when output and schema disagree:
each case runs the script on a document that breaks docs/schemas in one way.

  validate_json_test.py SCHEMA_DIR
"""
import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "validate_json.py")
SCHEMAS = sys.argv.pop(1) if len(sys.argv) > 1 else "docs/schemas"

STATE = {"active": False, "window_end_unix_ms": 0}
CAPTURE = {"armed": False, "growth_bytes": 0, "keep": 0, "high_water_bytes": 0,
           "taken_total": 1, "held": [{"sequence": 1, "created_unix_ms": 1700000000000,
                                       "allocated_bytes": 1 << 30, "size_bytes": 4096}]}
DEACTIVATE = {"schema_version": 1, "pid": 42, "previous": STATE, "current": STATE,
              "capture": CAPTURE, "activation_generation": 3}
WATCH_FIGURES = ["allocated", "active", "metadata", "resident", "mapped", "retained", "rss_bytes"]
WATCH = dict({"schema_version": 1, "pid": 42, "allocator": "jemalloc", "sample": 1,
              "unix_ms": 1700000000000, "interval_seconds": 0.0, "fragmentation_ratio": 0.1,
              "delta": {k: 0 for k in WATCH_FIGURES},
              "per_second": {k: 0.0 for k in WATCH_FIGURES}},
             **{k: 1024 for k in WATCH_FIGURES})
OUTCOME = {"schema_version": 1, "target": "42", "pid": 42, "command": "demo", "address": "",
           "ok": True, "exit_code": 0, "error_code": "", "error": "", "elapsed_ms": 3,
           "result": DEACTIVATE}


def schema(name):
    return os.path.join(SCHEMAS, name + ".schema.json")


class ValidateJsonTest(unittest.TestCase):
    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)

    def check(self, name, text, *extra):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write(text)
        try:
            return self.run_script(schema(name), f.name, *extra)
        finally:
            os.unlink(f.name)

    def assert_invalid(self, result, *fragments):
        self.assertEqual(result.returncode, 1, result.stderr)
        for fragment in fragments:
            self.assertIn(fragment, result.stderr)

    def test_a_document_that_follows_its_schema_passes(self):
        r = self.check("deactivate", json.dumps(DEACTIVATE))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_missing_key_fails(self):
        doc = copy.deepcopy(DEACTIVATE)
        del doc["activation_generation"]
        self.assert_invalid(self.check("deactivate", json.dumps(doc)),
                            "'activation_generation' is a required property")

    def test_a_key_of_another_type_fails(self):
        doc = copy.deepcopy(DEACTIVATE)
        doc["previous"]["active"] = "false"
        self.assert_invalid(self.check("deactivate", json.dumps(doc)), "at previous/active",
                            "is not of type 'boolean'")

    def test_an_unknown_key_in_our_own_object_fails(self):
        doc = dict(DEACTIVATE, activation_gen=3)
        self.assert_invalid(self.check("deactivate", json.dumps(doc)), "activation_gen")

    def test_another_schema_version_fails(self):
        doc = dict(DEACTIVATE, schema_version=2)
        self.assert_invalid(self.check("deactivate", json.dumps(doc)), "at schema_version")

    def test_a_bad_line_of_json_lines_is_named_by_its_line(self):
        bad = dict(WATCH, sample="2")
        text = json.dumps(WATCH) + "\n" + json.dumps(bad) + "\n"
        self.assert_invalid(self.check("stats-watch", text, "--lines"), ":2: at sample")

    def test_output_that_is_not_json_fails(self):
        self.assert_invalid(self.check("deactivate", "pid 42: deactivated\n"), "not JSON")
        self.assert_invalid(self.check("stats-watch", "", "--lines"), "no JSON lines")

    def test_a_multi_target_result_is_checked_against_the_commands_schema(self):
        good = json.dumps(OUTCOME)
        r = self.check("multi-target", good, "--lines", "--result-schema", schema("deactivate"))
        self.assertEqual(r.returncode, 0, r.stderr)
        bad = copy.deepcopy(OUTCOME)
        del bad["result"]["pid"]
        self.assert_invalid(
            self.check("multi-target", json.dumps(bad), "--lines", "--result-schema",
                       schema("deactivate")), "result: at (top level)", "'pid'")

    def test_a_failed_target_has_an_empty_result(self):
        failed = dict(OUTCOME, ok=False, exit_code=3, error_code="not_found", error="gone")
        self.assert_invalid(self.check("multi-target", json.dumps(failed), "--lines"),
                            "at result")
        failed["result"] = {}
        self.assertEqual(self.check("multi-target", json.dumps(failed), "--lines").returncode, 0)

    def test_lifetimes_sites_need_every_figure_and_allow_null_percentiles(self):
        site = {"function": "Parse", "allocated_bytes": 10.5, "freed_bytes": 10.5,
                "survived_bytes": 0.0, "allocated_objects": 1.2, "freed_objects": 1.2,
                "survived_objects": 0.0, "allocation_rate_bytes_per_second": 3.0,
                "lifetime_p50_ns": None, "lifetime_p90_ns": None, "lifetime_p99_ns": 7}
        header = {"pid": 1, "window_start_unix_ms": 1700000000000, "window_ns": 10,
                  "window_requested_ms": 0, "ended_by": "client", "records": 1,
                  "records_in_window": 1, "records_lost": False, "covered_ns": 10,
                  "sample_interval": 1024, "record_bound": 100, "clock": "realtime",
                  "clock_resolution_ns": 1}
        doc = {"schema_version": 1, "allocation_profile": header, "sites": [site]}
        r = self.check("report-lifetimes", json.dumps(doc))
        self.assertEqual(r.returncode, 0, r.stderr)
        del doc["sites"][0]["lifetime_p90_ns"]
        self.assert_invalid(self.check("report-lifetimes", json.dumps(doc)),
                            "'lifetime_p90_ns' is a required property")

    def test_every_schema_in_docs_is_a_valid_schema(self):
        r = self.run_script("--check-schemas", SCHEMAS)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_an_invalid_schema_is_found(self):
        with tempfile.TemporaryDirectory() as directory:
            with open(os.path.join(directory, "bad.schema.json"), "w") as f:
                json.dump({"type": "objekt"}, f)
            self.assert_invalid(self.run_script("--check-schemas", directory),
                                "bad.schema.json: not a valid schema")


if __name__ == "__main__":
    unittest.main()
