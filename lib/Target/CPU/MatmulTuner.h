//===- MatmulTuner.h - One configuration per CPU matmul ---------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kiln-cpu-matmul's choice of a configuration (MatmulTuning.h) for each
// matmul or conv's taps it rewrites: the canonical signature of the op, its
// key, the tuning database's winner for the key or the cost model's pick,
// and the record of each choice in the module's `kiln.tuning` array that
// kilnc --report=tuning prints.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_TARGET_CPU_MATMULTUNER_H
#define KILN_LIB_TARGET_CPU_MATMULTUNER_H

#include "MatmulLoops.h"

#include "kiln/Target/CPU/MatmulTuning.h"
#include "kiln/Target/CPU/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace kiln::matmul_tuning {

/// The module attribute holding the choices: an array of dictionaries
/// {dispatch, nodes, key, signature, config, source, time_us}.
inline constexpr llvm::StringLiteral kTuningAttr = "kiln.tuning";

/// The canonical signature of C (+)= A B (a matmul, or a conv's taps with
/// `taps`): its kind, operand shapes, strides and dtypes, which
/// operands are weights, whether C starts fresh, the vector registers
/// (width, and their count unless 32: AVX-512 keys read as before the count
/// was part of them) and the epilogue's (and prologue's) structure: their op
/// names and operand types, not their constants' values.
std::string matmulSignature(mlir::Value a, mlir::Value b, mlir::Value c,
                            bool fresh, mlir::linalg::GenericOp epilogue, bool constantA,
                            bool constantB, const std::optional<matmul_loops::ConvTaps> &taps,
                            VectorRegisters vectors);

/// Chooses each matmul's options and records the choice.
class MatmulTuner {
public:
  explicit MatmulTuner(const KilnCPUMatmulPassOptions &base) : base(base) {}

  /// Reads `base.tuned` (KEY=CONFIG@MICROSECONDS entries); an error names
  /// the bad entry.
  mlir::LogicalResult parseTuned(mlir::ModuleOp module);

  /// The options to rewrite `op` with: the database's configuration for
  /// `signature`'s key, else the cost model's (base.costModel), else base.
  KilnCPUMatmulPassOptions choose(mlir::Operation *op, llvm::StringRef signature,
                                  const MatmulProblem &problem);

  /// Writes the choices to the module's kiln.tuning attribute.
  void record(mlir::ModuleOp module) const;

private:
  struct Winner {
    MatmulConfig config;
    double microseconds;
  };
  KilnCPUMatmulPassOptions base;
  llvm::StringMap<Winner> tuned;
  llvm::SmallVector<mlir::Attribute> choices;
  llvm::StringSet<> recorded;
};

} // namespace kiln::matmul_tuning

#endif // KILN_LIB_TARGET_CPU_MATMULTUNER_H
