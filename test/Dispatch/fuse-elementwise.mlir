// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-fuse-elementwise))" -split-input-file | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-fuse-elementwise{max-fused-ops=4}))" -split-input-file | FileCheck %s --check-prefix=LIMIT

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

/// bias-add then relu after a matmul: one generic consumes the matmul
/// (which stays a named op).
// CHECK-LABEL: func @bias_relu
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
func.func @bias_relu(%a: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %biased = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%biased : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  return %relu : tensor<4x16xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

/// A producer with two consumers is not fused (it would be computed twice).
// CHECK-LABEL: func @shared_producer
// CHECK-COUNT-3: linalg.generic
func.func @shared_producer(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%exp : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %abs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%exp : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.absf %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %neg, %abs : tensor<8xf32>, tensor<8xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#last = affine_map<(d0, d1, d2) -> (d2)>

/// A bias add followed by a head-split transpose: the transpose is written
/// as a generic and fused, so one kernel adds and writes the permuted layout.
// CHECK-LABEL: func @bias_then_transpose
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x2x8xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<2x4x8xf32>)
// CHECK: arith.addf
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.generic
func.func @bias_then_transpose(%x: tensor<4x2x8xf32>, %b: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %e = tensor.empty() : tensor<4x2x8xf32>
  %biased = linalg.generic {indexing_maps = [#id3, #last, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %b : tensor<4x2x8xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x2x8xf32>
  %t0 = tensor.empty() : tensor<2x4x8xf32>
  %t = linalg.transpose ins(%biased : tensor<4x2x8xf32>) outs(%t0 : tensor<2x4x8xf32>) permutation = [1, 0, 2]
  return %t : tensor<2x4x8xf32>
}

// -----

/// A transpose of a function argument has no producer to fuse with: it
/// stays, as a data-movement generic.
// CHECK-LABEL: func @lone_transpose
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]]
func.func @lone_transpose(%x: tensor<4x2xf32>) -> tensor<2x4xf32> {
  %t0 = tensor.empty() : tensor<2x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x2xf32>) outs(%t0 : tensor<2x4xf32>) permutation = [1, 0]
  return %t : tensor<2x4xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

/// A chain of three squarings fuses into one kernel by default; with bodies
/// capped at 4 operations (two multiplications and the yield) it stays two.
// CHECK-LABEL: func @chain
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
// LIMIT-LABEL: func @chain
// LIMIT-COUNT-2: linalg.generic
// LIMIT-NOT: linalg.generic
func.func @chain(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.mulf %v, %v : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.mulf %v, %v : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%b : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.mulf %v, %v : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  return %c : tensor<8xf32>
}

// -----

/// An integer matmul's chain (the i32 bias add of a conv, per row [M, 1];
/// the requantization; the NCHW view after it): the chain is one generic on
/// [M, N] reading the matmul (the kernel's epilogue to be), fused before
/// the reshape could move between the bias add (which it cannot pass) and
/// the rest. The op after the view stays apart.
// CHECK-LABEL: func @integer_chain
// LIMIT-LABEL: func @integer_chain
// CHECK: %[[M:.+]] = linalg.matmul
// CHECK: %[[G:.+]] = linalg.generic {{.+}} ins(%[[M]], %{{.+}} : tensor<4x6xi32>, tensor<4x1xi32>)
// CHECK: arith.addi
// CHECK: arith.sitofp
// CHECK: arith.fptosi
// CHECK-NEXT: linalg.yield
// CHECK: %[[V:.+]] = tensor.expand_shape %[[G]]
// CHECK: linalg.generic {{.+}} ins(%[[V]] : tensor<1x4x2x3xi8>)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#rowbias = affine_map<(d0, d1) -> (d0, 0)>
func.func @integer_chain(%a: tensor<4x8xi16>, %w: tensor<8x6xi16>, %b: tensor<4x1xi32>) -> tensor<1x4x2x3xi8> {
  %zero = arith.constant 0 : i32
  %scale = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<4x6xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<4x6xi32>) -> tensor<4x6xi32>
  %m = linalg.matmul ins(%a, %w : tensor<4x8xi16>, tensor<8x6xi16>) outs(%f : tensor<4x6xi32>) -> tensor<4x6xi32>
  %biased = linalg.generic {indexing_maps = [#id2, #rowbias, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<4x6xi32>, tensor<4x1xi32>) outs(%e : tensor<4x6xi32>) {
  ^bb0(%x: i32, %y: i32, %o: i32):
    %s = arith.addi %x, %y : i32
    linalg.yield %s : i32
  } -> tensor<4x6xi32>
  %e8 = tensor.empty() : tensor<4x6xi8>
  %q = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%biased : tensor<4x6xi32>) outs(%e8 : tensor<4x6xi8>) {
  ^bb0(%x: i32, %o: i8):
    %xf = arith.sitofp %x : i32 to f32
    %y = arith.mulf %xf, %scale : f32
    %r = math.roundeven %y : f32
    %i = arith.fptosi %r : f32 to i8
    linalg.yield %i : i8
  } -> tensor<4x6xi8>
  %v = tensor.expand_shape %q [[0, 1], [2, 3]] output_shape [1, 4, 2, 3] : tensor<4x6xi8> into tensor<1x4x2x3xi8>
  %e4 = tensor.empty() : tensor<1x4x2x3xi8>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%v : tensor<1x4x2x3xi8>) outs(%e4 : tensor<1x4x2x3xi8>) {
  ^bb0(%x: i8, %o: i8):
    %one = arith.constant 1 : i8
    %s = arith.addi %x, %one : i8
    linalg.yield %s : i8
  } -> tensor<1x4x2x3xi8>
  return %n : tensor<1x4x2x3xi8>
}

// -----

/// An integer depthwise conv at its row pitch (kiln-recognize-integer-matmul):
/// the products of two 8-bit windows of the flattened input, their i32 sum
/// and the requantization are one generic on the pitched [1, 2, 8], fused
/// before the reshape to the [1, 2, 2, 4] rows could move into the chain
/// (it cannot pass the windows). The op after the view stays apart.
// CHECK-LABEL: func @depthwise_chain
// CHECK: %[[T0:.+]] = tensor.extract_slice %{{.+}}[0, 0, 0] [1, 2, 8]
// CHECK: %[[T1:.+]] = tensor.extract_slice %{{.+}}[0, 0, 4] [1, 2, 8]
// CHECK: %[[G:.+]] = linalg.generic {{.+}} ins(%[[T0]], %{{.+}}, %[[T1]], %{{.+}} : tensor<1x2x8xi8>, tensor<1x2x1xi32>, tensor<1x2x8xi8>, tensor<1x2x1xi32>)
// CHECK: arith.muli
// CHECK: arith.muli
// CHECK: arith.addi
// CHECK: arith.sitofp
// CHECK: arith.fptosi
// CHECK-NEXT: linalg.yield
// CHECK: %[[V:.+]] = tensor.expand_shape %[[G]]
// CHECK: linalg.generic {{.+}} ins(%[[V]] : tensor<1x2x2x4xi8>)
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#channel = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
func.func @depthwise_chain(%x: tensor<1x2x12xi8>, %w0: tensor<1x2x1xi32>, %w1: tensor<1x2x1xi32>) -> tensor<1x2x2x4xi8> {
  %scale = arith.constant 0.5 : f32
  %t0 = tensor.extract_slice %x[0, 0, 0] [1, 2, 8] [1, 1, 1] : tensor<1x2x12xi8> to tensor<1x2x8xi8>
  %t1 = tensor.extract_slice %x[0, 0, 4] [1, 2, 8] [1, 1, 1] : tensor<1x2x12xi8> to tensor<1x2x8xi8>
  %e = tensor.empty() : tensor<1x2x8xi32>
  %p0 = linalg.generic {indexing_maps = [#id3, #channel, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t0, %w0 : tensor<1x2x8xi8>, tensor<1x2x1xi32>) outs(%e : tensor<1x2x8xi32>) {
  ^bb0(%a: i8, %b: i32, %o: i32):
    %c = arith.extsi %a : i8 to i32
    %m = arith.muli %c, %b : i32
    linalg.yield %m : i32
  } -> tensor<1x2x8xi32>
  %p1 = linalg.generic {indexing_maps = [#id3, #channel, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t1, %w1 : tensor<1x2x8xi8>, tensor<1x2x1xi32>) outs(%e : tensor<1x2x8xi32>) {
  ^bb0(%a: i8, %b: i32, %o: i32):
    %c = arith.extsi %a : i8 to i32
    %m = arith.muli %c, %b : i32
    linalg.yield %m : i32
  } -> tensor<1x2x8xi32>
  %s = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p0, %p1 : tensor<1x2x8xi32>, tensor<1x2x8xi32>) outs(%e : tensor<1x2x8xi32>) {
  ^bb0(%a: i32, %b: i32, %o: i32):
    %m = arith.addi %a, %b : i32
    linalg.yield %m : i32
  } -> tensor<1x2x8xi32>
  %e8 = tensor.empty() : tensor<1x2x8xi8>
  %q = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x2x8xi32>) outs(%e8 : tensor<1x2x8xi8>) {
  ^bb0(%a: i32, %o: i8):
    %f = arith.sitofp %a : i32 to f32
    %y = arith.mulf %f, %scale : f32
    %r = math.roundeven %y : f32
    %i = arith.fptosi %r : f32 to i8
    linalg.yield %i : i8
  } -> tensor<1x2x8xi8>
  %v = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [1, 2, 2, 4] : tensor<1x2x8xi8> into tensor<1x2x2x4xi8>
  %e4 = tensor.empty() : tensor<1x2x2x4xi8>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%v : tensor<1x2x2x4xi8>) outs(%e4 : tensor<1x2x2x4xi8>) {
  ^bb0(%a: i8, %o: i8):
    %one = arith.constant 1 : i8
    %s1 = arith.addi %a, %one : i8
    linalg.yield %s1 : i8
  } -> tensor<1x2x2x4xi8>
  return %n : tensor<1x2x2x4xi8>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

/// A decode step's residual add on a product's [1, N] rows, read back as
/// [1, 1, N] by the next op: the reshapes only add or drop unit dims, so
/// they are not moved across the add; it keeps reading the product
/// directly (its epilogue later) and the reshape stays after it.
// CHECK-LABEL: func @residual_after_product
// CHECK: %[[M:.+]] = linalg.matmul
// CHECK: %[[ADD:.+]] = linalg.generic {{.*}} ins(%[[M]], %{{.+}} : tensor<1x16xf32>, tensor<16xf32>)
// CHECK: arith.addf
// CHECK: tensor.expand_shape %[[ADD]]
func.func @residual_after_product(%a: tensor<1x8xf32>, %w: tensor<8x16xf32>, %r: tensor<1x1x16xf32>) -> tensor<1x1x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16xf32>) -> tensor<1x16xf32>
  %m = linalg.matmul ins(%a, %w : tensor<1x8xf32>, tensor<8x16xf32>) outs(%f : tensor<1x16xf32>) -> tensor<1x16xf32>
  %flat = tensor.collapse_shape %r [[0, 1, 2]] : tensor<1x1x16xf32> into tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%m, %flat : tensor<1x16xf32>, tensor<16xf32>) outs(%e : tensor<1x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<1x16xf32>
  %rows = tensor.expand_shape %sum [[0], [1, 2]] output_shape [1, 1, 16] : tensor<1x16xf32> into tensor<1x1x16xf32>
  %e3 = tensor.empty() : tensor<1x1x16xf32>
  %sq = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%rows : tensor<1x1x16xf32>) outs(%e3 : tensor<1x1x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.mulf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<1x1x16xf32>
  return %sq : tensor<1x1x16xf32>
}

// -----

/// A decode step's v row: cast to f16, then the head transpose that only
/// moves unit dims ([1, 1, 4, 8] -> [1, 4, 1, 8]: reshapes), then written
/// into the cache by a generic broadcasting it over the cache's rows. The
/// write reads the cast's result directly (the reshapes folded into its
/// map), and the cast fuses into it: one generic, no reshape.
// CHECK-DAG: #[[NEW:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, d1, d3)>
// CHECK-LABEL: func @cache_write_reads_through_unit_dim_reshapes
// CHECK-SAME: (%[[V:.+]]: tensor<1x1x4x8xf32>, %[[POS:.+]]: tensor<1x1xi64>, %[[CACHE:.+]]: tensor<1x4x6x8xf16>)
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: %[[W:.+]] = linalg.generic {indexing_maps = [#[[NEW]], {{.+}}]
// CHECK-SAME: ins(%[[V]], %[[POS]] : tensor<1x1x4x8xf32>, tensor<1x1xi64>) outs(%[[CACHE]] : tensor<1x4x6x8xf16>)
// CHECK: arith.truncf
// CHECK: arith.select
// CHECK-NOT: linalg.generic
// CHECK: return %[[W]]
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>
#pos = affine_map<(d0, d1, d2, d3) -> (d0, 0)>
func.func @cache_write_reads_through_unit_dim_reshapes(%v: tensor<1x1x4x8xf32>, %pos: tensor<1x1xi64>, %cache: tensor<1x4x6x8xf16>) -> tensor<1x4x6x8xf16> {
  %e = tensor.empty() : tensor<1x1x4x8xf16>
  %h = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v : tensor<1x1x4x8xf32>) outs(%e : tensor<1x1x4x8xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  } -> tensor<1x1x4x8xf16>
  %c = tensor.collapse_shape %h [[0, 1, 2], [3]] : tensor<1x1x4x8xf16> into tensor<4x8xf16>
  %x = tensor.expand_shape %c [[0, 1], [2, 3]] output_shape [1, 4, 1, 8] : tensor<4x8xf16> into tensor<1x4x1x8xf16>
  %w = linalg.generic {indexing_maps = [#row, #pos, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %pos : tensor<1x4x1x8xf16>, tensor<1x1xi64>) outs(%cache : tensor<1x4x6x8xf16>) {
  ^bb0(%in: f16, %p: i64, %out: f16):
    %i = linalg.index 2 : index
    %ii = arith.index_cast %i : index to i64
    %eq = arith.cmpi eq, %ii, %p : i64
    %s = arith.select %eq, %in, %out : f16
    linalg.yield %s : f16
  } -> tensor<1x4x6x8xf16>
  return %w : tensor<1x4x6x8xf16>
}
