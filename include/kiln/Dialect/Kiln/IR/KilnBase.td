//===- KilnBase.td - The kiln dialect, its types and op base classes -*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_IR_KILNBASE_TD
#define KILN_DIALECT_KILN_IR_KILNBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::kiln";
  let summary = "Kiln's graph dialect: tensor-level operations with ONNX semantics";
  let description = [{
    The `kiln` dialect holds a model as a graph of tensor operations on ranked
    builtin tensors. Semantics follow ONNX (numpy broadcasting, negative axes
    counted from the back), but every op is fully described by its operands and
    attributes: spec defaults are materialized by the importer, so passes never
    need to know an opset. Dimensions may be dynamic (`?`); result types are
    inferred where the operands and attributes determine them, and given
    explicitly where they depend on the value of a shape operand (`reshape`,
    `expand`, `constant_of_shape`, `range`, `resize`, quantization).
  }];
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 0;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Kiln_FloatElement : AnyTypeOf<[F16, BF16, F32, F64]>;
def Kiln_IntElement : AnyTypeOf<[I8, I16, I32, I64, UI8, UI16, UI32, UI64]>;
// ONNX's 8-bit floats: model inputs and outputs, cast (docs/onnx-import.md).
def Kiln_LowFloatElement : AnyTypeOf<[F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ]>;
// ONNX's sub-byte types and E8M0: model inputs and outputs, constants, cast;
// one byte per element in memory (docs/onnx-import.md).
def Kiln_NarrowElement : AnyTypeOf<[I<4>, UI<4>, I<2>, UI<2>, F4E2M1FN, F8E8M0FNU]>;
def Kiln_Element : AnyTypeOf<[F16, BF16, F32, F64, I1, I8, I16, I32, I64,
                              UI8, UI16, UI32, UI64, Kiln_LowFloatElement,
                              Kiln_NarrowElement]>;

def Kiln_Tensor : RankedTensorOf<[Kiln_Element]>;
def Kiln_FloatTensor : RankedTensorOf<[Kiln_FloatElement]>;
def Kiln_NumericTensor : RankedTensorOf<[Kiln_FloatElement, Kiln_IntElement]>;
def Kiln_SignedTensor : RankedTensorOf<[Kiln_FloatElement, I8, I16, I32, I64]>;
def Kiln_BoolTensor : RankedTensorOf<[I1]>;
def Kiln_IntegerTensor : RankedTensorOf<[Kiln_IntElement]>;
def Kiln_BitsTensor : RankedTensorOf<[I1, Kiln_IntElement]>;
def Kiln_IndexTensor : RankedTensorOf<[I32, I64]>;
def Kiln_ShapeTensor : 1DTensorOf<[I64]>;
def Kiln_ScalarTensor : 0DTensorOf<[Kiln_FloatElement, Kiln_IntElement]>;
def Kiln_QuantTensor : RankedTensorOf<[I8, UI8, I16, UI16, I32]>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Kiln_ReduceKind : I32EnumAttr<"ReduceKind", "the combiner of kiln.reduce", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>,
    I32EnumAttrCase<"max", 2>, I32EnumAttrCase<"min", 3>,
    I32EnumAttrCase<"prod", 4>, I32EnumAttrCase<"l1", 5>,
    I32EnumAttrCase<"l2", 6>, I32EnumAttrCase<"log_sum_exp", 7>,
    I32EnumAttrCase<"sum_square", 8>]> {
  let cppNamespace = "::kiln";
}

def Kiln_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "how kiln.gelu evaluates the Gaussian CDF", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::kiln";
}

def Kiln_PadMode : I32EnumAttr<"PadMode", "how kiln.pad fills the border", [
    I32EnumAttrCase<"constant", 0>, I32EnumAttrCase<"reflect", 1>,
    I32EnumAttrCase<"edge", 2>, I32EnumAttrCase<"wrap", 3>]> {
  let cppNamespace = "::kiln";
}

def Kiln_ScatterReduction : I32EnumAttr<"ScatterReduction",
    "how kiln.scatter_elements combines an update with the existing value", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"add", 1>,
    I32EnumAttrCase<"mul", 2>, I32EnumAttrCase<"max", 3>,
    I32EnumAttrCase<"min", 4>]> {
  let cppNamespace = "::kiln";
}

def Kiln_ResizeMode : I32EnumAttr<"ResizeMode", "kiln.resize interpolation", [
    I32EnumAttrCase<"nearest", 0>, I32EnumAttrCase<"linear", 1>,
    I32EnumAttrCase<"cubic", 2>]> {
  let cppNamespace = "::kiln";
}

def Kiln_CoordinateTransform : I32EnumAttr<"CoordinateTransform",
    "how kiln.resize maps output coordinates to input coordinates", [
    I32EnumAttrCase<"half_pixel", 0>, I32EnumAttrCase<"pytorch_half_pixel", 1>,
    I32EnumAttrCase<"align_corners", 2>, I32EnumAttrCase<"asymmetric", 3>,
    I32EnumAttrCase<"half_pixel_symmetric", 4>]> {
  let cppNamespace = "::kiln";
}

def Kiln_GridSamplePadding : I32EnumAttr<"GridSamplePadding",
    "what kiln.grid_sample reads outside the input", [
    I32EnumAttrCase<"zeros", 0>, I32EnumAttrCase<"border", 1>,
    I32EnumAttrCase<"reflection", 2>]> {
  let cppNamespace = "::kiln";
}

def Kiln_NearestMode : I32EnumAttr<"NearestMode",
    "how kiln.resize rounds in nearest mode", [
    I32EnumAttrCase<"round_prefer_floor", 0>, I32EnumAttrCase<"round_prefer_ceil", 1>,
    I32EnumAttrCase<"floor", 2>, I32EnumAttrCase<"ceil", 3>]> {
  let cppNamespace = "::kiln";
}

//===----------------------------------------------------------------------===//
// Op base classes
//===----------------------------------------------------------------------===//

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

// Result types of a Kiln_InferOp are computed from operands and attributes; a
// written result type may refine the inferred one (a static dim where the
// inference says `?`) but never contradict it.
// The verifier runs the inference with the op's location, so that a bad
// operand or attribute is reported by its own message (the interface's check
// runs after it and only compares the types).
defvar Kiln_RefinableResultsDef = [{
  bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange inferred,
                                          ::mlir::TypeRange actual) {
    return ::kiln::areRefinedTypes(inferred, actual);
  }
  ::llvm::LogicalResult $cppClass::verify() {
    return ::kiln::verifyByInference(*this);
  }
}];

class Kiln_InferOp<string mnemonic, list<Trait> traits = []>
    : Kiln_Op<mnemonic, traits # [Pure, InferTypeOpAdaptorWithIsCompatible]> {
  let hasVerifier = 1;
  let extraClassDefinition = Kiln_RefinableResultsDef;
}

// Elementwise ops that keep the operand's type.
class Kiln_UnaryOp<string mnemonic, string formula, Type operandType,
                   list<Trait> traits = []>
    : Kiln_Op<mnemonic, traits # [Pure, Elementwise, SameOperandsAndResultType]> {
  let summary = "elementwise " # formula;
  let description = "Computes `" # formula # "` for every element.\n\n"
    # "Example:\n\n```mlir\n%y = kiln." # mnemonic
    # " %x : tensor<2x?xf32>\n```";
  let arguments = (ins operandType:$input);
  let results = (outs operandType:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

// Binary ops with numpy (ONNX multidirectional) broadcasting.
class Kiln_BinaryOp<string mnemonic, string formula, Type operandType,
                    bit isPredicate = 0, list<Trait> traits = []>
    : Kiln_Op<mnemonic, traits # [Pure, AllElementTypesMatch<["lhs", "rhs"]>,
                                  InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "elementwise " # formula # " with broadcasting";
  let description = "Computes `" # formula # "` for every pair of elements, "
    # "broadcasting the operands against each other with numpy rules "
    # "(trailing dims aligned; a dim of 1 stretches; `?` matches anything).\n\n"
    # "Example:\n\n```mlir\n%z = kiln." # mnemonic
    # " %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3x"
    # !if(isPredicate, "i1", "f32") # ">\n```";
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs !if(isPredicate, Kiln_BoolTensor, operandType):$output);
  let assemblyFormat =
    "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDefinition = Kiln_RefinableResultsDef # [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::inferBroadcastResult(location,
          {adaptor.getLhs().getType(), adaptor.getRhs().getType()},
          }] # !if(isPredicate, "::mlir::IntegerType::get(context, 1)",
                                "::mlir::Type()") # [{, types);
    }
  }];
}

#endif // KILN_DIALECT_KILN_IR_KILNBASE_TD
