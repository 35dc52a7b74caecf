//===- Verify.h - kilnc verify: differential check against onnxruntime -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILNC_VERIFY_H
#define KILN_TOOLS_KILNC_VERIFY_H

namespace kilnc {

/// `kilnc verify ARGS...`: runs the Python verifier shipped beside kilnc
/// (`<bin>/../share/kiln/verify/kiln_verify.py`, docs/verify.md) with the
/// Python of `--python=PATH`, else $KILN_PYTHON, else the test virtualenv this
/// kilnc was built with, else `python3` on PATH; passes it this kilnc and the
/// kiln-run beside it. Returns the verifier's exit code (1 when it cannot start).
int runVerify(int argc, char **argv);

} // namespace kilnc

#endif // KILN_TOOLS_KILNC_VERIFY_H
