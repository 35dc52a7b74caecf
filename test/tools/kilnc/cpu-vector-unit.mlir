// RUN: kilnc %s --cpu=haswell --emit=codegen -o - | FileCheck %s --check-prefix=AVX2
// RUN: kilnc %s --cpu=haswell --emit=codegen -o - | FileCheck %s --check-prefix=AVX2-ONLY
// RUN: kilnc %s --cpu=znver3 --emit=codegen -o - | FileCheck %s --check-prefix=AVX2
// RUN: kilnc %s --cpu=znver4 --emit=codegen -o - | FileCheck %s --check-prefix=AVX512
// RUN: kilnc %s --cpu=sapphirerapids --emit=codegen -o - | FileCheck %s --check-prefix=AVX512
// RUN: kilnc %s --cpu=x86-64-v2 --emit=codegen -o - | FileCheck %s --check-prefix=SSE
// RUN: kilnc %s --cpu=haswell --matmul-tile=6x4x72x256x256 --emit=codegen -o - | FileCheck %s --check-prefix=EXPLICIT
// RUN: kilnc %s --cpu=x86-64-v3 --emit=codegen --report=tuning -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT-AVX2
// RUN: kilnc %s --cpu=x86-64-v4 --emit=codegen --report=tuning -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT-AVX512

/// The vector unit comes from --cpu's features, whatever the compiling
/// machine: AVX2 CPUs get 8-lane vectors and the 6 x 2 register tile (12
/// accumulators of the 16 ymm registers), in the matmul kernel and the
/// softmax's row kernel alike.
// AVX2: kiln.tuning = [{config = "6x2x72x256x256x4"
// AVX2-SAME: vector-width=8 vector-registers=16
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2: arith.maxnumf {{.*}} : vector<8xf32>
// AVX2-ONLY-NOT: vector<16xf32>

/// AVX-512 CPUs: 16 lanes, 6 x 4 vectors (24 of the 32 zmm registers).
// AVX512: kiln.tuning = [{config = "6x4x72x256x256x4"
// AVX512-SAME: vector-width=16"
// AVX512: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// AVX512: arith.maxnumf {{.*}} : vector<16xf32>

/// SSE only: 4 lanes, 16 registers.
// SSE: kiln.tuning = [{config = "6x2x72x256x256x4"
// SSE-SAME: vector-width=4 vector-registers=16
// SSE-NOT: vector<16xf32>
// SSE: scf.for {{.*}} -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)

/// --matmul-tile wins over the vector unit's default (here a tile that
/// spills on AVX2), in vectors of the unit's width.
// EXPLICIT: kiln.tuning = [{config = "6x4x72x256x256x4", {{.*}} source = "default"
// EXPLICIT: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)

/// The tuning report's choice and signature.
// REPORT-AVX2: 0 {{[0-9a-f]+}} 6x2x72x256x256x4 predicted -
// REPORT-AVX512: 0 {{[0-9a-f]+}} 6x4x72x256x256x4 predicted -
func.func @main(%x: tensor<96x80xf32>, %w: tensor<80x72xf32>) -> tensor<96x72xf32> {
  %a = kiln.matmul %x, %w : (tensor<96x80xf32>, tensor<80x72xf32>) -> tensor<96x72xf32>
  %p = kiln.softmax %a {axis = -1 : i64} : tensor<96x72xf32>
  return %p : tensor<96x72xf32>
}
