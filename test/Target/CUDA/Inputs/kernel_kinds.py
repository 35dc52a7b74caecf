# Compiles one end-to-end case of each kind of kernel for CUDA and checks the PTX with ptxas.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: kernel_kinds.py WORKDIR KILNC PTXAS [--gpu sm_90a|sm_80]

For each kind in KINDS, writes the named case of test/e2e/cases.py, compiles it with
`kilnc --target=cuda --emit=ptx`, and assembles the PTX with `ptxas -arch=<gpu>`.
Prints `<kind>: <n> kernels, ptxas ok` or `<kind>: FAIL ...` per kind, then a summary.
"""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "e2e"))
import cases  # noqa: E402

# kind of kernel -> the e2e case that makes one.
KINDS = {
    "matmul": "matmul_127x33x65",
    "batched matmul": "matmul_batched_4d",
    "gemm": "gemm_trans_b_alpha_beta",
    "conv": "conv_3x3_s1_p1",
    "depthwise conv": "conv_depthwise_s1_13",
    "max pool": "max_pool_3x3_s2_p1",
    "avg pool": "avg_pool_exclude_pad",
    "elementwise": "gelu_erf",
    "broadcast elementwise": "add_broadcast",
    "reduction": "reduce_sum_all",
    "inner-axis reduction": "reduce_max_mid",
    "integer reduction": "reduce_sum_i64_5x13",
    "softmax": "softmax_axis1",
    "layer_norm": "layer_norm",
    "transpose": "transpose",
    "gather": "gather_negative_index",
    "concat and slice": "concat_slice",
    "argmax and select": "argmax_select_cast",
}


def main():
    work, kilnc, ptxas = sys.argv[1:4]
    gpu = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--gpu" else "sm_90a"
    bodies = {name: body for family in cases.FAMILIES.values() for name, body, _, _ in family()}
    os.makedirs(work, exist_ok=True)
    failed = 0
    for kind, name in KINDS.items():
        stem = os.path.join(work, name)
        with open(stem + ".mlir", "w") as f:
            f.write(bodies[name] + "\n")
        gpu_flag = [] if gpu == "sm_90a" else [f"--gpu={gpu}"]
        built = subprocess.run([kilnc, "--target=cuda", *gpu_flag, "--emit=ptx", stem + ".mlir",
                                "-o", stem + ".ptx"], capture_output=True, text=True)
        if built.returncode:
            print(f"{kind}: FAIL kilnc: {built.stderr.strip()[:300]}")
            failed += 1
            continue
        with open(stem + ".ptx") as f:
            kernels = len(re.findall(r"^\.(?:visible )?\.entry ", f.read(), re.M))
        assembled = subprocess.run([ptxas, f"-arch={gpu}", stem + ".ptx", "-o", stem + ".cubin"],
                                   capture_output=True, text=True)
        if assembled.returncode or kernels == 0:
            print(f"{kind}: FAIL {kernels} kernels; ptxas: {assembled.stderr.strip()[:300]}")
            failed += 1
            continue
        print(f"{kind}: {kernels} kernels, ptxas ok")
    print(f"kernel kinds on {gpu}: {len(KINDS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
