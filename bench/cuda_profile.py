# Where a CUDA artifact's time goes: dispatch spans and per-kernel times.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: cuda_profile.py ARTIFACT.so --kiln-run PATH [--out DIR] [--ncu] [-- kiln-run args]

On the GPU machine: runs `kiln-run ARTIFACT --device cuda --warmup 2 --bench 5
--profile` (the per-dispatch table: each dispatch's span, fused kernels
included) and, with --ncu, one run under `ncu --clock-control none` reading
gpu__time_duration and the grid of every kernel launch, then prints the
kernels ranked by total time (name, launches, grid, ms, share). Kernel names
are kilnc's (`kiln_entry_kernel_N`): `kilnc --emit=ptx` of the same model says
what each is. Full outputs go to DIR when given.
"""

import argparse
import csv
import io
import os
import subprocess
import sys

UNITS = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "second": 1e3,
         "ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("artifact")
    p.add_argument("--kiln-run", required=True)
    p.add_argument("--out")
    p.add_argument("--ncu", action="store_true")
    p.add_argument("--top", type=int, default=30)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    args = p.parse_args()
    extra = [a for a in args.rest if a != "--"]
    name = os.path.basename(args.artifact).removesuffix(".so")
    run = subprocess.run([args.kiln_run, args.artifact, "--device", "cuda", *extra, "--warmup",
                          "2", "--bench", "5", "--profile"], capture_output=True, text=True)
    if args.out:
        with open(os.path.join(args.out, f"{name}.profile.txt"), "w") as f:
            f.write(run.stdout + run.stderr)
    lines = run.stdout.splitlines()
    print(f"== {name}: kiln-run --profile (rc {run.returncode})")
    print("\n".join(lines[:args.top + 12]))
    if run.returncode:
        print(run.stderr[-2000:])
        return 1
    if not args.ncu:
        return 0
    prof = subprocess.run(["ncu", "--clock-control", "none", "--csv", "--metrics",
                           "gpu__time_duration.sum,launch__grid_size,launch__block_size",
                           args.kiln_run, args.artifact, "--device", "cuda", *extra],
                          capture_output=True, text=True)
    if prof.returncode:
        print("ncu failed:", (prof.stderr or prof.stdout)[-2000:])
        return 1
    text = prof.stdout[prof.stdout.find('"ID"'):]
    if args.out:
        with open(os.path.join(args.out, f"{name}.ncu.csv"), "w") as f:
            f.write(text)
    launches = {}
    for row in csv.DictReader(io.StringIO(text)):
        launch = launches.setdefault(row["ID"], {"name": row["Kernel Name"]})
        value = row["Metric Value"].replace(",", "")
        if row["Metric Name"] == "gpu__time_duration.sum":
            launch["ms"] = float(value) * UNITS[row["Metric Unit"]]
        elif row["Metric Name"] == "launch__grid_size":
            launch["grid"] = int(float(value))
        elif row["Metric Name"] == "launch__block_size":
            launch["block"] = int(float(value))
    kernels = {}
    for launch in launches.values():
        k = kernels.setdefault(launch["name"], {"n": 0, "ms": 0.0, "grid": launch.get("grid"),
                                                "block": launch.get("block")})
        k["n"] += 1
        k["ms"] += launch.get("ms", 0.0)
    total = sum(k["ms"] for k in kernels.values())
    print(f"== {name}: {len(launches)} kernel launches, {total:.3f} ms of kernel time (ncu)")
    print("| kernel | launches | grid x block | ms | share |")
    print("| --- | ---: | --- | ---: | ---: |")
    for kname, k in sorted(kernels.items(), key=lambda kv: -kv[1]["ms"])[:args.top]:
        print(f"| {kname} | {k['n']} | {k['grid']}x{k['block']} | {k['ms']:.4f} "
              f"| {100 * k['ms'] / total:.1f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
