//===- LoweringFailure.h - Why a kiln op could not be lowered ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The dialect conversion driver keeps a pattern's notifyMatchFailure reason
// only in debug builds of MLIR, and reports an op no pattern lowered as a
// bare "failed to legalize operation". The kiln -> linalg patterns give
// their reasons through failLowering, which also records them for the pass;
// the pass then reports the op's node, its operand and result types and the
// reason instead (LoweringFailures::report).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CONVERSION_KILNTOLINALG_LOWERINGFAILURE_H
#define KILN_LIB_CONVERSION_KILNTOLINALG_LOWERINGFAILURE_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <string>

namespace kiln::lowering {

/// `rewriter.notifyMatchFailure(op, why)`, remembered for the diagnostic.
llvm::LogicalResult failLowering(mlir::RewriterBase &rewriter, mlir::Operation *op,
                                 const llvm::Twine &why);

/// While it lives (one conversion): the reasons failLowering records, and
/// the driver's "failed to legalize" errors, held back for report().
class LoweringFailures {
public:
  explicit LoweringFailures(mlir::MLIRContext *context);
  ~LoweringFailures();

  /// After a failed conversion (which left `root` as it was): one error per
  /// op the driver could not legalize, naming its node, op, operand and
  /// result types, and what is unsupported.
  void report(mlir::Operation *root);

private:
  friend llvm::LogicalResult failLowering(mlir::RewriterBase &, mlir::Operation *,
                                          const llvm::Twine &);
  llvm::DenseMap<mlir::Operation *, std::string> reasons;
  /// (location, op name) of each held-back driver error.
  llvm::SmallVector<std::pair<mlir::Location, std::string>> unlegalized;
  LoweringFailures *previous;
  std::optional<mlir::ScopedDiagnosticHandler> handler;
};

} // namespace kiln::lowering

#endif // KILN_LIB_CONVERSION_KILNTOLINALG_LOWERINGFAILURE_H
