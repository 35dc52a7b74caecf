//===- AttentionCodegen.cpp - The kiln-cpu-attention pass -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kiln.attention_kernel on buffers -> one parallel loop of online-softmax
// tasks. Layout of a task's work (W lanes per vector, QV query vectors):
//
//   QT [D, Br]  queries of the block, transposed and scaled (Br = QV * W)
//   ST [Bc, Br] scores of a block of Bc keys, then their exponentials
//   OT [D, Br]  the output accumulator, transposed
//
// Queries run along the vector lanes, so the running max m and sum l of
// the online softmax are QV vectors and every reduction over keys is
// elementwise between rows of ST: no horizontal reduction anywhere. Key
// and value elements are scalars broadcast against query vectors, so any
// layout of K and V works (strides come from their memref types).
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNCPUATTENTIONPASS
#include "kiln/Target/CPU/Passes.h.inc"

namespace {

constexpr int64_t kKeyBlock = 64;

struct AttentionEmitter {
  OpBuilder &b;
  Location loc;
  int64_t w;
  AttentionKernelOp op;
  VectorType vt;
  Type f32;
  int64_t batch, heads, sq, sk, d, qv, br, jt, dt;

  AttentionEmitter(OpBuilder &b, Location loc, int64_t w, int64_t registers,
                   AttentionKernelOp op)
      : b(b), loc(loc), w(w), op(op) {
    f32 = b.getF32Type();
    vt = VectorType::get({w}, f32);
    auto q = cast<MemRefType>(op.getQuery().getType());
    batch = q.getDimSize(0), heads = q.getDimSize(1), sq = q.getDimSize(2), d = q.getDimSize(3);
    sk = cast<MemRefType>(op.getKey().getType()).getDimSize(2);
    int64_t vectors = llvm::divideCeil(sq, w);
    qv = vectors <= 1 ? 1 : vectors <= 2 ? 2 : 4;
    br = qv * w;
    // Score tile: jt keys x qv query vectors (24 accumulators of 32
    // registers); output tile: dt head dims x qv query vectors (16 of 32).
    jt = std::clamp<int64_t>(registers * 3 / 4 / qv, 1, 12);
    dt = std::clamp<int64_t>(registers / 2 / qv, 1, d);
  }

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value splat(float v) {
    return arith::ConstantOp::create(b, loc, vt, DenseElementsAttr::get(vt, v));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value bcast(Value scalar) { return vector::BroadcastOp::create(b, loc, vt, scalar); }
  Value vload(Value mem, ValueRange at) { return vector::LoadOp::create(b, loc, vt, mem, at); }
  void vstore(Value v, Value mem, ValueRange at) { vector::StoreOp::create(b, loc, v, mem, at); }

  /// What the steps of one task share: its batch, head and first query
  /// (bi, hi, i0), the tiles QT, ST and OT, and each query vector's valid
  /// lanes and query positions.
  struct Task {
    Value bi, hi, i0, zero, one;
    Value qt, st, ot;
    SmallVector<Value> laneMasks, positions;
  };

  /// Emits the task body for task index `t`: the scaled queries, then the
  /// key blocks (scores, online softmax, output update), then the output
  /// normalized and stored.
  void emitTask(Value t) {
    Task task = emitTaskSetup(t);
    emitScaledQueries(task);
    emitQueryLanes(task);
    Value zeros = splat(0.0f);
    emitZeroOutputTile(task, zeros);
    scf::ForOp blockLoop = emitKeyBlocks(task, zeros);
    emitNormalizeOutputTile(task, blockLoop);
    emitStoreOutput(task);
  }

  /// Task `t`'s batch, head and query block, and its tiles.
  Task emitTaskSetup(Value t) {
    Task task;
    int64_t blocks = llvm::divideCeil(sq, br);
    task.bi = arith::DivUIOp::create(b, loc, t, idx(heads * blocks));
    Value rest = arith::RemUIOp::create(b, loc, t, idx(heads * blocks));
    task.hi = arith::DivUIOp::create(b, loc, rest, idx(blocks));
    Value qb = arith::RemUIOp::create(b, loc, rest, idx(blocks));
    task.i0 = mul(qb, idx(br));
    task.zero = idx(0);
    task.one = idx(1);
    task.qt = memref::AllocaOp::create(b, loc, MemRefType::get({d, br}, f32));
    task.st = memref::AllocaOp::create(b, loc, MemRefType::get({kKeyBlock, br}, f32));
    task.ot = memref::AllocaOp::create(b, loc, MemRefType::get({d, br}, f32));
    return task;
  }

  /// QT[k, i] = scale * Q[b, h, min(i0 + i, Sq - 1), k]: lanes past Sq
  /// repeat the last query and are never stored.
  void emitScaledQueries(const Task &task) {
    Value scale = arith::ConstantOp::create(b, loc, op.getScaleAttr());
    scf::ForOp::create(b, loc, task.zero, idx(br), task.one, ValueRange{},
                       [&](OpBuilder &, Location, Value i, ValueRange) {
                         Value row = min(add(task.i0, i), idx(sq - 1));
                         scf::ForOp::create(
                             b, loc, task.zero, idx(d), task.one, ValueRange{},
                             [&](OpBuilder &, Location, Value k, ValueRange) {
                               Value x = memref::LoadOp::create(
                                   b, loc, op.getQuery(), ValueRange{task.bi, task.hi, row, k});
                               x = arith::MulFOp::create(b, loc, x, scale);
                               memref::StoreOp::create(b, loc, x, task.qt, ValueRange{k, i});
                               scf::YieldOp::create(b, loc);
                             });
                         scf::YieldOp::create(b, loc);
                       });
  }

  /// Valid lanes and query positions of each query vector.
  void emitQueryLanes(Task &task) {
    auto i32v = VectorType::get({w}, b.getI32Type());
    SmallVector<int32_t> steps = llvm::to_vector(llvm::seq<int32_t>(0, w));
    Value step = arith::ConstantOp::create(b, loc, i32v, DenseElementsAttr::get(i32v, ArrayRef(steps)));
    for (int64_t v = 0; v < qv; ++v) {
      Value first = add(task.i0, idx(v * w));
      Value left = arith::SubIOp::create(b, loc, idx(sq), first);
      left = arith::MaxSIOp::create(b, loc, min(left, idx(w)), task.zero);
      task.laneMasks.push_back(vector::CreateMaskOp::create(
          b, loc, VectorType::get({w}, b.getI1Type()), ValueRange{left}));
      Value first32 = arith::IndexCastOp::create(b, loc, b.getI32Type(), first);
      task.positions.push_back(arith::AddIOp::create(
          b, loc, vector::BroadcastOp::create(b, loc, i32v, first32), step));
    }
  }

  /// OT = 0.
  void emitZeroOutputTile(const Task &task, Value zeros) {
    scf::ForOp::create(b, loc, task.zero, idx(d), task.one, ValueRange{},
                       [&](OpBuilder &, Location, Value k, ValueRange) {
                         for (int64_t v = 0; v < qv; ++v)
                           vstore(zeros, task.ot, {k, idx(v * w)});
                         scf::YieldOp::create(b, loc);
                       });
  }

  /// The loop over key blocks, carrying m and l per query vector (its
  /// results: m, then l).
  scf::ForOp emitKeyBlocks(const Task &task, Value zeros) {
    SmallVector<Value> state(qv, splat(-INFINITY));
    state.append(qv, zeros);
    int64_t keyBlocks = llvm::divideCeil(sk, kKeyBlock);
    return scf::ForOp::create(
        b, loc, task.zero, idx(keyBlocks), task.one, state,
        [&](OpBuilder &, Location, Value kb, ValueRange carried) {
          Value k0 = mul(kb, idx(kKeyBlock));
          Value count = min(idx(kKeyBlock), arith::SubIOp::create(b, loc, idx(sk), k0));
          emitBlockScores(task, k0, count);
          SmallVector<Value> alphas, next(2 * qv);
          emitOnlineSoftmax(task, count, carried, zeros, alphas, next);
          emitOutputUpdate(task, k0, count, alphas);
          scf::YieldOp::create(b, loc, next);
        });
  }

  /// ST for the `count` keys from k0: tiles of jt keys, then single keys.
  void emitBlockScores(const Task &task, Value k0, Value count) {
    Value full = mul(arith::DivUIOp::create(b, loc, count, idx(jt)), idx(jt));
    scf::ForOp::create(b, loc, task.zero, full, idx(jt), ValueRange{},
                       [&](OpBuilder &, Location, Value j, ValueRange) {
                         emitScores(task.bi, task.hi, k0, j, jt, task.qt, task.st,
                                    task.laneMasks, task.positions, task.i0);
                         scf::YieldOp::create(b, loc);
                       });
    scf::ForOp::create(b, loc, full, count, task.one, ValueRange{},
                       [&](OpBuilder &, Location, Value j, ValueRange) {
                         emitScores(task.bi, task.hi, k0, j, 1, task.qt, task.st,
                                    task.laneMasks, task.positions, task.i0);
                         scf::YieldOp::create(b, loc);
                       });
  }

  /// Online softmax per query vector over the block's scores: ST becomes
  /// exp(S - m_new); `next` gets m_new and l, `alphas` the factor
  /// exp(m - m_new) that rescales what OT holds.
  void emitOnlineSoftmax(const Task &task, Value count, ValueRange carried, Value zeros,
                         SmallVectorImpl<Value> &alphas, SmallVectorImpl<Value> &next) {
    for (int64_t v = 0; v < qv; ++v) {
      Value col = idx(v * w);
      auto maxLoop = scf::ForOp::create(
          b, loc, task.zero, count, task.one, ValueRange{splat(-INFINITY)},
          [&](OpBuilder &, Location, Value j, ValueRange acc) {
            Value s = vload(task.st, {j, col});
            scf::YieldOp::create(b, loc, ValueRange{arith::MaximumFOp::create(b, loc, acc[0], s)});
          });
      Value m = carried[v], l = carried[qv + v];
      Value mNew = arith::MaximumFOp::create(b, loc, m, maxLoop.getResult(0));
      // A row with every key masked so far keeps exp(-inf - 0) = 0.
      Value allMasked = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mNew,
                                              splat(-INFINITY));
      Value base = arith::SelectOp::create(b, loc, allMasked, zeros, mNew);
      Value alpha = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, m, base));
      auto sumLoop = scf::ForOp::create(
          b, loc, task.zero, count, task.one, ValueRange{zeros},
          [&](OpBuilder &, Location, Value j, ValueRange acc) {
            Value p = math::ExpOp::create(
                b, loc, arith::SubFOp::create(b, loc, vload(task.st, {j, col}), base));
            vstore(p, task.st, {j, col});
            scf::YieldOp::create(b, loc, ValueRange{arith::AddFOp::create(b, loc, acc[0], p)});
          });
      next[v] = mNew;
      next[qv + v] = math::FmaOp::create(b, loc, l, alpha, sumLoop.getResult(0));
      alphas.push_back(alpha);
    }
  }

  /// OT = OT * alpha + V^T P^T over the block, dt head dims at a time.
  void emitOutputUpdate(const Task &task, Value k0, Value count, ArrayRef<Value> alphas) {
    scf::ForOp::create(
        b, loc, task.zero, idx(d), idx(dt), ValueRange{},
        [&](OpBuilder &, Location, Value k, ValueRange) {
          SmallVector<Value> acc;
          for (int64_t r = 0; r < dt; ++r)
            for (int64_t v = 0; v < qv; ++v)
              acc.push_back(arith::MulFOp::create(
                  b, loc, vload(task.ot, {add(k, idx(r)), idx(v * w)}), alphas[v]));
          auto inner = scf::ForOp::create(
              b, loc, task.zero, count, task.one, acc,
              [&](OpBuilder &, Location, Value j, ValueRange a) {
                SmallVector<Value> p, out;
                for (int64_t v = 0; v < qv; ++v)
                  p.push_back(vload(task.st, {j, idx(v * w)}));
                Value key = add(k0, j);
                for (int64_t r = 0; r < dt; ++r) {
                  Value x = memref::LoadOp::create(
                      b, loc, op.getValue(), ValueRange{task.bi, task.hi, key, add(k, idx(r))});
                  Value xb = bcast(x);
                  for (int64_t v = 0; v < qv; ++v)
                    out.push_back(math::FmaOp::create(b, loc, xb, p[v], a[r * qv + v]));
                }
                scf::YieldOp::create(b, loc, out);
              });
          for (int64_t r = 0; r < dt; ++r)
            for (int64_t v = 0; v < qv; ++v)
              vstore(inner.getResult(r * qv + v), task.ot, {add(k, idx(r)), idx(v * w)});
          scf::YieldOp::create(b, loc);
        });
  }

  /// OT /= l (the key blocks' final sums).
  void emitNormalizeOutputTile(const Task &task, scf::ForOp blockLoop) {
    SmallVector<Value> inverse;
    for (int64_t v = 0; v < qv; ++v)
      inverse.push_back(arith::DivFOp::create(b, loc, splat(1.0f), blockLoop.getResult(qv + v)));
    scf::ForOp::create(b, loc, task.zero, idx(d), task.one, ValueRange{},
                       [&](OpBuilder &, Location, Value k, ValueRange) {
                         for (int64_t v = 0; v < qv; ++v) {
                           Value col = idx(v * w);
                           vstore(arith::MulFOp::create(b, loc, vload(task.ot, {k, col}),
                                                        inverse[v]),
                                  task.ot, {k, col});
                         }
                         scf::YieldOp::create(b, loc);
                       });
  }

  /// OT transposed into the output, the block's valid queries only
  /// ([b, q, h, k] when the kernel merges the heads, else [b, h, q, k]).
  void emitStoreOutput(const Task &task) {
    Value rows = min(idx(br), arith::SubIOp::create(b, loc, idx(sq), task.i0));
    bool merged = op.getMergeHeads();
    scf::ForOp::create(
        b, loc, task.zero, rows, task.one, ValueRange{},
        [&](OpBuilder &, Location, Value i, ValueRange) {
          Value qi = add(task.i0, i);
          scf::ForOp::create(b, loc, task.zero, idx(d), task.one, ValueRange{},
                             [&](OpBuilder &, Location, Value k, ValueRange) {
                               Value x = memref::LoadOp::create(b, loc, task.ot, ValueRange{k, i});
                               SmallVector<Value> at =
                                   merged ? SmallVector<Value>{task.bi, qi, task.hi, k}
                                          : SmallVector<Value>{task.bi, task.hi, qi, k};
                               memref::StoreOp::create(b, loc, x, op.getInit(), at);
                               scf::YieldOp::create(b, loc);
                             });
          scf::YieldOp::create(b, loc);
        });
  }

  /// ST[j - .. + r, :] for keys k0 + j + r, r < n: Q K^T (scale in QT),
  /// plus mask, causal positions masked to -inf.
  void emitScores(Value bi, Value hi, Value k0, Value j, int64_t n, Value qt, Value st,
                  ArrayRef<Value> laneMasks, ArrayRef<Value> positions, Value i0) {
    Value zero = idx(0), one = idx(1);
    SmallVector<Value> init(n * qv, splat(0.0f));
    auto dot = scf::ForOp::create(
        b, loc, zero, idx(d), one, init, [&](OpBuilder &, Location, Value k, ValueRange acc) {
          SmallVector<Value> q, out;
          for (int64_t v = 0; v < qv; ++v)
            q.push_back(vload(qt, {k, idx(v * w)}));
          for (int64_t r = 0; r < n; ++r) {
            Value x = memref::LoadOp::create(b, loc, op.getKey(),
                                             ValueRange{bi, hi, add(add(k0, j), idx(r)), k});
            Value xb = bcast(x);
            for (int64_t v = 0; v < qv; ++v)
              out.push_back(math::FmaOp::create(b, loc, xb, q[v], acc[r * qv + v]));
          }
          scf::YieldOp::create(b, loc, out);
        });
    Value mask = op.getMask();
    MemRefType maskType = mask ? cast<MemRefType>(mask.getType()) : MemRefType();
    for (int64_t r = 0; r < n; ++r) {
      Value row = add(j, idx(r)), key = add(k0, row);
      for (int64_t v = 0; v < qv; ++v) {
        Value s = dot.getResult(r * qv + v);
        if (mask) {
          Value mb = maskType.getDimSize(0) == 1 ? idx(0) : bi;
          Value mh = maskType.getDimSize(1) == 1 ? idx(0) : hi;
          Value add;
          if (maskType.getDimSize(3) == 1) {
            add = bcast(memref::LoadOp::create(b, loc, mask, ValueRange{mb, mh, key, idx(0)}));
          } else {
            Value first = this->add(i0, idx(v * w));
            add = vector::MaskedLoadOp::create(b, loc, vt, mask, ValueRange{mb, mh, key, first},
                                               laneMasks[v], splat(0.0f));
          }
          s = arith::AddFOp::create(b, loc, s, add);
        }
        if (op.getIsCausal()) {
          Value key32 = arith::IndexCastOp::create(b, loc, b.getI32Type(), key);
          Value keys = vector::BroadcastOp::create(b, loc, positions[v].getType(), key32);
          Value after = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, keys, positions[v]);
          s = arith::SelectOp::create(b, loc, after, splat(-INFINITY), s);
        }
        vstore(s, st, {row, idx(v * w)});
      }
    }
  }
};

struct KilnCPUAttentionPass final : impl::KilnCPUAttentionPassBase<KilnCPUAttentionPass> {
  using KilnCPUAttentionPassBase::KilnCPUAttentionPassBase;

  void runOnOperation() override {
    SmallVector<AttentionKernelOp> kernels;
    getOperation().walk([&](AttentionKernelOp op) { kernels.push_back(op); });
    for (AttentionKernelOp op : kernels) {
      if (!isa<MemRefType>(op.getInit().getType()) ||
          llvm::any_of(op->getOperandTypes(),
                       [](Type t) { return !cast<MemRefType>(t).hasStaticShape(); })) {
        op.emitError("kiln-cpu-attention expects a bufferized kiln.attention_kernel with static "
                     "shapes");
        return signalPassFailure();
      }
      // f16/bf16 kernels are the CUDA target's (kiln-cuda-attention).
      if (llvm::any_of(op->getOperandTypes(), [](Type t) {
            return !cast<MemRefType>(t).getElementType().isF32();
          })) {
        op.emitError("kiln-cpu-attention expects f32 elements");
        return signalPassFailure();
      }
      OpBuilder b(op);
      Location loc = op.getLoc();
      AttentionEmitter emitter(b, loc, vectorWidth, vectorRegisters, op);
      int64_t tasks =
          emitter.batch * emitter.heads * llvm::divideCeil(emitter.sq, emitter.br);
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      Value count = arith::ConstantIndexOp::create(b, loc, tasks);
      auto loop = scf::ParallelOp::create(
          b, loc, ValueRange{zero}, ValueRange{count}, ValueRange{one},
          [&](OpBuilder &, Location, ValueRange ivs) {
            auto scope = memref::AllocaScopeOp::create(b, loc, TypeRange{});
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(&scope.getBodyRegion().emplaceBlock());
            emitter.emitTask(ivs.front());
            memref::AllocaScopeReturnOp::create(b, loc);
          });
      loop->setAttr(kHeavyLoopAttr, b.getUnitAttr());
      op.erase();
    }
  }
};

} // namespace
} // namespace kiln
