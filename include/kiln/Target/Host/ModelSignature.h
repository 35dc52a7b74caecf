//===- ModelSignature.h - The inputs and outputs of a compiled model -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===---------------------------------------------------------------------------===//
//
// What the artifact descriptor (kiln-c/abi.h) says about a model: names,
// element types and shapes (with symbolic dim names) of its inputs and
// outputs, read from the tensor-level model function before bufferization.
//
//===---------------------------------------------------------------------------===//

#ifndef KILN_TARGET_HOST_MODELSIGNATURE_H
#define KILN_TARGET_HOST_MODELSIGNATURE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace kiln {

struct TensorSignature {
  std::string name;
  int32_t dtype = 0; // kiln_dtype
  std::vector<int64_t> dims; // -1 for symbolic
  std::vector<std::string> dimNames; // "" for static dims
  /// An output that is an input's buffer updated in place (result attribute
  /// `kiln.aliases_input`, ABI v6 output_aliases): the input's index; -1 else.
  int32_t aliasesInput = -1;
};

struct ModelSignature {
  std::vector<TensorSignature> inputs;
  std::vector<TensorSignature> outputs;
};

/// Reads the signature of the model function (the single public func.func,
/// or @main). Inputs are named by the `kiln.name` argument attribute (else
/// `input_<i>`), outputs by the `kiln.name` result attribute (else
/// `output_<i>`); symbolic dims by `kiln.dim_names` (else `<tensor>_d<i>`).
/// An output marked `kiln.aliases_input = k` records input k, which must
/// have its dtype and dims and no other such output.
/// Fails with a diagnostic on element types the runtime does not know.
mlir::FailureOr<ModelSignature> readModelSignature(mlir::ModuleOp module);

/// The model function of `module` (see above), or null with a diagnostic.
mlir::func::FuncOp findModelFunction(mlir::ModuleOp module);

} // namespace kiln

#endif // KILN_TARGET_HOST_MODELSIGNATURE_H
