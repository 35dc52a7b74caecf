//===- MatmulCodegen.cpp - The kiln-cpu-matmul pass -----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Every f32 linalg.matmul on buffers (and each batch of a batch_matmul,
// each image of a batched conv's taps) and every conv's taps becomes a
// cache-blocked, register-tiled loop nest (MatmulLoops.h). Matmuls whose B
// is not a constant share one kernel function per operand shape and
// stride signature (SharedKernels below).
//
// A matmul whose elementwise consumer the dispatch stage marked as its
// epilogue (kiln/Dispatch/Epilogue.h: bias, activation, residual add, cast)
// applies it in the last depth block to the accumulators before storing:
// the other inputs are loaded at the tile's rows and columns, the generic's
// body is applied to whole vectors, and the result goes to the generic's
// output instead of C. The generic is then erased; a marked epilogue that
// could not be fused is an error, so a dispatch counted as one kernel by
// --report=fusion is one kernel here.
//
//===----------------------------------------------------------------------===//

#include "MatmulConstants.h"
#include "MatmulEpilogue.h"
#include "MatmulKernel.h"
#include "MatmulLoops.h"
#include "MatmulPrologue.h"
#include "MatmulTuner.h"

#include "kiln/Dispatch/DispatchAttr.h"
#include "kiln/Dispatch/Epilogue.h"
#include "kiln/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <cstring>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNCPUMATMULPASS
#include "kiln/Target/CPU/Passes.h.inc"

using namespace matmul_kernel;
using matmul_loops::ConvTaps;
using matmul_loops::rewriteMatmul;

namespace {

/// `type` with a dynamic offset, so views at different offsets share it.
MemRefType withDynamicOffset(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return type;
  return MemRefType::get(type.getShape(), type.getElementType(),
                         StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic,
                                                strides));
}

/// Whether a shared kernel function can take `epilogue` (or none): its
/// view of C, if an expansion, has a static shape it can rebuild.
bool shareable(linalg::GenericOp epilogue) {
  if (!epilogue)
    return true;
  Value c = epilogue.getDpsInputs()[*epilogueInput(epilogue)];
  auto expand = c.getDefiningOp<memref::ExpandShapeOp>();
  return !expand || expand.getResultType().hasStaticShape();
}

/// The `{kiln.host}` argument of the function around `op`, or null.
Value hostOf(Operation *op) {
  auto func = op->getParentOfType<func::FuncOp>();
  if (!func)
    return nullptr;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, kHostArgAttr))
      return func.getArgument(i);
  return nullptr;
}

/// The trace id of the dispatch `op` runs in (kiln-instrument-dispatches):
/// that of the last trace-begin call before its ancestor in its function,
/// unless a trace-end call comes first.
std::optional<int64_t> traceIndex(Operation *op) {
  Operation *top = op;
  while (top->getParentOp() && !isa<func::FuncOp>(top->getParentOp()))
    top = top->getParentOp();
  for (Operation *before = top->getPrevNode(); before; before = before->getPrevNode()) {
    auto call = dyn_cast<func::CallOp>(before);
    if (!call)
      continue;
    if (call.getCallee() == kTraceEndName)
      return std::nullopt;
    if (call.getCallee() == kTraceBeginName && call.getNumOperands() == 2)
      return getConstantIntValue(call.getOperand(1));
  }
  return std::nullopt;
}

/// With kernels other than f32 FMAs: records `isa` for the dispatches of
/// `ops` in the module's kMatmulISAAttr (indexed like the dispatch names),
/// for --report=cost.
void recordMatmulISA(ModuleOp module, ArrayRef<Operation *> ops, CPUMatmulISA isa) {
  auto names = module->getAttrOfType<ArrayAttr>(kDispatchNamesAttr);
  if (isa == CPUMatmulISA::F32FMA || !names || ops.empty())
    return;
  MLIRContext *context = module.getContext();
  SmallVector<Attribute> isas(names.size(), StringAttr::get(context, ""));
  if (auto known = module->getAttrOfType<ArrayAttr>(kMatmulISAAttr);
      known && known.size() == names.size())
    isas.assign(known.begin(), known.end());
  for (Operation *op : ops)
    if (std::optional<int64_t> index = traceIndex(op);
        index && *index >= 0 && *index < static_cast<int64_t>(isas.size()))
      isas[*index] = StringAttr::get(context, cpuMatmulISAName(isa));
  module->setAttr(kMatmulISAAttr, ArrayAttr::get(context, isas));
}

/// Matmuls on operands of the same shapes and strides share one kernel
/// function (the taps of a conv, repeated layers, the images of a batch):
/// each becomes a call with its operands cast to dynamic offsets. Keeps the
/// generated code, and the compile time, proportional to the distinct
/// shapes rather than to the matmul count.
struct SharedKernels {
  ModuleOp module;
  llvm::StringMap<func::FuncOp> functions;
  /// Constant A matrices packed at compile time (packConstantA),
  /// and the unpacked weights' views that may have become dead.
  llvm::StringMap<FlatSymbolRefAttr> &packedA;
  llvm::SetVector<Operation *> &unpacked;

  /// `options`: the configuration chosen for this matmul's signature.
  void call(const KilnCPUMatmulPassOptions &options, linalg::MatmulOp op, Value host, bool fresh,
            linalg::GenericOp epilogue) {
    // Operands: host, A, B, C, then the epilogue's other inputs and output.
    SmallVector<Value> operands(op->getOperands());
    // A constant A (a 1x1 conv's weights) is passed packed, viewed as [M, K].
    OpBuilder b(op);
    auto aType = cast<MemRefType>(operands[0].getType());
    // bf16 panels hold M x K values when K is even (whole k pairs), viewed
    // as a bf16 [M, K]; with an odd K that A stays f32 and is converted
    // when packed per cache block.
    bool bf16 = readsBF16(options.isa);
    FlatSymbolRefAttr packed;
    if (aType.hasStaticShape() && aType.getLayout().isIdentity() &&
        (!bf16 || aType.getDimSize(1) % 2 == 0))
      packed = packConstantA(operands[0], aType.getDimSize(0), aType.getDimSize(1),
                             options.tileRows, options.tileK, bf16, packedA);
    if (packed) {
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(op, packed);
      Value flat = memref::GetGlobalOp::create(b, op.getLoc(), global.getType(), packed.getValue());
      if (Operation *source = operands[0].getDefiningOp())
        unpacked.insert(source);
      operands[0] = memref::ExpandShapeOp::create(b, op.getLoc(), aType.getShape(), flat,
                                                  ArrayRef<ReassociationIndices>{{0, 1}});
    }
    unsigned cIndex = epilogue ? epilogueInput(epilogue).value_or(0) : 0;
    if (epilogue) {
      for (auto [i, input] : llvm::enumerate(epilogue.getDpsInputs()))
        if (i != cIndex)
          operands.push_back(input);
      operands.push_back(epilogue.getDpsInits()[0]);
    }
    SmallVector<Type> types = {host.getType()};
    for (Value operand : operands)
      types.push_back(withDynamicOffset(cast<MemRefType>(operand.getType())));
    auto type = b.getFunctionType(types, {});
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    auto function = func::FuncOp::create(mb, op.getLoc(), "kiln_matmul", type);
    function.setPrivate();
    function.setArgAttr(0, kHostArgAttr, mb.getUnitAttr());
    for (unsigned i = 1; i < types.size(); ++i)
      function.setArgAttr(i, kNoCaptureArgAttr, mb.getUnitAttr());
    Block *entry = function.addEntryBlock();
    OpBuilder fb = OpBuilder::atBlockEnd(entry);
    auto matmul = linalg::MatmulOp::create(fb, op.getLoc(), entry->getArguments().slice(1, 2),
                                           entry->getArguments().slice(3, 1));
    linalg::GenericOp body;
    if (epilogue) {
      IRMapping map;
      unsigned next = 4;
      // C, or the epilogue's static expansion of it.
      Value c = entry->getArgument(3);
      if (auto expand = epilogue.getDpsInputs()[cIndex].getDefiningOp<memref::ExpandShapeOp>())
        c = memref::ExpandShapeOp::create(fb, op.getLoc(), expand.getResultType().getShape(), c,
                                          expand.getReassociationIndices());
      for (auto [i, input] : llvm::enumerate(epilogue.getDpsInputs()))
        map.map(input, i == cIndex ? c : entry->getArgument(next++));
      map.map(epilogue.getDpsInits()[0], entry->getArgument(next));
      // The scalar constants its body uses from outside, before the matmul
      // (whose kernel takes its place).
      OpBuilder cb = OpBuilder::atBlockBegin(entry);
      epilogue.getRegion().walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (Operation *def = v.getDefiningOp();
              def && !epilogue->isProperAncestor(def) && !map.contains(v))
            map.map(v, cb.clone(*def)->getResult(0));
      });
      body = cast<linalg::GenericOp>(fb.clone(*epilogue, map));
      // The function is shared by dispatches: their ids stay at the calls.
      body->removeAttr(kDispatchAttr);
    }
    // Its A argument holds the packed panels (a 1-D view of them).
    Value aConstant;
    if (packed) {
      OpBuilder ab(matmul);
      aConstant = memref::CollapseShapeOp::create(ab, op.getLoc(), entry->getArgument(1),
                                                  ArrayRef<ReassociationIndices>{{0, 1}});
    }
    func::ReturnOp::create(fb, op.getLoc());
    // Same text, same kernel: one function per distinct matmul + epilogue
    // (its signature, so its configuration, follows from the text).
    std::string key = fresh ? "fresh " : "";
    if (packed)
      key += "packed-a ";
    llvm::raw_string_ostream os(key);
    function.print(os);
    func::FuncOp &existing = functions[key];
    if (existing) {
      function.erase();
    } else {
      function.setName("kiln_matmul_" + std::to_string(functions.size() - 1));
      rewriteMatmul(options, matmul, matmul.getDpsInputs()[0], matmul.getDpsInputs()[1],
                    matmul.getDpsInits()[0], fresh, body, aConstant);
      existing = function;
    }
    SmallVector<Value> args = {host};
    for (auto [operand, to] : llvm::zip(operands, ArrayRef(types).drop_front()))
      args.push_back(operand.getType() == to
                         ? operand
                         : memref::CastOp::create(b, op.getLoc(), to, operand).getResult());
    func::CallOp::create(b, op.getLoc(), existing, args);
    op.erase();
    if (epilogue)
      epilogue.erase();
  }
};

struct KilnCPUMatmulPass final : impl::KilnCPUMatmulPassBase<KilnCPUMatmulPass> {
  using KilnCPUMatmulPassBase::KilnCPUMatmulPassBase;
  void runOnOperation() override {
    SmallVector<linalg::BatchMatmulOp> batched;
    getOperation().walk([&](linalg::BatchMatmulOp op) {
      if (op.hasPureBufferSemantics() && !op.hasUserDefinedMaps() &&
          llvm::all_of(op->getOperandTypes(), [](Type t) {
            auto type = dyn_cast<MemRefType>(t);
            return type && type.getRank() == 3 && type.getElementType().isF32();
          }))
        batched.push_back(op);
    });
    llvm::SmallPtrSet<Operation *, 16> freshBatches;
    for (linalg::BatchMatmulOp op : batched)
      splitBatches(op, freshBatches);
    // A batched conv's taps: one loop over the images of per-image taps.
    SmallVector<linalg::GenericOp> batchedConvs;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.hasPureBufferSemantics() && isBatchedConvTaps(op))
        batchedConvs.push_back(op);
    });
    for (linalg::GenericOp op : batchedConvs)
      splitConvTapsBatch(op, freshBatches);
    SmallVector<linalg::MatmulOp> matmuls;
    getOperation().walk([&](linalg::MatmulOp op) {
      if (op.hasPureBufferSemantics() && !op.hasUserDefinedMaps() &&
          isKernelBuffer(op.getDpsInputs()[0], /*unitInner=*/false) &&
          isKernelBuffer(op.getDpsInputs()[1], /*unitInner=*/true) &&
          isKernelBuffer(op.getDpsInits()[0], /*unitInner=*/true))
        matmuls.push_back(op);
    });
    KilnCPUMatmulPassOptions base{vectorWidth, vectorRegisters, tileRows,      tileVectors,
                                  tileM,       tileN,           tileK,         isa,
                                  parallelTasks, costModel,     {tuned.begin(), tuned.end()}};
    matmul_tuning::MatmulTuner tuner(base);
    // The configuration for one kernel: the tuner's, for a signature that
    // names the instruction set (a bf16 kernel is another tuning key); bf16
    // depth blocks hold whole pairs of k, so each but the last is even.
    auto choose = [&](Operation *op, std::string signature,
                      const matmul_tuning::MatmulProblem &problem) {
      if (readsBF16(isa))
        signature += " isa=avx512bf16";
      KilnCPUMatmulPassOptions options = tuner.choose(op, signature, problem);
      if (readsBF16(options.isa))
        options.tileK = llvm::alignTo(options.tileK, 2);
      return options;
    };
    // A size for the cost model: -1 when dynamic.
    auto dim = [](Value v, unsigned i) {
      int64_t d = cast<MemRefType>(v.getType()).getDimSize(i);
      return ShapedType::isDynamic(d) ? int64_t(-1) : d;
    };
    if (failed(tuner.parseTuned(getOperation())))
      return signalPassFailure();
    // A conv's taps: one matmul with K = C*kh*kw, A the weights [F, C*kh*kw]
    // and B packed from the shifted rows of the padded input (gathered
    // through the conv's index map where it is strided or wraps rows).
    SmallVector<linalg::GenericOp> convs;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kConvTapsAttr) && op.hasPureBufferSemantics() && convTapsLayout(op) &&
          cast<MemRefType>(op.getDpsInputs()[0].getType()).getLayout().isIdentity() &&
          isKernelBuffer(op.getDpsInputs()[1], /*unitInner=*/true) &&
          isKernelBuffer(op.getDpsInits()[0], /*unitInner=*/true) &&
          (!hasConvTapsPrologue(op) ||
           llvm::all_of(BPrologue(op).xInputs(),
                        [](Value x) { return isKernelBuffer(x, /*unitInner=*/true); })))
        convs.push_back(op);
    });
    SmallVector<Operation *> kernels(convs.begin(), convs.end());
    kernels.append(matmuls.begin(), matmuls.end());
    recordMatmulISA(getOperation(), kernels, isa);
    llvm::StringMap<FlatSymbolRefAttr> packedA;
    llvm::SetVector<Operation *> unpacked;
    for (linalg::GenericOp op : convs) {
      ConvTapsLayout layout = *convTapsLayout(op);
      Value weights = op.getDpsInputs()[0], c = op.getDpsInits()[0];
      auto wType = cast<MemRefType>(weights.getType());
      bool fresh = dropZeroFill(op, c) || freshBatches.contains(op);
      linalg::GenericOp epilogue = takeConvTapsEpilogue(op);
      OpBuilder b(op);
      Value a = memref::CollapseShapeOp::create(b, op.getLoc(), weights,
                                                ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
      ConvTaps taps{op.getDpsInputs()[1], wType.getDimSize(2), wType.getDimSize(3), layout,
                    hasConvTapsPrologue(op) ? op : nullptr};
      bool constantA = wType.hasStaticShape() && isConstantMatrix(weights);
      matmul_tuning::MatmulProblem problem{dim(a, 0), dim(c, 1), dim(a, 1), constantA, false};
      KilnCPUMatmulPassOptions options =
          choose(op,
                 matmul_tuning::matmulSignature(a, Value(), c, fresh, epilogue, constantA, false,
                                                taps, {vectorWidth, vectorRegisters}),
                 problem);
      // An image of a batch shares the threads with the other images
      // (mergeImageLoops): it aims for its share of the tasks.
      if (auto images = op->getAttrOfType<IntegerAttr>(kImagesAttr); images && images.getInt() > 0)
        options.parallelTasks =
            std::max<int64_t>(1, llvm::divideCeil(options.parallelTasks, images.getInt()));
      // Constant weights are packed into the kernels' A panels once, at
      // compile time (the weights are not re-packed per column block).
      FlatSymbolRefAttr packed;
      if (wType.hasStaticShape())
        packed = packConstantA(weights, wType.getDimSize(0),
                               wType.getNumElements() / wType.getDimSize(0), options.tileRows,
                               options.tileK, readsBF16(options.isa), packedA);
      Value aConstant;
      if (packed) {
        auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(op, packed);
        aConstant = memref::GetGlobalOp::create(b, op.getLoc(), global.getType(), packed.getValue());
      }
      rewriteMatmul(options, op, a, Value(), c, fresh, epilogue, aConstant, taps);
      if (packed)
        unpacked.insert(a.getDefiningOp());
    }
    SharedKernels shared{getOperation(), {}, packedA, unpacked};
    for (linalg::MatmulOp op : matmuls) {
      bool fresh = dropZeroFill(op) || freshBatches.contains(op);
      linalg::GenericOp epilogue = takeEpilogue(op);
      Value host = hostOf(op);
      Value a = op.getDpsInputs()[0], bMatrix = op.getDpsInputs()[1], c = op.getDpsInits()[0];
      auto aType = cast<MemRefType>(a.getType());
      bool constantB = isConstantMatrix(bMatrix);
      bool sharesKernel = host && !constantB && shareable(epilogue);
      // Only a shared kernel packs a constant A at compile time.
      bool constantA = sharesKernel && aType.hasStaticShape() && aType.getLayout().isIdentity() &&
                       isConstantMatrix(a);
      matmul_tuning::MatmulProblem problem{dim(a, 0), dim(c, 1), dim(a, 1), constantA, constantB};
      KilnCPUMatmulPassOptions options =
          choose(op,
                 matmul_tuning::matmulSignature(a, bMatrix, c, fresh, epilogue, constantA,
                                                constantB, std::nullopt,
                                                {vectorWidth, vectorRegisters}),
                 problem);
      if (sharesKernel)
        shared.call(options, op, host, fresh, epilogue);
      else
        rewriteMatmul(options, op, op.getDpsInputs()[0], op.getDpsInputs()[1],
                      op.getDpsInits()[0], fresh, epilogue);
    }
    // The unpacked weights (and their views) are dead once nothing else
    // reads them.
    for (Operation *source : unpacked) {
      if (auto collapse = dyn_cast<memref::CollapseShapeOp>(source)) {
        if (!collapse->use_empty())
          continue;
        source = collapse.getSrc().getDefiningOp();
        collapse.erase();
      }
      if (auto getGlobal = dyn_cast_or_null<memref::GetGlobalOp>(source))
        eraseIfUnread(getGlobal);
    }
    // After the cleanup above: the image loops hold unpacked weights' views.
    mergeImageLoops(getOperation());
    // The dispatch stage counted each marked epilogue as part of its
    // matmul's kernel, and each row group (kiln-cpu-row-kernels ran before
    // this pass) as one kernel: one left over would make that count untrue.
    tuner.record(getOperation());
    if (failed(verifyDispatchGroupsFused(getOperation())))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
