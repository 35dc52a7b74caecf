// RUN: kiln-opt %s --kiln-cuda-device-constants | FileCheck %s

/// The address of a constant global (weights) in host code is replaced by
/// its device copy; non-constant globals and kernels are left alone.
// CHECK-LABEL: llvm.func @host
// CHECK: %[[ADDR:.+]] = llvm.mlir.addressof @weights : !llvm.ptr
// CHECK: %[[BYTES:.+]] = llvm.mlir.constant(24 : i64) : i64
// CHECK: %[[DEV:.+]] = llvm.call @kiln_cuda_constant(%[[ADDR]], %[[BYTES]])
// CHECK: llvm.getelementptr %[[DEV]]
// CHECK: %[[STATE:.+]] = llvm.mlir.addressof @state : !llvm.ptr
// CHECK-NOT: kiln_cuda_constant
// CHECK: llvm.getelementptr %[[STATE]]
// CHECK: llvm.func @kiln_cuda_constant(!llvm.ptr, i64) -> !llvm.ptr
module {
  llvm.mlir.global private constant @weights(dense<1.0> : tensor<6xf32>) : !llvm.array<6 x f32>
  llvm.mlir.global private @state(0 : i64) : i64
  llvm.func @host() -> !llvm.ptr {
    %0 = llvm.mlir.addressof @weights : !llvm.ptr
    %1 = llvm.getelementptr %0[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<6 x f32>
    %2 = llvm.mlir.addressof @state : !llvm.ptr
    %3 = llvm.getelementptr %2[1] : (!llvm.ptr) -> !llvm.ptr, i64
    llvm.return %1 : !llvm.ptr
  }
}
