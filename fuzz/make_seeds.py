#!/usr/bin/env python3
# Writes the seed corpus of one fuzz target from the test models.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: make_seeds.py onnx|mlir|artifact OUTDIR [MODELSDIR]

onnx:     every model of test/Import/ONNX/make_models.py, make_control_flow.py and
          test/hostile/make_hostile.py (less the three larger than 64 KiB:
          the deep chain and the rank bombs, which would slow every mutation);
mlir:     every test/**/*.mlir and examples/*.mlir, split at `// -----`;
artifact: byte 0 + each artifact in MODELSDIR (the fake artifacts the
          runtime tests build: BUILD/test/unit/runtime/models), and byte 1 + 32 seeded
          random descriptor recipes (see ArtifactLoadFuzzer.cpp).
"""
import glob
import hashlib
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_SEED = 64 * 1024


def write(out, data):
    if len(data) > MAX_SEED:
        return 0
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
    return 1


def onnx_seeds(out, models):
    count = 0
    with tempfile.TemporaryDirectory() as tmp:
        for script in ["test/Import/ONNX/make_models.py", "test/Import/ONNX/make_control_flow.py",
                       "test/hostile/make_hostile.py"]:
            subprocess.run([sys.executable, os.path.join(ROOT, script),
                            os.path.join(tmp, os.path.basename(script))], check=True)
        # os.walk, not a recursive glob: the external-data cases hold
        # symlinks to their parent directory.
        for directory, _, files in os.walk(tmp):
            for name in files:
                path = os.path.join(directory, name)
                if name.endswith(".onnx") and not os.path.islink(path):
                    with open(path, "rb") as f:
                        count += write(out, f.read())
    return count


def mlir_seeds(out, models):
    count = 0
    paths = glob.glob(os.path.join(ROOT, "test", "**", "*.mlir"), recursive=True)
    paths += glob.glob(os.path.join(ROOT, "examples", "*.mlir"))
    for path in sorted(paths):
        with open(path, "rb") as f:
            for piece in f.read().split(b"// -----"):
                count += write(out, piece)
    return count


def artifact_seeds(out, models):
    count = 0
    for path in sorted(glob.glob(os.path.join(models or "", "*.so"))):
        with open(path, "rb") as f:
            count += write(out, b"\0" + f.read())
    rng = random.Random(1)
    for _ in range(32):
        count += write(out, b"\1" + bytes(rng.randrange(256) for _ in range(96)))
    return count


def main(argv):
    if len(argv) not in (3, 4) or argv[1] not in ("onnx", "mlir", "artifact"):
        sys.exit(__doc__)
    target, out = argv[1:3]
    models = argv[3] if len(argv) == 4 else None
    os.makedirs(out, exist_ok=True)
    count = globals()[target + "_seeds"](out, models)
    print(f"make_seeds: {count} {target} seeds in {out}")


if __name__ == "__main__":
    main(sys.argv)
