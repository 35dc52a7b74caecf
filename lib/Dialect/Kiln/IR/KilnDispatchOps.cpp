//===- KilnDispatchOps.cpp - kiln.dispatch: syntax and verifier -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace kiln {

ArrayRef<StringRef> DispatchOp::getKinds() {
  static const StringRef kinds[] = {"contraction", "convolution",   "pooling",
                                    "reduction",   "elementwise",   "data_movement",
                                    "row_group",   "attention",     "matmul_nbits"};
  return kinds;
}

// kiln.dispatch KIND [NODES] (%arg = %operand, ...) : (TYPES) -> RESULTS
//     attributes {...} { BODY }
void DispatchOp::print(OpAsmPrinter &p) {
  p << ' ' << getKind() << ' ';
  p.printAttributeWithoutType(getNodesAttr());
  p << " (";
  Block &body = getBody().front();
  llvm::interleaveComma(llvm::zip(body.getArguments(), getInputs()), p, [&](auto pair) {
    p.printRegionArgument(std::get<0>(pair), /*argAttrs=*/{}, /*omitType=*/true);
    p << " = ";
    p.printOperand(std::get<1>(pair));
  });
  p << ") : ";
  p.printFunctionalType(getInputs().getTypes(), getResults().getTypes());
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(),
                                     {getKindAttrName(), getNodesAttrName()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}

ParseResult DispatchOp::parse(OpAsmParser &parser, OperationState &result) {
  std::string kind;
  ArrayAttr nodes;
  if (parser.parseKeywordOrString(&kind) || parser.parseAttribute(nodes))
    return failure();
  Builder &b = parser.getBuilder();
  result.addAttribute(getKindAttrName(result.name), b.getStringAttr(kind));
  result.addAttribute(getNodesAttrName(result.name), nodes);
  SmallVector<OpAsmParser::Argument> arguments;
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren, [&]() -> ParseResult {
        if (parser.parseArgument(arguments.emplace_back()) || parser.parseEqual() ||
            parser.parseOperand(operands.emplace_back()))
          return failure();
        return success();
      }))
    return failure();
  FunctionType type;
  SMLoc typeLoc = parser.getCurrentLocation();
  if (parser.parseColonType(type))
    return failure();
  if (type.getNumInputs() != operands.size())
    return parser.emitError(typeLoc) << "expects " << operands.size()
                                     << " operand types, got " << type.getNumInputs();
  for (auto [argument, argType] : llvm::zip(arguments, type.getInputs()))
    argument.type = argType;
  result.addTypes(type.getResults());
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes) ||
      parser.resolveOperands(operands, type.getInputs(), parser.getNameLoc(),
                             result.operands) ||
      parser.parseRegion(*result.addRegion(), arguments, /*enableNameShadowing=*/false))
    return failure();
  return success();
}

LogicalResult DispatchOp::verify() {
  if (!llvm::is_contained(getKinds(), getKind())) {
    InFlightDiagnostic diag = emitOpError() << "has unknown kind '" << getKind()
                                            << "', expected one of ";
    llvm::interleaveComma(getKinds(), diag);
    return diag;
  }
  for (auto [i, type] : llvm::enumerate(getInputs().getTypes()))
    if (isa<BaseMemRefType>(type))
      return emitOpError() << "works on tensors, but operand #" << i << " is " << type;
  for (auto [i, type] : llvm::enumerate(getResults().getTypes()))
    if (isa<BaseMemRefType>(type))
      return emitOpError() << "works on tensors, but result #" << i << " is " << type;
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "expects one region argument per operand, got "
                         << body.getNumArguments() << " for " << getInputs().size()
                         << " operands";
  for (auto [i, argument, operand] : llvm::enumerate(body.getArguments(), getInputs()))
    if (argument.getType() != operand.getType())
      return emitOpError() << "region argument #" << i << " has type " << argument.getType()
                           << ", but its operand has type " << operand.getType();
  auto yield = dyn_cast_or_null<YieldOp>(body.empty() ? nullptr : &body.back());
  if (!yield)
    return emitOpError() << "expects its region to end with kiln.yield";
  if (yield.getValues().size() != getNumResults())
    return emitOpError() << "yields " << yield.getValues().size() << " values for "
                         << getNumResults() << " results";
  for (auto [i, value, result] : llvm::enumerate(yield.getValues(), getResults()))
    if (value.getType() != result.getType())
      return emitOpError() << "yields " << value.getType() << " as result #" << i
                           << " of type " << result.getType();
  return success();
}

} // namespace kiln
