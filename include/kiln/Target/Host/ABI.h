//===- ABI.h - Names the host passes and the artifact writer share -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===--------------------------------------------------------------------------===//
//
// The entry function, its arguments, the module attributes the codegen
// passes leave for the artifact writer, and the hooks it defines: the
// contract between every target's codegen and the artifact of kiln-c/abi.h.
//
//===--------------------------------------------------------------------------===//

#ifndef KILN_TARGET_HOST_ABI_H
#define KILN_TARGET_HOST_ABI_H

#include "llvm/ADT/StringRef.h"

namespace kiln {

/// The symbol the model function gets during codegen.
inline constexpr llvm::StringLiteral kEntryFunctionName = "kiln_entry";
/// Marks the entry's first argument, the `kiln_abi_host *` of the runtime.
inline constexpr llvm::StringLiteral kHostArgAttr = "kiln.host";
/// Prefixes of outlined parallel loop bodies and of their launchers, which
/// the artifact writer defines (kiln-outline-parallel-loops).
inline constexpr llvm::StringLiteral kTaskPrefix = "kiln_task_";
inline constexpr llvm::StringLiteral kLaunchPrefix = "kiln_launch_";
/// Marks a parallel loop whose iterations are heavy enough to distribute
/// whatever their count.
inline constexpr llvm::StringLiteral kHeavyLoopAttr = "kiln.heavy";
/// On a memref argument of a private function: the function neither keeps
/// the buffer past its return nor returns it (kiln-plan-arena may then place
/// the buffers passed to it).
inline constexpr llvm::StringLiteral kNoCaptureArgAttr = "kiln.nocapture";
/// Module attribute of kiln-pack-weights: the weights blob (a
/// dense_resource tensor of i8) that the entry's weights argument points to.
inline constexpr llvm::StringLiteral kWeightsBlobAttr = "kiln.weights";
/// Module attribute of kiln-pack-weights with `half-floats`: the blob's runs
/// of one element type, `[offset, bytes, kiln_dtype]` triples (i64 array).
inline constexpr llvm::StringLiteral kWeightsSegmentsAttr = "kiln.weights_segments";
/// Module attribute of kiln-instrument-dispatches: the dispatch names
/// (array of strings), indexed by the ids passed to the trace hooks.
inline constexpr llvm::StringLiteral kDispatchNamesAttr = "kiln.dispatches";
/// Module attribute of kiln-cpu-matmul when its kernels are not f32 FMAs
/// (--precision=bf16): the instruction set of each dispatch's matmul
/// kernel, indexed like kDispatchNamesAttr ("" where the dispatch has
/// none), for kilnc --report=cost.
inline constexpr llvm::StringLiteral kMatmulISAAttr = "kiln.matmul_isa";
/// The hooks kiln-instrument-dispatches calls around each dispatch, defined
/// by the artifact writer: `(kiln_abi_host *, i32 dispatch)`.
inline constexpr llvm::StringLiteral kTraceBeginName = "kiln_trace_begin";
inline constexpr llvm::StringLiteral kTraceEndName = "kiln_trace_end";

/// The run-time checks after kiln-prepare-entry (see kCheckFunctionName):
/// `(kiln_abi_host *, i1 ok, i32 check, index got, index expected)`, defined
/// by the artifact writer; `check` indexes the module attribute
/// kCheckMessagesAttr (array of strings).
inline constexpr llvm::StringLiteral kCheckHookName = "kiln_check_hook";
inline constexpr llvm::StringLiteral kCheckMessagesAttr = "kiln.check_messages";

} // namespace kiln

#endif // KILN_TARGET_HOST_ABI_H
