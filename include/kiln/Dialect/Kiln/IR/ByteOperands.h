//===- ByteOperands.h - Integer matmul operands that are bytes --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_IR_BYTEOPERANDS_H
#define KILN_DIALECT_KILN_IR_BYTEOPERANDS_H

#include "llvm/ADT/StringRef.h"

namespace kiln {

/// On an integer kiln.matmul (i16 operands) and the linalg.matmul it lowers
/// to: an i64 `w` such that every element of the lhs (rhs) lies in
/// [w, w + 255], as an 8-bit integer minus a constant zero point does. Set
/// by kiln-recognize-integer-matmul; a kernel may then multiply 8-bit
/// values (VNNI) and correct the sums for the shift. Dropping it only loses
/// speed, never exactness.
inline constexpr llvm::StringLiteral kLhsBytesAttr = "kiln.lhs_bytes";
inline constexpr llvm::StringLiteral kRhsBytesAttr = "kiln.rhs_bytes";

} // namespace kiln

#endif // KILN_DIALECT_KILN_IR_BYTEOPERANDS_H
