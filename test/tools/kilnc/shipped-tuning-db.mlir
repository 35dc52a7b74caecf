// RUN: kilnc %s --cpu=znver4 --shipped-tuning-dir=%S/Inputs/shipped-tuning --emit=codegen --report=tuning -o /dev/null 2>&1 | FileCheck %s --check-prefix=SHIPPED
// RUN: kilnc %s --cpu=x86-64-v4 --shipped-tuning-dir=%S/Inputs/shipped-tuning --emit=codegen --report=tuning -o /dev/null 2>&1 | FileCheck %s --check-prefix=OTHERCPU
// RUN: kilnc %s --cpu=znver4 --shipped-tuning-dir=%S/Inputs/shipped-tuning --tuning-db=none --emit=codegen --report=tuning -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: kilnc %s --cpu=znver4 --shipped-tuning-dir=%S/Inputs/shipped-tuning --tuning-db=%S/Inputs/tuning-db-znver4.jsonl --emit=codegen --report=tuning -o /dev/null 2>&1 | FileCheck %s --check-prefix=GIVEN
// RUN: kilnc %s --cpu=znver4 --shipped-tuning-dir=%S/Inputs/shipped-tuning --emit=codegen --report=tuning --report-format=json -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: kilnc %s --cpu=znver4 --shipped-tuning-dir=%t.absent --emit=codegen --report=tuning -o /dev/null 2>&1 | FileCheck %s --check-prefix=ABSENT
// RUN: not kilnc %s --cpu=znver4 --shipped-tuning-dir=%S/Inputs/shipped-tuning-corrupt -o /dev/null 2>&1 | FileCheck %s --check-prefix=CORRUPT
// RUN: not kilnc %s --cpu=znver4 --shipped-tuning-dir=%S/Inputs/shipped-tuning --tuning-db=%S/Inputs/tuning-db-truncated.jsonl -o /dev/null 2>&1 | FileCheck %s --check-prefix=CORRUPTGIVEN
// RUN: kilnc %s --cpu=x86-64-v4 --emit=codegen --report=tuning -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUILDTREE

/// Without --tuning-db kilnc reads every *.jsonl of the shipped directory
/// (sorted by name; README.txt is not read) and takes the records of the
/// compile's CPU: znver4's record configures the matmul, znver5's and the
/// record of another space version are counted and ignored.
// SHIPPED: tuning report: 1 matmul choices, space cpu-matmul-2, features znver4
// SHIPPED-NEXT: tuning database {{.*}}shipped-tuning{{[/\\]}}znver4.jsonl (shipped): 1 records used, 0 ignored (other target or features), 1 ignored (other space version), 0 invalid
// SHIPPED-NEXT: tuning database {{.*}}shipped-tuning{{[/\\]}}znver5.jsonl (shipped): 0 records used, 1 ignored (other target or features), 0 ignored (other space version), 0 invalid
// SHIPPED-NEXT: dispatch key config source time_us nodes
// SHIPPED-NEXT: 0 00f0b265ea3cf293 8x2x64x128x128x2 tuned 12.500

/// Another CPU (the same AVX-512 key) takes none of them.
// OTHERCPU: znver4.jsonl (shipped): 0 records used, 2 ignored (other target or features), 0 ignored (other space version), 0 invalid
// OTHERCPU: znver5.jsonl (shipped): 0 records used, 1 ignored (other target or features)
// OTHERCPU: 0 00f0b265ea3cf293 6x4x72x256x256x4 predicted -

/// --tuning-db=none: no database at all.
// NONE: tuning report: 1 matmul choices, space cpu-matmul-2, features znver4
// NONE-NEXT: shipped tuning databases: not used
// NONE-NEXT: dispatch key config source time_us nodes
// NONE-NEXT: 0 00f0b265ea3cf293 6x4x72x256x256x4 predicted -

/// A given database's record for a key replaces the shipped one, even a
/// slower one: it was measured where the user compiles for.
// GIVEN: znver4.jsonl (shipped): 1 records used
// GIVEN: znver5.jsonl (shipped): 0 records used
// GIVEN-NEXT: tuning database {{.*}}tuning-db-znver4.jsonl (given): 1 records used, 0 ignored (other target or features), 0 ignored (other space version), 0 invalid; its records replace 1 shipped ones
// GIVEN: 0 00f0b265ea3cf293 4x4x48x128x128x2 tuned 30.000

// JSON: "databases": {
// JSON-NEXT: "read": [
// JSON-NEXT: {
// JSON-NEXT: "invalid": 0,
// JSON-NEXT: "origin": "shipped",
// JSON-NEXT: "other_features": 0,
// JSON-NEXT: "other_space": 1,
// JSON-NEXT: "path": "{{.*}}znver4.jsonl",
// JSON-NEXT: "used": 1
// JSON: "replaced_shipped": 0,
// JSON-NEXT: "shipped_directory": "{{.*}}shipped-tuning"

/// No shipped directory: nothing shipped, the cost model's pick.
// ABSENT: shipped tuning databases: none in {{.*}}.absent
// ABSENT: 0 00f0b265ea3cf293 6x4x72x256x256x4 predicted -

/// A corrupt shipped database is an error naming its file and line, as a
/// given one is; nothing is compiled.
// CORRUPT: kilnc: error: {{.*}}shipped-tuning-corrupt{{[/\\]}}znver4.jsonl:2: truncated or malformed record
// CORRUPTGIVEN: kilnc: error: {{.*}}tuning-db-truncated.jsonl:2: truncated or malformed record

/// The databases this build ships (data/tuning, copied to share/kiln/tuning
/// beside bin/kilnc) are found relative to kilnc; this small matmul's key is
/// in none of them, and no shipped file holds x86-64-v4 records.
// BUILDTREE: tuning database {{.*}}share{{[/\\]}}kiln{{[/\\]}}tuning{{[/\\]}}{{.+}}.jsonl (shipped): 0 records used
// BUILDTREE: 0 00f0b265ea3cf293 6x4x72x256x256x4 predicted -
func.func @main(%x: tensor<96x80xf32>, %w: tensor<80x72xf32>) -> tensor<96x72xf32> {
  %a = kiln.matmul %x, %w : (tensor<96x80xf32>, tensor<80x72xf32>) -> tensor<96x72xf32>
  %r = kiln.relu %a : tensor<96x72xf32>
  return %r : tensor<96x72xf32>
}
