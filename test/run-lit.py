# Runs the lit suite for ctest and ends with every skipped test and why it was skipped.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: run-lit.py LIT TEST_DIR [LIT_ARG]...

Runs `LIT -sv --show-unsupported -o RESULTS.json TEST_DIR`, then prints one line per
UNSUPPORTED (skipped) test with the reason lit gave (the features it lacked), so that
a skip is visible in CI's log rather than one number in lit's summary. Exits with
lit's exit code. KILN_LIT_NO_SKIPS=1 makes any skip a failure (exit 1).
"""

import json
import os
import subprocess
import sys
import tempfile


def skip_reason(output):
    """lit's reason for an UNSUPPORTED test: its first non-empty output line."""
    lines = [line.strip() for line in (output or "").splitlines() if line.strip()]
    return lines[0] if lines else "(no reason given)"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    lit, test_dir, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    with tempfile.TemporaryDirectory() as scratch:
        results = os.path.join(scratch, "results.json")
        rc = subprocess.run([lit, "-sv", "--show-unsupported", "-o", results, *extra,
                             test_dir]).returncode
        try:
            with open(results) as f:
                tests = json.load(f)["tests"]
        except (OSError, ValueError, KeyError) as e:
            print(f"run-lit: no results from lit ({e})")
            return rc or 1
    skipped = sorted((t["name"], skip_reason(t.get("output"))) for t in tests
                     if t["code"] == "UNSUPPORTED")
    print(f"\nrun-lit: {len(tests)} tests, {len(skipped)} skipped (UNSUPPORTED)")
    for name, reason in skipped:
        print(f"  skipped: {name}: {reason}")
    if skipped and os.environ.get("KILN_LIT_NO_SKIPS") == "1":
        print("run-lit: KILN_LIT_NO_SKIPS=1 and tests were skipped")
        return rc or 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
