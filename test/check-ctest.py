# Checks the properties of every ctest entry: each has a TIMEOUT, none a PASS_REGULAR_EXPRESSION.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: check-ctest.py CTEST BUILD_DIR

Reads `ctest --show-only=json-v1` in BUILD_DIR. A test without a TIMEOUT can hang CI
for ctest's default 1500 s (or forever, without it); PASS_REGULAR_EXPRESSION makes
ctest ignore the exit code (use test/expect-output.sh). Prints each offender; exits 1
if there is any.
"""

import json
import subprocess
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ctest, build = sys.argv[1:]
    listing = subprocess.run([ctest, "--show-only=json-v1"], cwd=build, capture_output=True,
                             text=True, check=True).stdout
    tests = json.loads(listing)["tests"]
    problems = []
    for test in tests:
        properties = {p["name"]: p["value"] for p in test.get("properties", [])}
        if not properties.get("TIMEOUT"):
            problems.append(f"{test['name']}: no TIMEOUT")
        if "PASS_REGULAR_EXPRESSION" in properties:
            problems.append(f"{test['name']}: PASS_REGULAR_EXPRESSION ignores the exit code "
                            "(use test/expect-output.sh)")
    for line in problems:
        print(f"check-ctest: {line}")
    print(f"check-ctest: {len(tests)} tests, {len(problems)} problems")
    return 1 if problems or not tests else 0


if __name__ == "__main__":
    sys.exit(main())
