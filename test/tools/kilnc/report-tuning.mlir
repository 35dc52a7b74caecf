// RUN: kilnc %s --cpu=x86-64-v4 --tuning-db=none --emit=codegen --report=tuning -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNTUNED
// RUN: kilnc %s --cpu=x86-64-v4 --matmul-tile=8x2x64x256x256 --emit=codegen --report=tuning -o /dev/null 2>&1 | FileCheck %s --check-prefix=FIXED
// RUN: kilnc %s --cpu=x86-64-v4 --matmul-cost-model=false --emit=codegen --report=tuning -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOMODEL
// RUN: kilnc %s --cpu=x86-64-v4 --emit=codegen --report=tuning --report-format=json -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: kilnc %s --cpu=x86-64-v4 --tuning-db=%S/Inputs/tuning-db.jsonl --emit=codegen --report=tuning -o /dev/null 2>&1 | FileCheck %s --check-prefix=TUNED
// RUN: kilnc %s --cpu=x86-64-v4 --tuning-db=%S/Inputs/tuning-db-reordered.jsonl --emit=codegen --report=tuning -o /dev/null 2>&1 | FileCheck %s --check-prefix=TUNED
// RUN: kilnc %s --cpu=x86-64-v3 --tuning-db=%S/Inputs/tuning-db.jsonl --emit=codegen --report=tuning -o /dev/null 2>&1 | FileCheck %s --check-prefix=OTHERCPU
// RUN: kilnc %s --cpu=x86-64-v3 --tuning-db=%S/Inputs/tuning-db-avx2.jsonl --emit=codegen --report=tuning -o /dev/null 2>&1 | FileCheck %s --check-prefix=AVX2DB
// RUN: kilnc %s --cpu=x86-64-v4 --tuning-db=%S/Inputs/tuning-db-avx2.jsonl --emit=codegen --report=tuning -o /dev/null 2>&1 | FileCheck %s --check-prefix=AVX512DB
// RUN: not kilnc %s --emit=dispatch --report=tuning 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not kilnc %s --target=cuda --emit=codegen --report=tuning 2>&1 | FileCheck %s --check-prefix=CUDA
// RUN: not kilnc %s --target=cuda --tuning-db=%S/Inputs/tuning-db.jsonl -o /dev/null 2>&1 | FileCheck %s --check-prefix=CUDADB
// RUN: not kilnc %s --tuning-db=%S/Inputs/tuning-db-truncated.jsonl -o /dev/null 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// RUN: not kilnc %s --tuning-db=%S/Inputs/tuning-db-no-config.jsonl -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOCONFIG
// RUN: not kilnc %s --tuning-db=%S/Inputs/tuning-db-not-object.jsonl -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOTOBJECT
// RUN: not kilnc %s --tuning-db=%t.missing.jsonl -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING

/// Without a database the cost model chooses: the default configuration
/// for a matmul this small; with --matmul-tile or --matmul-cost-model=false
/// the tiling as given.
// UNTUNED: tuning report: 1 matmul choices, space cpu-matmul-2, features x86-64-v4
// UNTUNED-NEXT: shipped tuning databases: not used
// UNTUNED-NEXT: dispatch key config source time_us nodes
// UNTUNED-NEXT: 0 00f0b265ea3cf293 6x4x72x256x256x4 predicted -
// FIXED: 0 00f0b265ea3cf293 8x2x64x256x256x4 default -
// NOMODEL: 0 00f0b265ea3cf293 6x4x72x256x256x4 default -

/// JSON adds the signature, the cost model's own pick and the search order
/// (the default first).
// JSON: "candidates": [
// JSON-NEXT: "6x4x72x256x256x4",
// JSON: "config": "6x4x72x256x256x4",
// JSON: "key": "00f0b265ea3cf293",
// JSON: "model_pick": "6x4x72x256x256x4",
// JSON: "signature": "matmul b=f32[80x72|72,1] a=f32[96x80|80,1] c=f32[96x72|72,1] constant-a=0 constant-b=0 fresh=1 vector-width=16 epilogue=(arith.maximumf;f32[96x72|72,1],f32[96x72|72,1])",
// JSON: "source": "predicted",
// JSON: "features": "x86-64-v4",
// JSON-NEXT: "space": "cpu-matmul-2",

/// The database's winner for the key: the faster valid record (an invalid
/// one, faster still, is never chosen); the records of another CPU and of
/// another space version are counted and ignored; a key whose only record is
/// invalid counts as invalid. The reordered copy of the database (a
/// duplicate, a blank line) gives the same choice.
// TUNED: tuning database {{.*}}tuning-db{{(-reordered)?}}.jsonl (given): 1 records used, 1 ignored (other target or features), 1 ignored (other space version), 1 invalid
// TUNED-NEXT: dispatch key config source time_us nodes
// TUNED-NEXT: 0 00f0b265ea3cf293 8x2x64x128x128x2 tuned 12.500

/// For another CPU the same records do not apply: x86-64-v3 (AVX2) gets its
/// own default, 6 x 2 vectors of 8 lanes, and its own key (the signature
/// names the 16 vector registers).
// OTHERCPU: tuning-db.jsonl (given): 0 records used, 4 ignored (other target or features), 0 ignored (other space version), 0 invalid
// OTHERCPU: 0 dc438e0892b3b395 6x2x72x256x256x4 predicted -

/// A database with records for both: each CPU takes its own.
// AVX2DB: tuning-db-avx2.jsonl (given): 1 records used, 1 ignored (other target or features), 0 ignored (other space version), 0 invalid
// AVX2DB: 0 dc438e0892b3b395 4x3x48x128x128x2 tuned 9.500
// AVX512DB: tuning-db-avx2.jsonl (given): 1 records used, 1 ignored (other target or features), 0 ignored (other space version), 0 invalid
// AVX512DB: 0 00f0b265ea3cf293 8x2x64x128x128x2 tuned 12.500

// STAGE: kilnc: error: --report=tuning describes the codegen stage's matmul configurations; it needs --emit=codegen or a later stage
// CUDA: kilnc: error: --report=tuning describes CPU matmuls; it needs --target=cpu
// CUDADB: kilnc: error: --tuning-db configures CPU matmuls; it needs --target=cpu
// TRUNCATED: kilnc: error: {{.*}}tuning-db-truncated.jsonl:2: truncated or malformed record: [1:60, byte=60]: Unterminated string
// NOCONFIG: kilnc: error: {{.*}}tuning-db-no-config.jsonl:2: record has no string 'config'
// NOTOBJECT: kilnc: error: {{.*}}tuning-db-not-object.jsonl:3: expected a JSON object (one record per line)
// MISSING: kilnc: error: cannot read tuning database '{{.*}}.missing.jsonl': No such file or directory
func.func @main(%x: tensor<96x80xf32>, %w: tensor<80x72xf32>) -> tensor<96x72xf32> {
  %a = kiln.matmul %x, %w : (tensor<96x80xf32>, tensor<80x72xf32>) -> tensor<96x72xf32>
  %r = kiln.relu %a : tensor<96x72xf32>
  return %r : tensor<96x72xf32>
}
