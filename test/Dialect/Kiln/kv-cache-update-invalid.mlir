// RUN: kiln-opt %s --split-input-file --verify-diagnostics

func.func @dynamic_length(%cache: tensor<?x2x?x4xf32>, %new: tensor<?x2x1x4xf32>, %offset: tensor<i64>) {
  // expected-error @+1 {{the cache's dim 2 (its length) must be static}}
  %u, %p, %v = kiln.kv_cache_update %cache, %new, %offset {axis = 2 : i64} : (tensor<?x2x?x4xf32>, tensor<?x2x1x4xf32>, tensor<i64>) -> (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>)
  return
}

// -----

func.func @heads(%cache: tensor<?x2x8x4xf32>, %new: tensor<?x3x1x4xf32>, %offset: tensor<i64>) {
  // expected-error @+1 {{update dim 1 is 3, the cache's 2}}
  %u, %p, %v = kiln.kv_cache_update %cache, %new, %offset {axis = 2 : i64} : (tensor<?x2x8x4xf32>, tensor<?x3x1x4xf32>, tensor<i64>) -> (tensor<?x2x8x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>)
  return
}

// -----

func.func @too_many_rows(%cache: tensor<?x2x8x4xf32>, %new: tensor<?x2x9x4xf32>, %offset: tensor<i64>) {
  // expected-error @+1 {{update has 9 rows, more than the cache's 8}}
  %u, %p, %v = kiln.kv_cache_update %cache, %new, %offset {axis = 2 : i64} : (tensor<?x2x8x4xf32>, tensor<?x2x9x4xf32>, tensor<i64>) -> (tensor<?x2x8x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>)
  return
}

// -----

func.func @rank(%cache: tensor<?x2x8x4xf32>, %new: tensor<2x1x4xf32>, %offset: tensor<i64>) {
  // expected-error @+1 {{update has rank 3, the cache 4}}
  %u, %p, %v = kiln.kv_cache_update %cache, %new, %offset {axis = 2 : i64} : (tensor<?x2x8x4xf32>, tensor<2x1x4xf32>, tensor<i64>) -> (tensor<?x2x8x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>)
  return
}
