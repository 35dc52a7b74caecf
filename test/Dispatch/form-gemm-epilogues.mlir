// RUN: kiln-opt --split-input-file --kiln-form-gemm-epilogues %s | FileCheck %s
// RUN: kiln-opt --split-input-file --kiln-form-gemm-epilogues="k-multiple=4 n-multiple=4 batched-k-multiple=1 dense-a=true" %s | FileCheck %s --check-prefix=TF32
// RUN: not kiln-opt --split-input-file --kiln-form-gemm-epilogues="n-multiple=0" %s 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: kiln-form-gemm-epilogues: n-multiple=0, expected a positive element count

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

/// A zero-filled matmul's single bias + relu consumer becomes its epilogue
/// (C is its input 1); the fill, whose empty tensor the generic wrote too,
/// gets one of its own.
// CHECK-LABEL: func @bias_relu
// CHECK: %[[OUT:.+]] = tensor.empty() : tensor<64x32xf32>
// CHECK: %[[OWN:.+]] = tensor.empty() : tensor<64x32xf32>
// CHECK: linalg.fill {{.*}} outs(%[[OWN]] :
// CHECK: %[[M:.+]] = linalg.matmul
// CHECK-NEXT: linalg.generic
// CHECK-SAME: ins(%{{.+}}, %[[M]] :
// CHECK-SAME: outs(%[[OUT]] :
// CHECK-SAME: kiln.epilogue = 1
func.func @bias_relu(%a: tensor<64x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %m = linalg.matmul ins(%a, %w : tensor<64x16xf32>, tensor<16x32xf32>) outs(%f : tensor<64x32xf32>) -> tensor<64x32xf32>
  %g = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b, %m : tensor<32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %s = arith.addf %c, %x : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x32xf32>
  return %g : tensor<64x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

/// N = 20 is no multiple of 8 (f16/bf16 TMA rows), but of 4 (tf32).
// CHECK-LABEL: func @narrow_n
// CHECK-NOT: kiln.epilogue
// TF32-LABEL: func @narrow_n
// TF32: kiln.epilogue = 0
func.func @narrow_n(%a: tensor<64x16xf32>, %w: tensor<16x20xf32>) -> tensor<64x20xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x20xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x20xf32>) -> tensor<64x20xf32>
  %m = linalg.matmul ins(%a, %w : tensor<64x16xf32>, tensor<16x20xf32>) outs(%f : tensor<64x20xf32>) -> tensor<64x20xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<64x20xf32>) outs(%e : tensor<64x20xf32>) {
  ^bb0(%c: f32, %o: f32):
    %r = arith.maximumf %c, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x20xf32>
  return %g : tensor<64x20xf32>
}

// -----

/// A projection read as [batch, rows, N] through expand_shape (bias by
/// column, residual whole): the epilogue reads the view, which moves with it.
// CHECK-LABEL: func @projection
// CHECK: linalg.matmul
// CHECK-NEXT: tensor.expand_shape
// CHECK: linalg.generic
// CHECK-SAME: kiln.epilogue = 0
func.func @projection(%a: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>,
                      %res: tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m = linalg.matmul ins(%a, %w : tensor<16x32xf32>, tensor<32x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %x = tensor.expand_shape %m [[0, 1], [2]] output_shape [2, 8, 64] : tensor<16x64xf32> into tensor<2x8x64xf32>
  %e3 = tensor.empty() : tensor<2x8x64xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>,
                                        affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %b, %res : tensor<2x8x64xf32>, tensor<64xf32>, tensor<2x8x64xf32>) outs(%e3 : tensor<2x8x64xf32>) {
  ^bb0(%c: f32, %y: f32, %r: f32, %o: f32):
    %s = arith.addf %c, %y : f32
    %t = arith.addf %s, %r : f32
    linalg.yield %t : f32
  } -> tensor<2x8x64xf32>
  return %g : tensor<2x8x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

/// Not epilogues: a product read twice; one that does not start from zero;
/// a consumer reading C transposed.
// CHECK-LABEL: func @kept
// CHECK-NOT: kiln.epilogue
// TF32-LABEL: func @kept
// TF32-NOT: kiln.epilogue
func.func @kept(%a: tensor<64x16xf32>, %w: tensor<16x32xf32>, %c0: tensor<64x32xf32>,
                %sq: tensor<32x32xf32>) -> (tensor<64x32xf32>, tensor<64x32xf32>, tensor<32x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %m = linalg.matmul ins(%a, %w : tensor<64x16xf32>, tensor<16x32xf32>) outs(%f : tensor<64x32xf32>) -> tensor<64x32xf32>
  %twice = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %m : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.mulf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  %n = linalg.matmul ins(%a, %w : tensor<64x16xf32>, tensor<16x32xf32>) outs(%c0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %nz = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%n : tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x32xf32>
  %e2 = tensor.empty() : tensor<32x32xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %p = linalg.matmul ins(%sq, %sq : tensor<32x32xf32>, tensor<32x32xf32>) outs(%f2 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<32x32xf32>) outs(%e2 : tensor<32x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<32x32xf32>
  return %twice, %nz, %t : tensor<64x32xf32>, tensor<64x32xf32>, tensor<32x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

/// A is a slice: an epilogue where A is converted (f16/bf16), not where the
/// kernel reads A as it is (dense-a, tf32).
// CHECK-LABEL: func @slice_a
// CHECK: kiln.epilogue = 0
// TF32-LABEL: func @slice_a
// TF32-NOT: kiln.epilogue
func.func @slice_a(%big: tensor<64x64xf32>, %w: tensor<16x32xf32>) -> tensor<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %slice = tensor.extract_slice %big[0, 0] [64, 16] [1, 1] : tensor<64x64xf32> to tensor<64x16xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %q = linalg.matmul ins(%slice, %w : tensor<64x16xf32>, tensor<16x32xf32>) outs(%f3 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %qs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x32xf32>
  return %qs : tensor<64x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

/// The zero fill's empty tensor is also another op's output: the product
/// gets a fill of an empty tensor of its own (its C is never stored, so no
/// other value may live in that buffer).
// CHECK-LABEL: func @shared_empty
// TF32-LABEL: func @shared_empty
// CHECK: %[[SHARED:.+]] = tensor.empty() : tensor<64x32xf32>
// CHECK-NEXT: %[[OWN:.+]] = tensor.empty() : tensor<64x32xf32>
// CHECK: %[[FILL:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[OWN]] :
// CHECK-NEXT: linalg.matmul {{.*}} outs(%[[FILL]] :
// CHECK-NEXT: linalg.generic
// CHECK-SAME: kiln.epilogue = 0
func.func @shared_empty(%a: tensor<64x16xf32>, %w: tensor<16x32xf32>) -> (tensor<64x32xf32>, tensor<64x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %m = linalg.matmul ins(%a, %w : tensor<64x16xf32>, tensor<16x32xf32>) outs(%f : tensor<64x32xf32>) -> tensor<64x32xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%c: f32, %o: f32):
    %r = arith.maximumf %c, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x32xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) {
  ^bb0(%c: f32, %o: f32):
    %r = arith.addf %c, %c : f32
    linalg.yield %r : f32
  } -> tensor<64x32xf32>
  return %g, %h : tensor<64x32xf32>, tensor<64x32xf32>
}

// -----

#nchw = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1)>

/// A conv with a symbolic batch (all images in one GEMM launch) takes its
/// bias + relu as its epilogue like a static one; its own zero fill and the
/// epilogue's own output keep the batch's size.
// CHECK-LABEL: func @conv_symbolic_batch
// CHECK: tensor.empty(%{{.+}}) : tensor<?x16x6x6xf32>
// CHECK: %[[OWN:.+]] = tensor.empty(%{{.+}}) : tensor<?x16x6x6xf32>
// CHECK: %[[OUT:.+]] = tensor.empty(%{{.+}}) : tensor<?x16x6x6xf32>
// CHECK: linalg.fill {{.*}} outs(%[[OWN]] :
// CHECK: %[[Y:.+]] = linalg.conv_2d_nchw_fchw
// CHECK-NEXT: linalg.generic
// CHECK-SAME: ins(%[[Y]], %arg2 :
// CHECK-SAME: outs(%[[OUT]] :
// CHECK-SAME: kiln.epilogue = 0
// TF32-LABEL: func @conv_symbolic_batch
// TF32: kiln.epilogue = 0
func.func @conv_symbolic_batch(%x: tensor<?x8x8x8xf32>, %w: tensor<16x8x3x3xf32>, %b: tensor<16xf32>) -> tensor<?x16x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x8x8xf32>
  %e = tensor.empty(%n) : tensor<?x16x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x16x6x6xf32>) -> tensor<?x16x6x6xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<?x8x8x8xf32>, tensor<16x8x3x3xf32>) outs(%f : tensor<?x16x6x6xf32>) -> tensor<?x16x6x6xf32>
  %g = linalg.generic {indexing_maps = [#nchw, #chan, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y, %b : tensor<?x16x6x6xf32>, tensor<16xf32>) outs(%e : tensor<?x16x6x6xf32>) {
  ^bb0(%c: f32, %x0: f32, %o: f32):
    %s = arith.addf %c, %x0 : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x16x6x6xf32>
  return %g : tensor<?x16x6x6xf32>
}

// -----

#nchw = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

/// A conv whose filters are not static is not the kernel's.
// CHECK-LABEL: func @conv_dynamic_filters
// CHECK-NOT: kiln.epilogue
func.func @conv_dynamic_filters(%x: tensor<2x8x8x8xf32>, %w: tensor<?x8x3x3xf32>) -> tensor<2x?x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %fs = tensor.dim %w, %c0 : tensor<?x8x3x3xf32>
  %e = tensor.empty(%fs) : tensor<2x?x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x?x6x6xf32>) -> tensor<2x?x6x6xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x8x8x8xf32>, tensor<?x8x3x3xf32>) outs(%f : tensor<2x?x6x6xf32>) -> tensor<2x?x6x6xf32>
  %g = linalg.generic {indexing_maps = [#nchw, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y : tensor<2x?x6x6xf32>) outs(%e : tensor<2x?x6x6xf32>) {
  ^bb0(%c: f32, %o: f32):
    %r = arith.maximumf %c, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x?x6x6xf32>
  return %g : tensor<2x?x6x6xf32>
}

// -----

#nchw = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1)>

/// An epilogue whose result is the next conv's zero-padded input (inserted
/// into the pad) is still the conv's; its output becomes an alloc_tensor
/// of its own (not computed in place in the pad's slice, which the
/// kernel's dense stores cannot write), so the insertion stays a copy.
// CHECK-LABEL: func @conv_into_padding
// CHECK: %[[OUT:.+]] = bufferization.alloc_tensor() : tensor<2x16x6x6xf32>
// CHECK: %[[Y:.+]] = linalg.conv_2d_nchw_fchw
// CHECK-NEXT: %[[G:.+]] = linalg.generic
// CHECK-SAME: outs(%[[OUT]] :
// CHECK-SAME: kiln.epilogue = 0
// CHECK: tensor.insert_slice %[[G]] into
func.func @conv_into_padding(%x: tensor<2x8x8x8xf32>, %w: tensor<16x8x3x3xf32>, %b: tensor<16xf32>) -> tensor<2x16x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x6x6xf32>) -> tensor<2x16x6x6xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x8x8x8xf32>, tensor<16x8x3x3xf32>) outs(%f : tensor<2x16x6x6xf32>) -> tensor<2x16x6x6xf32>
  %g = linalg.generic {indexing_maps = [#nchw, #chan, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y, %b : tensor<2x16x6x6xf32>, tensor<16xf32>) outs(%e : tensor<2x16x6x6xf32>) {
  ^bb0(%c: f32, %x0: f32, %o: f32):
    %s = arith.addf %c, %x0 : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x16x6x6xf32>
  %pe = tensor.empty() : tensor<2x16x8x8xf32>
  %pf = linalg.fill ins(%zero : f32) outs(%pe : tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  %padded = tensor.insert_slice %g into %pf[0, 0, 1, 1] [2, 16, 6, 6] [1, 1, 1, 1] : tensor<2x16x6x6xf32> into tensor<2x16x8x8xf32>
  return %padded : tensor<2x16x8x8xf32>
}

// -----

#nchw = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1)>

/// The residual input of a conv's epilogue is a max pool's result that is
/// also inserted into the next conv's padding, and the pool's -inf fill
/// writes an empty tensor CSE shares with other ops: still the conv's
/// epilogue; the pool's chain gets an alloc_tensor of its own (an empty
/// tensor is a shape, not a buffer), so the pool's result is a dense buffer
/// and its insertion a copy.
// CHECK-LABEL: func @residual_shared_empty
// CHECK: %[[OWN:.+]] = bufferization.alloc_tensor() : tensor<1x8x8x8xf32>
// CHECK-NEXT: %[[NEG:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[OWN]] :
// CHECK: %[[POOL:.+]] = linalg.pooling_nchw_max {{.*}} outs(%[[NEG]] :
// CHECK: tensor.insert_slice %[[POOL]] into
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-NEXT: linalg.generic
// CHECK-SAME: ins(%{{.+}}, %{{.+}}, %[[POOL]] :
// CHECK-SAME: kiln.epilogue = 0
func.func @residual_shared_empty(%x: tensor<1x8x18x18xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x8x8x8xf32>
  %neg = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %win : tensor<1x8x18x18xf32>, tensor<3x3xf32>) outs(%neg : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %pe = tensor.empty() : tensor<1x8x10x10xf32>
  %pf = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x8x10x10xf32>) -> tensor<1x8x10x10xf32>
  %padded = tensor.insert_slice %pool into %pf[0, 0, 1, 1] [1, 8, 8, 8] [1, 1, 1, 1] : tensor<1x8x8x8xf32> into tensor<1x8x10x10xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<1x8x10x10xf32>, tensor<8x8x3x3xf32>) outs(%f : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %g = linalg.generic {indexing_maps = [#nchw, #chan, #nchw, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y, %b, %pool : tensor<1x8x8x8xf32>, tensor<8xf32>, tensor<1x8x8x8xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%c: f32, %x0: f32, %r0: f32, %o: f32):
    %s = arith.addf %c, %x0 : f32
    %t = arith.addf %s, %r0 : f32
    %r = arith.maximumf %t, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x8x8x8xf32>
  return %g : tensor<1x8x8x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

/// A classifier's matmul after a flatten of a symbolic batch: its rows M are
/// symbolic, K and N static. Its bias + relu is its epilogue as at a static
/// batch (the kernel reads M at run time); the fill gets a symbolic-size
/// empty tensor of its own.
// CHECK-LABEL: func @symbolic_rows
// CHECK: tensor.empty(%{{.+}}) : tensor<?x32xf32>
// CHECK: %[[OWN:.+]] = tensor.empty(%{{.+}}) : tensor<?x32xf32>
// CHECK: %[[OUT:.+]] = tensor.empty(%{{.+}}) : tensor<?x32xf32>
// CHECK: linalg.fill {{.*}} outs(%[[OWN]] :
// CHECK: %[[P:.+]] = linalg.matmul
// CHECK-NEXT: linalg.generic
// CHECK-SAME: ins(%{{.+}}, %[[P]] :
// CHECK-SAME: outs(%[[OUT]] :
// CHECK-SAME: kiln.epilogue = 1
// TF32-LABEL: func @symbolic_rows
// TF32: linalg.generic
// TF32-SAME: kiln.epilogue = 1
func.func @symbolic_rows(%a: tensor<?x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<?x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%n) : tensor<?x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x32xf32>) -> tensor<?x32xf32>
  %m = linalg.matmul ins(%a, %w : tensor<?x16xf32>, tensor<16x32xf32>) outs(%f : tensor<?x32xf32>) -> tensor<?x32xf32>
  %g = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b, %m : tensor<32xf32>, tensor<?x32xf32>) outs(%e : tensor<?x32xf32>) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %s = arith.addf %c, %x : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x32xf32>
  return %g : tensor<?x32xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col3 = affine_map<(d0, d1, d2) -> (d2)>

/// Not epilogues: symbolic rows read as [batch, rows, N] through an
/// expand_shape (the kernel collapses such a generic back onto C only with
/// static sizes), and a batch_matmul with a symbolic batch.
// CHECK-LABEL: func @symbolic_kept
// CHECK-NOT: kiln.epilogue
func.func @symbolic_kept(%a: tensor<?x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>,
                         %x: tensor<?x8x16xf32>, %y: tensor<?x16x32xf32>) -> (tensor<?x4x32xf32>, tensor<?x8x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%n) : tensor<?x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x32xf32>) -> tensor<?x32xf32>
  %m = linalg.matmul ins(%a, %w : tensor<?x16xf32>, tensor<16x32xf32>) outs(%f : tensor<?x32xf32>) -> tensor<?x32xf32>
  %c4 = arith.constant 4 : index
  %bt = arith.divui %n, %c4 : index
  %v = tensor.expand_shape %m [[0, 1], [2]] output_shape [%bt, 4, 32] : tensor<?x32xf32> into tensor<?x4x32xf32>
  %e3 = tensor.empty(%bt) : tensor<?x4x32xf32>
  %g = linalg.generic {indexing_maps = [#col3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b, %v : tensor<32xf32>, tensor<?x4x32xf32>) outs(%e3 : tensor<?x4x32xf32>) {
  ^bb0(%x0: f32, %c: f32, %o: f32):
    %s = arith.addf %c, %x0 : f32
    linalg.yield %s : f32
  } -> tensor<?x4x32xf32>
  %nb = tensor.dim %x, %c0 : tensor<?x8x16xf32>
  %eb = tensor.empty(%nb) : tensor<?x8x32xf32>
  %fb = linalg.fill ins(%zero : f32) outs(%eb : tensor<?x8x32xf32>) -> tensor<?x8x32xf32>
  %p = linalg.batch_matmul ins(%x, %y : tensor<?x8x16xf32>, tensor<?x16x32xf32>) outs(%fb : tensor<?x8x32xf32>) -> tensor<?x8x32xf32>
  %h = linalg.generic {indexing_maps = [#col3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b, %p : tensor<32xf32>, tensor<?x8x32xf32>) outs(%eb : tensor<?x8x32xf32>) {
  ^bb0(%x0: f32, %c: f32, %o: f32):
    %s = arith.addf %c, %x0 : f32
    linalg.yield %s : f32
  } -> tensor<?x8x32xf32>
  return %g, %h : tensor<?x4x32xf32>, tensor<?x8x32xf32>
}

// -----

#kA = affine_map<(b, m, n, k) -> (b, m, k)>
#kB = affine_map<(b, m, n, k) -> (b, n, k)>
#kC = affine_map<(b, m, n, k) -> (b, m, n)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

/// Attention's scores with a K-major B (a KV cache read where it lies) and
/// their mask add: the epilogue of the product, although K = 16 is not a
/// multiple of the batched k step (a K-major B's rows are zero-filled past
/// K). The same product on a slice of a larger cache (a strided view) is
/// not the kernel's: its mask add stays a kernel of its own.
// CHECK-LABEL: func @k_major_scores
// CHECK: %[[P:.+]] = linalg.batch_matmul indexing_maps
// CHECK-NEXT: linalg.generic
// CHECK-SAME: ins(%[[P]], %arg3 :
// CHECK-SAME: kiln.epilogue = 0
// CHECK: %[[S:.+]] = linalg.batch_matmul indexing_maps
// CHECK-NEXT: linalg.generic
// CHECK-SAME: ins(%[[S]], %arg3 :
// CHECK-NOT: kiln.epilogue
// TF32-LABEL: func @k_major_scores
// TF32: kiln.epilogue = 0
// TF32-NOT: kiln.epilogue
func.func @k_major_scores(%q: tensor<8x1x16xf32>, %k: tensor<8x40x16xf32>, %big: tensor<8x48x16xf32>,
                          %mask: tensor<8x1x40xf32>) -> (tensor<8x1x40xf32>, tensor<8x1x40xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x1x40xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x1x40xf32>) -> tensor<8x1x40xf32>
  %p = linalg.batch_matmul indexing_maps = [#kA, #kB, #kC]
      ins(%q, %k : tensor<8x1x16xf32>, tensor<8x40x16xf32>) outs(%f : tensor<8x1x40xf32>) -> tensor<8x1x40xf32>
  %g = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p, %mask : tensor<8x1x40xf32>, tensor<8x1x40xf32>) outs(%e : tensor<8x1x40xf32>) {
  ^bb0(%c: f32, %m: f32, %o: f32):
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x1x40xf32>
  %view = tensor.extract_slice %big[0, 0, 0] [8, 40, 16] [1, 1, 1] : tensor<8x48x16xf32> to tensor<8x40x16xf32>
  %e2 = tensor.empty() : tensor<8x1x40xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x1x40xf32>) -> tensor<8x1x40xf32>
  %s2 = linalg.batch_matmul indexing_maps = [#kA, #kB, #kC]
      ins(%q, %view : tensor<8x1x16xf32>, tensor<8x40x16xf32>) outs(%f2 : tensor<8x1x40xf32>) -> tensor<8x1x40xf32>
  %g2 = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s2, %mask : tensor<8x1x40xf32>, tensor<8x1x40xf32>) outs(%e2 : tensor<8x1x40xf32>) {
  ^bb0(%c: f32, %m: f32, %o: f32):
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x1x40xf32>
  return %g, %g2 : tensor<8x1x40xf32>, tensor<8x1x40xf32>
}
