// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-form-dispatches,kiln-form-dispatch-regions))" -split-input-file | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-form-dispatches))" -split-input-file > %t.marked
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-form-dispatches,kiln-form-dispatch-regions,kiln-inline-dispatch-regions))" -split-input-file > %t.inlined
// RUN: sed -E -e 's/ attrs =  \{kiln\.dispatch = \{[^{}]*\}\}//' -e 's/kiln\.dispatch = \{[^{}]*\}, //' -e 's/, kiln\.dispatch = \{[^{}]*\}//' -e 's/ \{kiln\.dispatch = \{[^{}]*\}\}//' %t.inlined > %t.stripped
// RUN: diff %t.marked %t.stripped
// RUN: FileCheck %s --input-file=%t.inlined --check-prefix=INLINE

/// kiln-form-dispatches, then the regions: the dispatches it marks become
/// kiln.dispatch regions. Wrapping and inlining again gives its output
/// back op for op, plus each region's identity on its kernel ops (the diff
/// after the sed that strips it).
// INLINE-NOT: kiln.dispatch {{[a-z_]+}} [
// INLINE-NOT: kiln.yield

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

/// A matmul with its zero fill and its epilogue (bias + relu; the empty
/// tensor kiln-form-dispatches gave its output) is one contraction
/// dispatch; the constant and the shared empty tensor are operands; the
/// unrelated generic is an elementwise dispatch of its own.
// CHECK-LABEL: func @bias_relu
// CHECK: %[[CST:.+]] = arith.constant
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT: %[[OTHER:.+]] = kiln.dispatch elementwise ["exp"] (%{{.+}} = %arg3) : (tensor<16xf32>) -> tensor<16xf32> {
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: linalg.generic
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[R:.+]] = kiln.dispatch contraction ["gemm", "relu"] (%[[C:.+]] = %[[CST]], %[[EA:.+]] = %[[E]], %[[A:.+]] = %arg0, %[[W:.+]] = %arg1, %[[B:.+]] = %arg2) : (f32, tensor<4x16xf32>, tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> {
// CHECK-NEXT: %[[OUT:.+]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT: %[[F:.+]] = linalg.fill ins(%[[C]] : f32) outs(%[[EA]] : tensor<4x16xf32>)
// CHECK-NEXT: %[[M:.+]] = linalg.matmul ins(%[[A]], %[[W]] : {{.+}}) outs(%[[F]] : tensor<4x16xf32>)
// CHECK-NEXT: %[[G:.+]] = linalg.generic {{.+}} ins(%[[B]], %[[M]] : {{.+}}) outs(%[[OUT]] : tensor<4x16xf32>) attrs = {kiln.epilogue = 1 : i64}
// CHECK: arith.maximumf %{{.+}}, %[[C]] : f32
// CHECK: kiln.yield %[[G]] : tensor<4x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]], %[[OTHER]]
func.func @bias_relu(%a: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>, %y: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32> loc("gemm")
  %e1 = tensor.empty() : tensor<16xf32>
  %other = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%y : tensor<16xf32>) outs(%e1 : tensor<16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.exp %x : f32
    linalg.yield %r : f32
  } -> tensor<16xf32> loc("exp")
  %relu = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b, %m : tensor<16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %s = arith.addf %c, %x : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32> loc("relu")
  return %relu, %other : tensor<4x16xf32>, tensor<16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#rowv = affine_map<(d0, d1) -> (d0)>
#maskm = affine_map<(d0, d1) -> (0, d1)>

/// A masked softmax's five generics (a row group) with their fills and
/// empty tensors are one row_group dispatch; the constants are operands.
// CHECK-LABEL: func @masked_softmax
// CHECK: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[R:.+]] = kiln.dispatch row_group [] (%{{.+}} = %arg0, %{{.+}} = %arg1, %{{.+}} = %[[NINF]], %{{.+}} = %[[ZERO]]) : (tensor<8x16xf32>, tensor<1x16xf32>, f32, f32) -> tensor<8x16xf32> {
// CHECK-NEXT: tensor.empty() : tensor<8x16xf32>
// CHECK-COUNT-3: kiln.row_group = 0 : i64
// CHECK: linalg.fill
// CHECK-COUNT-2: kiln.row_group = 0 : i64
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]]
func.func @masked_softmax(%x: tensor<8x16xf32>, %mask: tensor<1x16xf32>) -> tensor<8x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %masked = linalg.generic {indexing_maps = [#id, #maskm, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mask : tensor<8x16xf32>, tensor<1x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %s = arith.addf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %minus = linalg.fill ins(%ninf : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %max = linalg.generic {indexing_maps = [#id, #rowv], iterator_types = ["parallel", "reduction"]}
      ins(%masked : tensor<8x16xf32>) outs(%minus : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #rowv, #id], iterator_types = ["parallel", "parallel"]}
      ins(%masked, %max : tensor<8x16xf32>, tensor<8xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #rowv], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<8x16xf32>) outs(%zeros : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc fastmath<reassoc> : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %y = linalg.generic {indexing_maps = [#id, #rowv, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<8x16xf32>, tensor<8xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %r = arith.divf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

#w = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
#x = affine_map<(d0, d1, d2, d3, d4) -> (d2, d1 + d3 * 18 + d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1)>

/// Conv taps with their epilogue on the [:, :, :, :16] view: one
/// convolution dispatch holding the fill, the taps, the views and the
/// epilogue.
// CHECK-LABEL: func @conv_taps_epilogue
// CHECK: %[[R:.+]] = kiln.dispatch convolution [] (%{{.+}} = %{{.+}}, %{{.+}} = %arg0, %{{.+}} = %arg1, %{{.+}} = %arg2, %{{.+}} = %arg3) : (f32, tensor<4x3x3x3xf32>, tensor<3x110xf32>, tensor<4xf32>, tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32> {
// CHECK-NEXT: tensor.empty() : tensor<4x72xf32>
// CHECK-NEXT: tensor.empty() : tensor<1x4x4x16xf32>
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.generic
// CHECK-SAME: kiln.conv_taps
// CHECK: tensor.expand_shape
// CHECK-NEXT: tensor.extract_slice
// CHECK-NEXT: linalg.generic
// CHECK-SAME: kiln.epilogue = 0 : i64
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]]
func.func @conv_taps_epilogue(%w: tensor<4x3x3x3xf32>, %x: tensor<3x110xf32>, %b: tensor<4xf32>, %res: tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x72xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x72xf32>) -> tensor<4x72xf32>
  %t = linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x : tensor<4x3x3x3xf32>, tensor<3x110xf32>) outs(%acc : tensor<4x72xf32>) attrs = {kiln.conv_taps} {
  ^bb0(%a: f32, %v: f32, %o: f32):
    %m = arith.mulf %a, %v : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x72xf32>
  %wide = tensor.expand_shape %t [[0, 1], [2, 3]] output_shape [1, 4, 4, 18] : tensor<4x72xf32> into tensor<1x4x4x18xf32>
  %img = tensor.extract_slice %wide[0, 0, 0, 0] [1, 4, 4, 16] [1, 1, 1, 1] : tensor<1x4x4x18xf32> to tensor<1x4x4x16xf32>
  %e4 = tensor.empty() : tensor<1x4x4x16xf32>
  %y = linalg.generic {indexing_maps = [#id4, #chan, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%img, %b, %res : tensor<1x4x4x16xf32>, tensor<4xf32>, tensor<1x4x4x16xf32>) outs(%e4 : tensor<1x4x4x16xf32>) {
  ^bb0(%u: f32, %v: f32, %r: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    %s2 = arith.addf %s, %r : f32
    %m = arith.maximumf %s2, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x16xf32>
  return %y : tensor<1x4x4x16xf32>
}

// -----

#in = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// The attention kernel that took the head merge is an attention dispatch;
/// the empty tensors of the unmerged kernel and of the transpose (now
/// unused) are gone (kiln-form-dispatches' last clean-up).
// CHECK-LABEL: func @head_merge
// CHECK-NEXT: %[[R:.+]] = kiln.dispatch attention [] (%[[Q:.+]] = %arg0) : (tensor<1x2x5x16xf32>) -> tensor<1x5x2x16xf32> {
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<1x5x2x16xf32>
// CHECK-NEXT: kiln.attention_kernel %[[Q]], %[[Q]], %[[Q]] into %[[E]] {merge_heads
// CHECK-NEXT: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]]
func.func @head_merge(%q: tensor<1x2x5x16xf32>) -> tensor<1x5x2x16xf32> {
  %e = tensor.empty() : tensor<1x2x5x16xf32>
  %a = kiln.attention_kernel %q, %q, %q into %e {scale = 0.25 : f32} : tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32>, tensor<1x2x5x16xf32> -> tensor<1x2x5x16xf32>
  %t = tensor.empty() : tensor<1x5x2x16xf32>
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a : tensor<1x2x5x16xf32>) outs(%t : tensor<1x5x2x16xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<1x5x2x16xf32>
  return %r : tensor<1x5x2x16xf32>
}
