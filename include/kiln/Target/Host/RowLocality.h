//===- RowLocality.h - When a group of ops may run row by row ---*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Both targets fuse a row group (softmax, norms, last-axis reductions and
// their elementwise neighbours over the same outer dims) into one kernel
// that runs the group row after row. That equals running the ops one after
// another only if every buffer the group writes is accessed one row at a
// time. The targets differ in what they accept as members, not in this rule.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_HOST_ROWLOCALITY_H
#define KILN_TARGET_HOST_ROWLOCALITY_H

#include "kiln/Dispatch/Epilogue.h"
#include "kiln/Target/Host/BufferAnalysis.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace kiln {

/// One buffer access of a group member: the buffer, its indexing map over
/// the member's loops (outer dims d0..dk-1, then the row dk if it has one),
/// and whether the member writes it.
struct BufferAccess {
  mlir::Value buffer;
  mlir::AffineMap map;
  bool write;
};

/// (d0, ..., dk-1) or (d0, ..., dk) for k = `outerRank`: one row's scalar,
/// or one row.
bool isRowAligned(mlir::AffineMap map, int64_t outerRank);

/// Whether running the ops whose accesses are `accesses` row by row equals
/// running them one after another: every buffer they write is accessed
/// aligned (isRowAligned), and through one view of its allocation.
bool isRowLocal(llvm::ArrayRef<BufferAccess> accesses, int64_t outerRank);

/// Grows the row group `members` (holding its seed op `seed`) through the
/// seed's block, first backward, then forward: an op joins if `classify`
/// makes it a member and `accepts` the group with it. Other ops are stepped
/// over if `transparent`, or if they are fills or copies that the members
/// on their far side may trade places with (commutesWith): bufferization
/// places the zero fill of a padded buffer, or the copy of an unrelated
/// concat's piece, between a row group's members, and the group, emitted
/// after its last member, moves those before them past them. An op in
/// `taken`, or one that can be neither joined nor stepped over, ends the
/// growth that way.
template <typename Member>
void growRowGroup(mlir::Operation *seed, llvm::SmallVectorImpl<Member> &members,
                  const llvm::DenseSet<mlir::Operation *> &taken,
                  llvm::function_ref<std::optional<Member>(mlir::Operation *)> classify,
                  llvm::function_ref<bool(llvm::ArrayRef<Member>)> accepts,
                  llvm::function_ref<bool(mlir::Operation *)> transparent) {
  llvm::SmallVector<mlir::Operation *> joined = {seed};
  // Backward: the ops stepped over, which members joining above must pass.
  llvm::SmallVector<mlir::Operation *> crossed;
  auto tryJoin = [&](mlir::Operation *op, bool forward) {
    std::optional<Member> member = classify(op);
    if (!member || !llvm::all_of(crossed, [&](mlir::Operation *x) { return commutesWith(x, op); }))
      return false;
    llvm::SmallVector<Member> candidate(members.begin(), members.end());
    if (forward)
      candidate.push_back(*member);
    else
      candidate.insert(candidate.begin(), *member);
    if (!accepts(candidate))
      return false;
    members.assign(candidate.begin(), candidate.end());
    joined.push_back(op);
    return true;
  };
  auto extend = [&](bool forward) {
    for (mlir::Operation *op = forward ? seed->getNextNode() : seed->getPrevNode(); op;
         op = forward ? op->getNextNode() : op->getPrevNode()) {
      if (taken.contains(op))
        return;
      if (tryJoin(op, forward) || transparent(op))
        continue;
      if (forward ? !commutesWith(op, joined) : !commutesWith(op, {}))
        return;
      if (!forward)
        crossed.push_back(op);
    }
  };
  extend(/*forward=*/false);
  crossed.clear();
  extend(/*forward=*/true);
}

} // namespace kiln

#endif // KILN_TARGET_HOST_ROWLOCALITY_H
