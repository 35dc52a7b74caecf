//===- LinalgBuilders.h - Small builders shared by the kiln -> linalg patterns -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===---------------------------------------------------------------------------===//

#ifndef KILN_LIB_CONVERSION_KILNTOLINALG_LINALGBUILDERS_H
#define KILN_LIB_CONVERSION_KILNTOLINALG_LINALGBUILDERS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace kiln::lowering {

/// The dynamic dims of `value` (a ranked tensor), as `tensor.dim` ops.
llvm::SmallVector<mlir::Value> dynamicSizesOf(mlir::OpBuilder &b, mlir::Location loc,
                                              mlir::Value value);

/// Dynamic dims of the broadcast result `type` of `operands`: each `?` is read
/// from the first operand with a dynamic dim in that (right-aligned) position.
llvm::SmallVector<mlir::Value>
broadcastDynamicSizes(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::RankedTensorType type, mlir::ValueRange operands);

/// Map from the result's loop dims to `operand`'s dims under numpy
/// broadcasting: leading dims are dropped, static size-1 dims read index 0.
mlir::AffineMap broadcastMap(mlir::RankedTensorType operand,
                             mlir::RankedTensorType result);

/// `tensor.empty` of `type`, or one filled with `fill` when set.
mlir::Value createInit(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::RankedTensorType type, mlir::ValueRange dynamicSizes,
                       mlir::Value fill = {});

/// `type` with an unsigned integer element type made signless (arith and
/// linalg take signless integers; the pass marks the unsigned boundary).
mlir::RankedTensorType signlessType(mlir::RankedTensorType type);

/// A scalar `arith.constant` of a float or integer `type` holding `value`.
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                           double value);

/// The lowest value of `type` (-inf for floats), the identity of max.
mlir::Value lowestValue(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type);
/// The highest value of `type` (+inf for floats), the identity of min.
mlir::Value highestValue(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type);

/// An all-parallel elementwise linalg.generic over `result`'s shape reading
/// `inputs` with broadcasting; `body` computes the result scalar. Dynamic
/// input dims the result takes to be equal to its own get run-time checks
/// (emitDimCheck), named after `what` (the op) and `loc`'s node.
mlir::Value buildElementwise(
    mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType result,
    mlir::ValueRange inputs,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   mlir::ValueRange)>
        body,
    llvm::StringRef what = "elementwise op");

/// "add '/embeddings/Add'": `what`, then the ONNX node `loc` names, if any.
std::string describeNode(llvm::StringRef what, mlir::Location loc);

/// A run-time check (kCheckFunctionName): the run fails with `message`
/// ("{0}"/"{1}": got/expected) unless `ok` is true. Nothing is emitted when
/// `ok` is a constant true.
void emitCheck(mlir::OpBuilder &b, mlir::Location loc, mlir::Value ok, mlir::Value got,
               mlir::Value expected, llvm::StringRef message);

/// Checks that the dim `got` (index) equals `expected` (index or static size)
/// at run time: "dim mismatch in <where>: <got> vs <expected>". Nothing is
/// emitted when both are the same value or constants.
void emitDimCheck(mlir::OpBuilder &b, mlir::Location loc, mlir::OpFoldResult got,
                  mlir::OpFoldResult expected, llvm::StringRef where);

/// Reassociation between a shape of `rank` dims and the same shape without
/// the size-1 dims `unitDims`: every other dim forms a group with the unit
/// dims next to it (leading ones join the first group). Empty when every dim
/// is a unit dim (the other side is rank 0).
llvm::SmallVector<mlir::ReassociationIndices>
unitDimGroups(int64_t rank, llvm::ArrayRef<int64_t> unitDims);

/// Pads the spatial dims (2..) of `input` (N, C, spatial...) by
/// `begins`/`ends` with `value`: a filled tensor of the padded shape with
/// `input` inserted, so that bufferization's empty-tensor elimination lets the
/// op producing `input` write straight into the padded buffer (a tensor.pad
/// bufferizes to a copy of the interior). tensor.pad where channel or spatial
/// dims are dynamic. `input` itself when nothing is padded.
mlir::Value padSpatial(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                       llvm::ArrayRef<int64_t> begins, llvm::ArrayRef<int64_t> ends,
                       mlir::Value value);

/// Dynamic sizes of a conv/pool `result` (only the batch dim may be
/// dynamic), read from `input`.
llvm::SmallVector<mlir::Value> batchDynamicSize(mlir::OpBuilder &b, mlir::Location loc,
                                                mlir::RankedTensorType result,
                                                mlir::Value input);

} // namespace kiln::lowering

#endif // KILN_LIB_CONVERSION_KILNTOLINALG_LINALGBUILDERS_H
