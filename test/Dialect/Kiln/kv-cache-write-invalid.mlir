// RUN: kiln-opt %s --split-input-file --verify-diagnostics

func.func @rank(%cache: tensor<1x2x8x4xf32>, %new: tensor<2x1x4xf32>, %pos: tensor<1x1xi64>) {
  // expected-error @+1 {{update has rank 3, the cache 4; expected equal ranks >= 2}}
  %u = kiln.kv_cache_write %cache, %new, %pos {axis = 2 : i64} : (tensor<1x2x8x4xf32>, tensor<2x1x4xf32>, tensor<1x1xi64>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @batch_axis(%cache: tensor<1x2x8x4xf32>, %new: tensor<1x2x8x4xf32>, %pos: tensor<1x1xi64>) {
  // expected-error @+1 {{axis 0 is the batch; the rows lie along another axis}}
  %u = kiln.kv_cache_write %cache, %new, %pos {axis = 0 : i64} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x1xi64>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @dynamic_length(%cache: tensor<1x2x?x4xf32>, %new: tensor<1x2x1x4xf32>, %pos: tensor<1x1xi64>) {
  // expected-error @+1 {{the cache's dim 2 (its length) must be static}}
  %u = kiln.kv_cache_write %cache, %new, %pos {axis = 2 : i64} : (tensor<1x2x?x4xf32>, tensor<1x2x1x4xf32>, tensor<1x1xi64>) -> tensor<1x2x?x4xf32>
  return
}

// -----

func.func @two_rows(%cache: tensor<1x2x8x4xf32>, %new: tensor<1x2x2x4xf32>, %pos: tensor<1x1xi64>) {
  // expected-error @+1 {{update has 2 rows along the axis; expected 1 per sequence}}
  %u = kiln.kv_cache_write %cache, %new, %pos {axis = 2 : i64} : (tensor<1x2x8x4xf32>, tensor<1x2x2x4xf32>, tensor<1x1xi64>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @heads(%cache: tensor<1x2x8x4xf32>, %new: tensor<1x3x1x4xf32>, %pos: tensor<1x1xi64>) {
  // expected-error @+1 {{update dim 1 is 3, the cache's 2}}
  %u = kiln.kv_cache_write %cache, %new, %pos {axis = 2 : i64} : (tensor<1x2x8x4xf32>, tensor<1x3x1x4xf32>, tensor<1x1xi64>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @positions(%cache: tensor<2x2x8x4xf32>, %new: tensor<2x2x1x4xf32>, %pos: tensor<3x1xi64>) {
  // expected-error @+1 {{positions must be [batch, 1] (one row per sequence)}}
  %u = kiln.kv_cache_write %cache, %new, %pos {axis = 2 : i64} : (tensor<2x2x8x4xf32>, tensor<2x2x1x4xf32>, tensor<3x1xi64>) -> tensor<2x2x8x4xf32>
  return
}
