# Checks that a Python environment holds exactly the versions pinned in scripts/requirements.lock.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: check_requirements.py [LOCK]   (run with the environment's Python)

Prints each pinned package that is missing or at another version; exits 1 if any is.
The conformance and zoo expected-failure lists hold for the pinned onnx/onnxruntime.
"""

import importlib.metadata
import os
import sys

LOCK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "requirements.lock")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else LOCK
    problems, pins = [], 0
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name, _, pinned = line.partition("==")
            pins += 1
            try:
                installed = importlib.metadata.version(name)
            except importlib.metadata.PackageNotFoundError:
                problems.append(f"{name}: not installed, pinned {pinned}")
                continue
            if installed != pinned:
                problems.append(f"{name}: {installed} installed, pinned {pinned}")
    for p in problems:
        print(f"check_requirements: {p}")
    print(f"check_requirements: {pins} pinned packages, {len(problems)} differ"
          + (" (run scripts/setup)" if problems else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
