// RUN: rm -rf %t && mkdir -p %t
// RUN: kilnc %s --cpu=x86-64-v4 -o %t/default.so
// RUN: kilnc %s --cpu=x86-64-v4 --matmul-tile=6x4x72x256x256 -o %t/tile.so
// RUN: kilnc %s --cpu=x86-64-v4 --tuning-db=%S/Inputs/tuning-db.jsonl -o %t/a.so
// RUN: kilnc %s --cpu=x86-64-v4 --tuning-db=%S/Inputs/tuning-db.jsonl -o %t/b.so
// RUN: kilnc %s --cpu=x86-64-v4 --tuning-db=%S/Inputs/tuning-db-reordered.jsonl -o %t/c.so
// RUN: kilnc %s --cpu=x86-64-v3 --tuning-db=%S/Inputs/tuning-db.jsonl -o %t/v3-db.so
// RUN: kilnc %s --cpu=x86-64-v3 -o %t/v3.so
// RUN: kilnc %s --cpu=x86-64-v3 --tuning-db=%S/Inputs/tuning-db-avx2.jsonl -o %t/v3-tuned.so
// RUN: kilnc %s --cpu=znver4 --tuning-db=none -o %t/zen4-none.so
// RUN: kilnc %s --cpu=znver4 --shipped-tuning-dir=%S/Inputs/shipped-tuning -o %t/zen4-shipped.so
// RUN: kilnc %s --cpu=znver4 --shipped-tuning-dir=%S/Inputs/shipped-tuning -o %t/zen4-shipped-again.so

/// Without a database the artifact is the default blocking's, byte for byte.
// RUN: cmp %t/default.so %t/tile.so
/// The same database, or the same records in another order, gives a
/// byte-identical artifact; the database's winner changes the code.
// RUN: cmp %t/a.so %t/b.so
// RUN: cmp %t/a.so %t/c.so
// RUN: not cmp -s %t/a.so %t/default.so
/// Records of another CPU change nothing; the x86-64-v3 (AVX2) record does.
// RUN: cmp %t/v3-db.so %t/v3.so
// RUN: not cmp -s %t/v3-tuned.so %t/v3.so
/// The shipped database's record for this CPU changes the code, the same
/// way each time; --tuning-db=none compiles as if nothing were shipped.
// RUN: cmp %t/zen4-shipped.so %t/zen4-shipped-again.so
// RUN: not cmp -s %t/zen4-shipped.so %t/zen4-none.so

/// The tuned kernel computes what the default one does (x86-64-v3
/// artifacts, which any AVX2 host runs).
// RUN: kiln-run %t/v3.so --output-dir %t/reference > /dev/null
// RUN: kiln-run %t/v3-tuned.so --compare %t/reference | FileCheck %s
// CHECK: compare 'output_0': {{.*}} ok
func.func @main(%x: tensor<96x80xf32>, %w: tensor<80x72xf32>) -> tensor<96x72xf32> {
  %a = kiln.matmul %x, %w : (tensor<96x80xf32>, tensor<80x72xf32>) -> tensor<96x72xf32>
  %r = kiln.relu %a : tensor<96x72xf32>
  return %r : tensor<96x72xf32>
}
