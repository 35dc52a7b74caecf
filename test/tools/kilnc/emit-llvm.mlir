// RUN: kilnc %s --emit=llvm | FileCheck %s
// RUN: kilnc %s --emit=obj -o %t.o && test -s %t.o
// RUN: kilnc %s -o %t.so && kiln-run %t.so --shape image=5x3 | FileCheck %s --check-prefix=EXEC

/// --emit=llvm is the host LLVM IR with the artifact ABI of kiln-c/abi.h.

// CHECK-DAG: define internal void @kiln_entry(
// CHECK-DAG: define internal i32 @kiln_run(ptr %0, ptr %1, ptr %2)
// CHECK-DAG: define ptr @kiln_abi_model_v1()
// CHECK-DAG: c"scores\00"
// CHECK-DAG: c"image\00"
// CHECK-DAG: c"batch\00"
/// A symbolic batch dim works end to end: the output takes it from the input.
// EXEC: input 'image': f32 [5, 3]
// EXEC: output 'scores': f32 [5, 3]
func.func @main(%x: tensor<?x3xf32> {kiln.name = "image", kiln.dim_names = ["batch", ""]})
    -> (tensor<?x3xf32> {kiln.name = "scores", kiln.dim_names = ["batch", ""]}) {
  %y = kiln.exp %x : tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}
