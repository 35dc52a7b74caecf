//===- ModelSignature.cpp - The inputs and outputs of a compiled model ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/ModelSignature.h"

#include "kiln-c/runtime.h"
#include "kiln/Target/Host/DimFormula.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace kiln {

func::FuncOp findModelFunction(ModuleOp module) {
  func::FuncOp model;
  int publicCount = 0;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.getName() == "main")
      return func;
    if (func.isPublic() && !func.isExternal()) {
      model = func;
      ++publicCount;
    }
  }
  if (publicCount == 1)
    return model;
  emitError(module.getLoc())
      << "expected one public function (the model) or one named 'main', found "
      << publicCount << " public functions";
  return nullptr;
}

/// `isUnsigned`: the value was an unsigned integer tensor in the kiln dialect
/// (convert-kiln-to-linalg makes it signless and marks it `kiln.unsigned`).
static std::optional<int32_t> abiDtype(Type type, bool isUnsigned) {
  if (type.isInteger(4))
    return type.isUnsignedInteger() ? KILN_DTYPE_U4 : KILN_DTYPE_I4;
  if (type.isInteger(2))
    return type.isUnsignedInteger() ? KILN_DTYPE_U2 : KILN_DTYPE_I2;
  if (isa<Float4E2M1FNType>(type))
    return KILN_DTYPE_F4E2M1;
  if (isa<Float8E8M0FNUType>(type))
    return KILN_DTYPE_F8E8M0;
  if (type.isF32())
    return KILN_DTYPE_F32;
  if (type.isF16())
    return KILN_DTYPE_F16;
  if (type.isBF16())
    return KILN_DTYPE_BF16;
  if (type.isF64())
    return KILN_DTYPE_F64;
  if (isa<Float8E4M3FNType>(type))
    return KILN_DTYPE_F8E4M3FN;
  if (isa<Float8E4M3FNUZType>(type))
    return KILN_DTYPE_F8E4M3FNUZ;
  if (isa<Float8E5M2Type>(type))
    return KILN_DTYPE_F8E5M2;
  if (isa<Float8E5M2FNUZType>(type))
    return KILN_DTYPE_F8E5M2FNUZ;
  if (type.isInteger(1))
    return KILN_DTYPE_BOOL;
  if (type.isUnsignedInteger(8) || (isUnsigned && type.isSignlessInteger(8)))
    return KILN_DTYPE_U8;
  if (type.isUnsignedInteger(16) || (isUnsigned && type.isSignlessInteger(16)))
    return KILN_DTYPE_U16;
  if (type.isUnsignedInteger(32) || (isUnsigned && type.isSignlessInteger(32)))
    return KILN_DTYPE_U32;
  if (type.isUnsignedInteger(64) || (isUnsigned && type.isSignlessInteger(64)))
    return KILN_DTYPE_U64;
  if (type.isSignlessInteger(8))
    return KILN_DTYPE_I8;
  if (type.isSignlessInteger(16))
    return KILN_DTYPE_I16;
  if (type.isSignlessInteger(32))
    return KILN_DTYPE_I32;
  if (type.isSignlessInteger(64))
    return KILN_DTYPE_I64;
  return std::nullopt;
}

static FailureOr<TensorSignature> readTensor(Location loc, Type type,
                                             DictionaryAttr attrs,
                                             const std::string &fallbackName) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return emitError(loc) << "model value '" << fallbackName
                          << "' is not a ranked tensor: " << type;
  TensorSignature signature;
  auto name = attrs ? attrs.getAs<StringAttr>("kiln.name") : StringAttr();
  signature.name = name ? name.str() : fallbackName;
  // A sub-byte or E8M0 tensor is stored as i8 after convert-kiln-to-linalg,
  // which keeps its element type in `kiln.element`.
  auto element = attrs ? attrs.getAs<TypeAttr>("kiln.element") : TypeAttr();
  std::optional<int32_t> dtype =
      abiDtype(element ? element.getValue() : tensor.getElementType(),
               attrs && attrs.get("kiln.unsigned"));
  if (!dtype)
    return emitError(loc) << "'" << signature.name << "' has element type "
                          << tensor.getElementType()
                          << ", which the runtime does not support";
  signature.dtype = *dtype;
  auto dimNames = attrs ? attrs.getAs<ArrayAttr>("kiln.dim_names") : ArrayAttr();
  for (auto [i, d] : llvm::enumerate(tensor.getShape())) {
    bool dynamic = ShapedType::isDynamic(d);
    signature.dims.push_back(dynamic ? -1 : d);
    std::string dimName;
    if (dynamic) {
      auto given = dimNames && i < dimNames.size()
                       ? dyn_cast<StringAttr>(dimNames[i])
                       : StringAttr();
      dimName = given && !given.getValue().empty()
                    ? given.str()
                    : signature.name + "_d" + std::to_string(i);
    }
    signature.dimNames.push_back(dimName);
  }
  return signature;
}

FailureOr<ModelSignature> readModelSignature(ModuleOp module) {
  func::FuncOp func = findModelFunction(module);
  if (!func)
    return failure();
  ModelSignature signature;
  FunctionType type = func.getFunctionType();
  for (unsigned i = 0; i < type.getNumInputs(); ++i) {
    FailureOr<TensorSignature> input =
        readTensor(func.getLoc(), type.getInput(i), func.getArgAttrDict(i),
                   "input_" + std::to_string(i));
    if (failed(input))
      return failure();
    signature.inputs.push_back(*input);
  }
  // The runtime sizes outputs from the input shapes alone: every symbolic
  // output dim must be one of the inputs' symbolic dims or a formula of them
  // (DimFormula.h).
  llvm::StringSet<> bound;
  for (const TensorSignature &input : signature.inputs)
    for (const std::string &name : input.dimNames)
      if (!name.empty())
        bound.insert(name);
  for (unsigned i = 0; i < type.getNumResults(); ++i) {
    FailureOr<TensorSignature> output =
        readTensor(func.getLoc(), type.getResult(i), func.getResultAttrDict(i),
                   "output_" + std::to_string(i));
    if (failed(output))
      return failure();
    for (auto [d, name] : llvm::enumerate(output->dimNames))
      if (!name.empty() && !bound.contains(name) &&
          !dim_formula::evaluate(name, [&](std::string_view factor) -> std::optional<int64_t> {
            if (!bound.contains(factor))
              return std::nullopt;
            return 1;
          }))
        return emitError(func.getLoc())
               << "output '" << output->name << "' dim " << d << " ('" << name
               << "') depends on tensor values, not on input shapes; Kiln needs output "
                  "shapes that follow from the input shapes (fix them with "
                  "--input-shape, or make the shape a constant)";
    if (auto alias = func.getResultAttrOfType<IntegerAttr>(i, "kiln.aliases_input")) {
      int64_t k = alias.getInt();
      if (k < 0 || k >= static_cast<int64_t>(signature.inputs.size()))
        return emitError(func.getLoc()) << "output '" << output->name << "' aliases input " << k
                                        << ", but the model has " << signature.inputs.size()
                                        << " inputs";
      const TensorSignature &input = signature.inputs[k];
      if (input.dtype != output->dtype || input.dims != output->dims ||
          input.dimNames != output->dimNames)
        return emitError(func.getLoc())
               << "output '" << output->name << "' aliases input '" << input.name
               << "', but their element types or dims differ";
      for (const TensorSignature &other : signature.outputs)
        if (other.aliasesInput == k)
          return emitError(func.getLoc()) << "input '" << input.name
                                          << "' is aliased by two outputs";
      output->aliasesInput = static_cast<int32_t>(k);
    }
    signature.outputs.push_back(*output);
  }
  return signature;
}

} // namespace kiln
