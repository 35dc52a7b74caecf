//===- KilnKernelOps.cpp - Kernel ops: verifiers, bufferization -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::bufferization;

namespace kiln {

static bool sameDim(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

LogicalResult AttentionKernelOp::verify() {
  auto typeOf = [](Value v) { return cast<ShapedType>(v.getType()); };
  ShapedType q = typeOf(getQuery()), k = typeOf(getKey()), v = typeOf(getValue()),
             out = typeOf(getInit());
  SmallVector<std::pair<StringRef, ShapedType>> named = {
      {"query", q}, {"key", k}, {"value", v}, {"init", out}};
  if (getMask())
    named.push_back({"mask", typeOf(getMask())});
  for (auto [name, type] : named) {
    if (!type.hasRank() || type.getRank() != 4)
      return emitOpError() << "expects a rank-4 " << name << ", got " << type;
    Type element = type.getElementType();
    if (!element.isF32() && !element.isF16() && !element.isBF16())
      return emitOpError() << "expects f32, f16 or bf16 elements, got " << element << " in "
                           << name;
    if (name != "mask" && element != q.getElementType())
      return emitOpError() << "expects the element type of query in " << name << ", got "
                           << element;
  }
  int64_t b = q.getDimSize(0), h = q.getDimSize(1), sq = q.getDimSize(2), d = q.getDimSize(3);
  int64_t sk = k.getDimSize(2);
  for (auto [name, type, seq] : {std::tuple<StringRef, ShapedType, int64_t>{"key", k, sk},
                                 {"value", v, sk}})
    if (!sameDim(type.getDimSize(0), b) || !sameDim(type.getDimSize(1), h) ||
        !sameDim(type.getDimSize(2), seq) || !sameDim(type.getDimSize(3), d))
      return emitOpError() << name << " " << type << " does not match query " << q;
  SmallVector<int64_t> expected = getMergeHeads() ? SmallVector<int64_t>{b, sq, h, d}
                                                  : SmallVector<int64_t>{b, h, sq, d};
  for (auto [got, want] : llvm::zip(out.getShape(), expected))
    if (!sameDim(got, want))
      return emitOpError() << "init " << out << " does not match the output shape of query "
                           << q << (getMergeHeads() ? " with merged heads" : "");
  if (Value mask = getMask()) {
    ShapedType m = typeOf(mask);
    auto fits = [](int64_t got, int64_t full) { return got == 1 || sameDim(got, full); };
    if (!fits(m.getDimSize(0), b) || !fits(m.getDimSize(1), h) ||
        !sameDim(m.getDimSize(2), sk) || !fits(m.getDimSize(3), sq))
      return emitOpError() << "mask " << m
                           << " is not key-major [B|1, H|1, Sk, Sq|1] for query " << q
                           << " and key " << k;
  }
  bool onTensors = isa<RankedTensorType>(out);
  for (auto [name, type] : named)
    if (isa<RankedTensorType>(type) != onTensors)
      return emitOpError() << "mixes tensors and buffers (" << name << ")";
  if (onTensors != (getNumResults() == 1) ||
      (onTensors && getResult()[0].getType() != out))
    return emitOpError() << (onTensors ? "on tensors has one result, of the init's type"
                                       : "on buffers has no results");
  return success();
}

// The kernel ops share their destination-style memory behaviour: on buffers
// they read every operand but `init` and overwrite `init` (never read); on
// tensors they are pure and their one result is the updated `init`.

static void kernelEffects(
    Operation *op, OpOperand &init,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  if (!isa<BaseMemRefType>(init.get().getType()))
    return; // pure on tensors
  for (OpOperand &operand : op->getOpOperands()) {
    if (&operand == &init)
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
    else
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}

static AliasingValueList initAliases(OpOperand &operand, OpOperand &init, Value result) {
  if (&operand == &init)
    return {{result, BufferRelation::Equivalent}};
  return {};
}

/// The buffers of every operand of `op`, in order.
static FailureOr<SmallVector<Value>> operandBuffers(Operation *op, RewriterBase &rewriter,
                                                    const BufferizationOptions &options,
                                                    BufferizationState &state) {
  SmallVector<Value> buffers;
  for (Value operand : op->getOperands()) {
    FailureOr<Value> buffer = getBuffer(rewriter, operand, options, state);
    if (failed(buffer))
      return failure();
    buffers.push_back(*buffer);
  }
  return buffers;
}

void AttentionKernelOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  kernelEffects(*this, getInitMutable(), effects);
}

bool AttentionKernelOp::bufferizesToMemoryRead(OpOperand &operand, const AnalysisState &) {
  return &operand != &getInitMutable(); // init is overwritten, never read
}

bool AttentionKernelOp::bufferizesToMemoryWrite(OpOperand &operand, const AnalysisState &) {
  return &operand == &getInitMutable();
}

AliasingValueList AttentionKernelOp::getAliasingValues(OpOperand &operand,
                                                       const AnalysisState &) {
  return initAliases(operand, getInitMutable(), getResult()[0]);
}

LogicalResult AttentionKernelOp::bufferize(RewriterBase &rewriter,
                                           const BufferizationOptions &options,
                                           BufferizationState &state) {
  FailureOr<SmallVector<Value>> operands = operandBuffers(*this, rewriter, options, state);
  if (failed(operands))
    return failure();
  SmallVector<Value> &buffers = *operands;
  Value mask = getMask() ? buffers[3] : Value();
  rewriter.setInsertionPoint(*this);
  AttentionKernelOp::create(rewriter, getLoc(), TypeRange{}, buffers[0], buffers[1], buffers[2],
                            mask, buffers.back(), getScaleAttr(), getIsCausalAttr(),
                            getMergeHeadsAttr());
  replaceOpWithBufferizedValues(rewriter, *this, buffers.back());
  return success();
}

} // namespace kiln

namespace kiln {

std::string attentionLayoutProblem(AttentionOp op, function_ref<bool(Type)> maskElement,
                                   StringRef maskTypes) {
  auto q = dyn_cast<RankedTensorType>(op.getQuery().getType());
  auto k = dyn_cast<RankedTensorType>(op.getKey().getType());
  auto v = dyn_cast<RankedTensorType>(op.getValue().getType());
  for (RankedTensorType type : {q, k, v})
    if (!type || type.getRank() != 4 || !type.hasStaticShape())
      return "query, key and value are not static rank-4 tensors";
  if (k.getDimSize(0) != q.getDimSize(0) || v.getDimSize(0) != q.getDimSize(0) ||
      k.getDimSize(1) != q.getDimSize(1) || v.getDimSize(1) != q.getDimSize(1))
    return "batch or head dims broadcast between query, key and value";
  if (Value mask = op.getMask()) {
    auto m = dyn_cast<RankedTensorType>(mask.getType());
    if (!m || !m.hasStaticShape() || m.getRank() > 4 || !maskElement(m.getElementType()))
      return ("the mask is not a static " + maskTypes + " (additive) tensor of rank <= 4").str();
    SmallVector<int64_t> shape(4 - m.getRank(), 1);
    llvm::append_range(shape, m.getShape());
    if (shape[3] != k.getDimSize(2))
      return "the mask does not vary along the keys";
  }
  return "";
}

namespace {

/// `reason` into `why` (when asked for); false.
bool refuse(std::string *why, const Twine &reason) {
  if (why)
    *why = reason.str();
  return false;
}

} // namespace

bool hasAttentionKernel(AttentionOp op, const AttentionKernelShapes &shapes, std::string *why) {
  if (!shapes.keepsAny())
    return refuse(why, "the target has no attention kernel");
  bool halfFloats = shapes.halfFloats;
  auto isHalf = [](Type t) { return t.isF16() || t.isBF16(); };
  std::string problem = attentionLayoutProblem(
      op, [&](Type t) { return t.isF32() || (halfFloats && isHalf(t)); },
      halfFloats ? "f32/f16/bf16" : "f32");
  if (!problem.empty())
    return refuse(why, problem);
  auto q = cast<RankedTensorType>(op.getQuery().getType());
  Type element = q.getElementType();
  if (getElementTypeOrSelf(op.getKey()) != element ||
      getElementTypeOrSelf(op.getValue()) != element)
    return refuse(why, "query, key and value differ in element type");
  if (!(shapes.f32 && element.isF32()) && !(halfFloats && isHalf(element)))
    return refuse(why, "elements are not " +
                           Twine(shapes.f32 && halfFloats ? "f32, f16 or bf16"
                                 : shapes.f32             ? "f32"
                                                          : "f16 or bf16"));
  int64_t d = q.getDimSize(3);
  if (cast<RankedTensorType>(op.getValue().getType()).getDimSize(3) != d ||
      d % shapes.headDimMultiple != 0 || d > shapes.maxHeadDim)
    return refuse(why, "head dim " + Twine(d) + " is not a multiple of " +
                           Twine(shapes.headDimMultiple) + " up to " +
                           Twine(shapes.maxHeadDim) + ", or value's differs");
  return true;
}

} // namespace kiln

namespace kiln {

LogicalResult MatmulNBitsKernelOp::verify() {
  auto typeOf = [](Value v) { return cast<ShapedType>(v.getType()); };
  ShapedType a = typeOf(getA()), q = typeOf(getQ()), s = typeOf(getScales()),
             z = typeOf(getZeroPoints()), out = typeOf(getInit());
  for (auto [name, type, element] :
       {std::tuple<StringRef, ShapedType, StringRef>{"a", a, "f32"},
        {"q", q, "i8"},
        {"scales", s, "f32"},
        {"zero_points", z, "f32"},
        {"init", out, "f32"}}) {
    if (!type.hasRank() || type.getRank() != 2)
      return emitOpError() << "expects a rank-2 " << name << ", got " << type;
    Type e = type.getElementType();
    bool ok = element == "i8" ? e.isSignlessInteger(8) : e.isF32();
    if (!ok)
      return emitOpError() << "expects " << element << " elements in " << name << ", got " << e;
    if (isa<RankedTensorType>(type) != isa<RankedTensorType>(out))
      return emitOpError() << "mixes tensors and buffers (" << name << ")";
  }
  if (getBits() != 4 && getBits() != 8)
    return emitOpError() << "expects bits 4 or 8, got " << getBits();
  int64_t block = getBlockSize();
  if (block < 2 || (block & (block - 1)) != 0)
    return emitOpError() << "expects a block_size that is a power of 2, got " << block;
  int64_t m = a.getDimSize(0), k = a.getDimSize(1), n = q.getDimSize(0);
  int64_t blocks = s.getDimSize(1);
  if (!q.hasStaticShape() || !s.hasStaticShape() || !z.hasStaticShape() ||
      ShapedType::isDynamic(k) || s.getDimSize(0) != n || s.getShape() != z.getShape() ||
      q.getDimSize(1) != blocks * block || blocks * block < k || (blocks - 1) * block >= k)
    return emitOpError() << "expects static q [N, blocks * block_size], scales and "
                            "zero_points [N, blocks] with blocks = ceil(K / block_size), got a "
                         << a << ", q " << q << ", scales " << s << ", zero_points " << z;
  if (!sameDim(out.getDimSize(0), m) || out.getDimSize(1) != n)
    return emitOpError() << "init " << out << " is not [M, N] for a " << a << " and q " << q;
  bool onTensors = isa<RankedTensorType>(out);
  if (onTensors != (getNumResults() == 1) ||
      (onTensors && getResult()[0].getType() != out))
    return emitOpError() << (onTensors ? "on tensors has one result, of the init's type"
                                       : "on buffers has no results");
  return success();
}

void MatmulNBitsKernelOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  kernelEffects(*this, getInitMutable(), effects);
}

bool MatmulNBitsKernelOp::bufferizesToMemoryRead(OpOperand &operand, const AnalysisState &) {
  return &operand != &getInitMutable(); // init is overwritten, never read
}

bool MatmulNBitsKernelOp::bufferizesToMemoryWrite(OpOperand &operand, const AnalysisState &) {
  return &operand == &getInitMutable();
}

AliasingValueList MatmulNBitsKernelOp::getAliasingValues(OpOperand &operand,
                                                         const AnalysisState &) {
  return initAliases(operand, getInitMutable(), getResult()[0]);
}

LogicalResult MatmulNBitsKernelOp::bufferize(RewriterBase &rewriter,
                                             const BufferizationOptions &options,
                                             BufferizationState &state) {
  FailureOr<SmallVector<Value>> operands = operandBuffers(*this, rewriter, options, state);
  if (failed(operands))
    return failure();
  SmallVector<Value> &buffers = *operands;
  rewriter.setInsertionPoint(*this);
  MatmulNBitsKernelOp::create(rewriter, getLoc(), TypeRange{}, buffers[0], buffers[1],
                              buffers[2], buffers[3], buffers[4], getBitsAttr(),
                              getBlockSizeAttr());
  replaceOpWithBufferizedValues(rewriter, *this, buffers.back());
  return success();
}

} // namespace kiln
