#!/usr/bin/env bash
# The CUDA runtime checks of scripts/cuda-bundle: compiled here, run on the GPU.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#
# usage: KILNC=... PYTHON=... BUILD=... [FULL=1] cuda-runtime-checks.sh compile OUT_DIR
#        bash OUT_DIR/runtime/checks.sh run OUT_DIR        (on the GPU machine)
#
# compile writes OUT_DIR/runtime/: two --small zoo models (resnet18, bert,
# batch 2) compiled with --target=cuda --weights=external with their inputs
# and onnxruntime references; examples/apps/layers.mlir for CUDA and a
# static run_concurrent; with FULL=1 the full-size ResNet-50 and BERT at
# batch 32 compiled with --weights=none (a few MB each instead of 98 and
# 437 MB). run prints one PASS/FAIL line per check and the timings.
set -uo pipefail

phase="${1:?usage: cuda-runtime-checks.sh compile|run OUT_DIR}"
out="${2:?usage: cuda-runtime-checks.sh compile|run OUT_DIR}"
rt="$out/runtime"

shapes() { # --input-shape arguments of zoo model $1 at batch $2
  "$PYTHON" - "$1" "$2" <<'EOF'
import json, sys
meta = json.load(open(sys.argv[1] + "/meta.json"))
print(" ".join(f"--input-shape={n}={'x'.join(map(str, d))}"
               for n, d in meta["batches"][sys.argv[2]].items()))
EOF
}

if [[ $phase == compile ]]; then
  set -e
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  mkdir -p "$rt"
  cp "${BASH_SOURCE[0]}" "$rt/checks.sh"
  zoo="$rt/zoo"
  "$PYTHON" "$root/bench/models/zoo.py" --out "$zoo" --small --batch 2 resnet18 bert > /dev/null
  for m in resnet18 bert; do
    # shellcheck disable=SC2046
    "$KILNC" "$zoo/$m/model.onnx" --target=cuda --weights=external $(shapes "$zoo/$m" 2) \
      -o "$rt/$m.so"
    mkdir -p "$rt/$m"
    cp -r "$zoo/$m/b2/inputs" "$zoo/$m/b2/reference" "$rt/$m/"
  done
  rm -rf "$zoo"
  "$KILNC" --target=cuda "$root/examples/apps/layers.mlir" -o "$rt/layers.so"
  c++ -O2 -std=c++17 -fexceptions -I"$root/include" "$root/examples/apps/run_concurrent.cpp" \
    "$BUILD/lib/libkiln_runtime.a" -static-libstdc++ -static-libgcc -ldl -pthread \
    -o "$rt/run_concurrent"
  if [[ "${FULL:-1}" == 1 ]]; then
    full="$BUILD/bench/zoo"
    if [[ ! -f "$full/resnet50/model.onnx" || ! -f "$full/bert/model.onnx" ]]; then
      full="$rt/fullzoo"
      "$PYTHON" "$root/bench/models/zoo.py" --out "$full" --batch 1 resnet50 bert > /dev/null
    fi
    "$KILNC" "$full/resnet50/model.onnx" --target=cuda --weights=none \
      --input-shape=input=32x3x224x224 -o "$rt/resnet50_b32.so"
    "$KILNC" "$full/bert/model.onnx" --target=cuda --weights=none \
      --input-shape=input_ids=32x128 --input-shape=attention_mask=32x128 -o "$rt/bert_b32.so"
    "$PYTHON" - "$rt" <<'EOF'
import numpy as np, sys
rng = np.random.default_rng(7)
np.save(sys.argv[1] + "/bert_ids.npy", rng.integers(0, 30522, (32, 128), dtype=np.int64))
np.save(sys.argv[1] + "/bert_mask.npy", np.ones((32, 128), dtype=np.int64))
EOF
    rm -rf "$rt/fullzoo"
  fi
  du -sh "$rt"
  exit 0
fi

# ---- run (GPU machine) ----
kr="$out/kiln-run"
status=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; status=1; }
inputs() { for f in "$rt/$1/inputs/"*.npy; do n="$(basename "$f" .npy)"; echo "--input $n=$f"; done; }

# 1. Weights in a side file, uploaded once per session: outputs vs onnxruntime.
for m in resnet18 bert; do
  # shellcheck disable=SC2046
  if log="$("$kr" "$rt/$m.so" --device cuda $(inputs $m) --compare "$rt/$m/reference" \
             --rtol 1e-3 --atol 1e-4 2>&1)"; then
    pass "external-weights $m: $(grep '^compare' <<< "$log" | tr '\n' ' ')"
  else
    fail "external-weights $m: $(tail -3 <<< "$log" | tr '\n' ' ')"
  fi
done

# 2. Traces: one span per dispatch per timed run, timed with CUDA events.
# shellcheck disable=SC2046
if log="$("$kr" "$rt/bert.so" --device cuda $(inputs bert) --warmup 1 --bench 4 --profile \
           --trace "$rt/bert.trace.json" 2>&1)"; then
  if python3 - "$rt/bert.trace.json" <<'EOF'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
runs = [e for e in events if e["cat"] == "run"]
spans = [e for e in events if e["cat"] == "dispatch"]
per_run = len(spans) / max(len(runs), 1)
inside = all(any(r["ts"] - 1 <= s["ts"] and s["ts"] + s["dur"] <= r["ts"] + r["dur"] + 1
                 for r in runs) for s in spans)
busy = sum(s["dur"] for s in spans) / max(sum(r["dur"] for r in runs), 1e-9)
print(f"trace: {len(runs)} runs, {per_run:g} dispatch spans per run, "
      f"spans inside their runs: {inside}, dispatch time / run time = {busy:.2f}")
sys.exit(0 if len(runs) == 5 and per_run >= 1 and per_run == int(per_run) and inside else 1)
EOF
  then pass "trace bert: $(grep -m1 '^profile' <<< "$log")"
  else fail "trace bert"; fi
  grep -A6 '^profile' <<< "$log"
else
  fail "trace bert: $(tail -3 <<< "$log" | tr '\n' ' ')"
fi

# 3. Concurrent runs on one CUDA session (one stream, a device arena per run).
for m in layers resnet18; do
  if log="$("$rt/run_concurrent" "$rt/$m.so" 8 50 cuda 2>&1)"; then
    pass "concurrent $m: $log"
  else
    fail "concurrent $m: $(tail -3 <<< "$log" | tr '\n' ' ')"
  fi
done

# 4. Full size, weights generated on the host and uploaded once (--weights=none).
if [[ -f "$rt/resnet50_b32.so" ]]; then
  for m in resnet50_b32 bert_b32; do
    extra=()
    [[ $m == bert_b32 ]] && extra=(--input "input_ids=$rt/bert_ids.npy"
                                   --input "attention_mask=$rt/bert_mask.npy")
    if log="$("$kr" "$rt/$m.so" --device cuda "${extra[@]}" --warmup 3 --bench 10 --profile \
               2>&1)"; then
      pass "full-size $m: $(grep -E '^(device_ms|latency_ms)' <<< "$log" | tr '\n' ' ')"
      grep -E '^model:|^profile' <<< "$log"
      grep -A12 '^profile' <<< "$log" | tail -11
    else
      fail "full-size $m: $(tail -3 <<< "$log" | tr '\n' ' ')"
    fi
  done
fi
exit $status
