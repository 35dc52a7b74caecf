//===- RecurrentHandlers.cpp - ONNX RNN, GRU and LSTM ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The recurrent layers are decomposed while importing, with the sequence
// unrolled (its length must be static): per direction and time step, one
// matmul of the step's input with W^T and one of the hidden state with R^T
// (kiln.matmul), the gates as slices of their sum, and the gate equations of
// the ONNX spec as elementwise kiln ops. The outputs are the steps' hidden
// states stacked; `sequence_lens` masks the steps past each row's length.
// Activations Tanh, Sigmoid and Relu are supported, with `clip`; LSTM's
// `input_forget` is unsupported.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace kiln::onnx_import {
namespace {

enum class Cell { rnn, gru, lstm };

/// Number of gates of each cell (the row blocks of W and R).
unsigned gateCount(Cell cell) {
  return cell == Cell::rnn ? 1 : cell == Cell::gru ? 3 : 4;
}

FailureOr<Value> sliceOf(NodeBinder &b, Value x, int64_t axis, int64_t start,
                         int64_t end) {
  return b.make<kiln::SliceOp>(x, ArrayRef<int64_t>{start}, ArrayRef<int64_t>{end},
                               ArrayRef<int64_t>{axis}, ArrayRef<int64_t>{1});
}

FailureOr<Value> takeAt(NodeBinder &b, Value x, int64_t axis, int64_t i) {
  FailureOr<Value> slice = sliceOf(b, x, axis, i, i + 1);
  if (failed(slice))
    return failure();
  return b.make<kiln::SqueezeOp>(*slice, ArrayRef<int64_t>{axis});
}

FailureOr<Value> transposed(NodeBinder &b, Value x, ArrayRef<int64_t> perm) {
  return b.make<kiln::TransposeOp>(x, perm);
}

/// The layer's attributes and per-direction weights, as the steps use them.
struct Layer {
  Cell cell;
  int64_t hidden = 0, steps = 0, batch = 0, directions = 1;
  bool reverse = false, linearBeforeReset = false;
  std::optional<double> clip;
  SmallVector<std::string> activations; // per direction, gateCount-specific
  Type element;
};

struct Direction {
  Value wT, rT;        // [I, G*H], [H, G*H]
  Value wBias, rBias;  // [G*H] each, null when the node has no B
  Value peephole;      // [3H] (LSTM), null when absent
  Value h, c;          // [B, H]
  bool reverse = false;
  ArrayRef<std::string> acts; // f, g[, h]
};

FailureOr<Value> activate(NodeBinder &b, const Layer &layer, StringRef name,
                          Value x) {
  if (layer.clip) {
    Value hi = b.scalar(layer.element, *layer.clip);
    Value lo = b.scalar(layer.element, -*layer.clip);
    FailureOr<Value> below = b.make<kiln::MinOp>(x, hi);
    if (failed(below))
      return failure();
    FailureOr<Value> clipped = b.make<kiln::MaxOp>(*below, lo);
    if (failed(clipped))
      return failure();
    x = *clipped;
  }
  if (name == "Tanh")
    return b.make<kiln::TanhOp>(x);
  if (name == "Sigmoid")
    return b.make<kiln::SigmoidOp>(x);
  if (name == "Relu")
    return b.make<kiln::ReluOp>(x);
  return b.unsupported("activation '" + name + "' (Tanh, Sigmoid and Relu are)");
}

/// a + b, either of which may be null (then the other is returned).
FailureOr<Value> addMaybe(NodeBinder &b, Value lhs, Value rhs) {
  if (!lhs)
    return rhs;
  if (!rhs)
    return lhs;
  return b.make<kiln::AddOp>(lhs, rhs);
}

/// Gate `g` (block g of H columns) of a [B, G*H] or [G*H] value.
FailureOr<Value> gate(NodeBinder &b, const Layer &layer, Value x, int64_t g) {
  if (!x)
    return Value();
  int64_t axis = tensorType(x).getRank() - 1;
  return sliceOf(b, x, axis, g * layer.hidden, (g + 1) * layer.hidden);
}

/// One time step of direction `d` with input `xt` [B, I]; updates d.h, d.c.
LogicalResult step(NodeBinder &b, const Layer &layer, Direction &d, Value xt) {
  FailureOr<Value> xw = b.make<kiln::MatmulOp>(xt, d.wT);
  if (failed(xw))
    return failure();
  FailureOr<Value> hr = b.make<kiln::MatmulOp>(d.h, d.rT);
  if (failed(hr))
    return failure();
  // Pre-activation of gate g: x W_g^T + h R_g^T + Wb_g + Rb_g (+ extra).
  auto preact = [&](int64_t g, Value extra) -> FailureOr<Value> {
    FailureOr<Value> xg = gate(b, layer, *xw, g), hg = gate(b, layer, *hr, g);
    FailureOr<Value> wb = gate(b, layer, d.wBias, g), rb = gate(b, layer, d.rBias, g);
    if (failed(xg) || failed(hg) || failed(wb) || failed(rb))
      return failure();
    FailureOr<Value> sum = b.make<kiln::AddOp>(*xg, *hg);
    if (failed(sum))
      return failure();
    for (Value term : {*wb, *rb, extra}) {
      sum = addMaybe(b, *sum, term);
      if (failed(sum))
        return failure();
    }
    return sum;
  };
  auto act = [&](unsigned which, Value x) {
    return activate(b, layer, d.acts[which], x);
  };
  if (layer.cell == Cell::rnn) {
    FailureOr<Value> pre = preact(0, {});
    if (failed(pre))
      return failure();
    FailureOr<Value> h = act(0, *pre);
    if (failed(h))
      return failure();
    d.h = *h;
    return success();
  }
  Value one = b.scalar(layer.element, 1);
  if (layer.cell == Cell::gru) {
    // Gates z, r, h.
    FailureOr<Value> zPre = preact(0, {}), rPre = preact(1, {});
    if (failed(zPre) || failed(rPre))
      return failure();
    FailureOr<Value> z = act(0, *zPre), r = act(0, *rPre);
    if (failed(z) || failed(r))
      return failure();
    FailureOr<Value> xh = gate(b, layer, *xw, 2), wbh = gate(b, layer, d.wBias, 2),
                     rbh = gate(b, layer, d.rBias, 2);
    if (failed(xh) || failed(wbh) || failed(rbh))
      return failure();
    FailureOr<Value> recurrent;
    if (layer.linearBeforeReset) {
      // r ⊙ (h Rh^T + Rbh)
      FailureOr<Value> hh = gate(b, layer, *hr, 2);
      if (failed(hh))
        return failure();
      FailureOr<Value> withBias = addMaybe(b, *hh, *rbh);
      if (failed(withBias))
        return failure();
      recurrent = b.make<kiln::MulOp>(*r, *withBias);
    } else {
      // (r ⊙ h) Rh^T + Rbh
      FailureOr<Value> rh = b.make<kiln::MulOp>(*r, d.h);
      FailureOr<Value> rhT = gate(b, layer, d.rT, 2);
      if (failed(rh) || failed(rhT))
        return failure();
      FailureOr<Value> product = b.make<kiln::MatmulOp>(*rh, *rhT);
      if (failed(product))
        return failure();
      recurrent = addMaybe(b, *product, *rbh);
    }
    if (failed(recurrent))
      return failure();
    FailureOr<Value> pre = b.make<kiln::AddOp>(*xh, *recurrent);
    if (failed(pre) || failed(pre = addMaybe(b, *pre, *wbh)))
      return failure();
    FailureOr<Value> candidate = act(1, *pre);
    if (failed(candidate))
      return failure();
    // H = (1 - z) ⊙ candidate + z ⊙ H_prev
    FailureOr<Value> keep = b.make<kiln::SubOp>(one, *z);
    if (failed(keep))
      return failure();
    FailureOr<Value> fresh = b.make<kiln::MulOp>(*keep, *candidate);
    FailureOr<Value> old = b.make<kiln::MulOp>(*z, d.h);
    if (failed(fresh) || failed(old))
      return failure();
    FailureOr<Value> h = b.make<kiln::AddOp>(*fresh, *old);
    if (failed(h))
      return failure();
    d.h = *h;
    return success();
  }
  // LSTM, gates i, o, f, c; peepholes P = [Pi, Po, Pf].
  auto peep = [&](int64_t which, Value c) -> FailureOr<Value> {
    if (!d.peephole)
      return Value();
    FailureOr<Value> p = gate(b, layer, d.peephole, which);
    if (failed(p))
      return failure();
    return b.make<kiln::MulOp>(*p, c);
  };
  FailureOr<Value> pi = peep(0, d.c), pf = peep(2, d.c);
  if (failed(pi) || failed(pf))
    return failure();
  FailureOr<Value> iPre = preact(0, *pi), fPre = preact(2, *pf), cPre = preact(3, {});
  if (failed(iPre) || failed(fPre) || failed(cPre))
    return failure();
  FailureOr<Value> i = act(0, *iPre), f = act(0, *fPre), cand = act(1, *cPre);
  if (failed(i) || failed(f) || failed(cand))
    return failure();
  FailureOr<Value> kept = b.make<kiln::MulOp>(*f, d.c);
  FailureOr<Value> added = b.make<kiln::MulOp>(*i, *cand);
  if (failed(kept) || failed(added))
    return failure();
  FailureOr<Value> c = b.make<kiln::AddOp>(*kept, *added);
  if (failed(c))
    return failure();
  FailureOr<Value> po = peep(1, *c);
  if (failed(po))
    return failure();
  FailureOr<Value> oPre = preact(1, *po);
  if (failed(oPre))
    return failure();
  FailureOr<Value> o = act(0, *oPre), hc = act(2, *c);
  if (failed(o) || failed(hc))
    return failure();
  FailureOr<Value> h = b.make<kiln::MulOp>(*o, *hc);
  if (failed(h))
    return failure();
  d.h = *h;
  d.c = *c;
  return success();
}

/// The default activations of one direction.
SmallVector<std::string> defaultActivations(Cell cell) {
  if (cell == Cell::rnn)
    return {"Tanh"};
  if (cell == Cell::gru)
    return {"Sigmoid", "Tanh"};
  return {"Sigmoid", "Tanh", "Tanh"};
}

template <Cell cell>
LogicalResult recurrent(NodeBinder &b) {
  Layer layer;
  layer.cell = cell;
  FailureOr<Value> x = b.input(0), w = b.input(1), r = b.input(2);
  if (failed(x) || failed(w) || failed(r))
    return failure();
  FailureOr<std::string> direction = b.stringAttr("direction", StringRef("forward"));
  FailureOr<int64_t> layout = b.intAttr("layout", 0);
  if (failed(direction) || failed(layout) ||
      failed(b.checkRange("attribute 'layout'", *layout, 0, 1)))
    return failure();
  if (*direction == "bidirectional")
    layer.directions = 2;
  else if (*direction == "reverse")
    layer.reverse = true;
  else if (*direction != "forward")
    return b.emitError() << "attribute 'direction' value is '" << *direction
                         << "', accepted values are forward, reverse and "
                            "bidirectional";
  if (cell == Cell::lstm) {
    FailureOr<int64_t> forget = b.intAttr("input_forget", 0);
    if (failed(forget))
      return failure();
    if (*forget != 0)
      return b.unsupported("attribute 'input_forget' = 1");
  }
  if (cell == Cell::gru) {
    FailureOr<int64_t> lbr = b.intAttr("linear_before_reset", 0);
    if (failed(lbr))
      return failure();
    layer.linearBeforeReset = *lbr != 0;
  }
  if (b.hasAttr("clip")) {
    FailureOr<float> clip = b.floatAttr("clip", std::nullopt);
    if (failed(clip))
      return failure();
    layer.clip = *clip;
  }
  // Activation parameters are only read by activations Kiln does not have.
  for (StringRef name : {"activation_alpha", "activation_beta"})
    if (b.hasAttr(name))
      return b.unsupported("attribute '" + name + "'");
  SmallVector<std::string> defaults = defaultActivations(cell);
  SmallVector<std::string> acts;
  for (int64_t d = 0; d < layer.directions; ++d)
    llvm::append_range(acts, defaults);
  if (b.hasAttr("activations")) {
    FailureOr<SmallVector<std::string>> given = b.stringsAttr("activations");
    if (failed(given))
      return failure();
    if (given->size() != acts.size())
      return b.emitError() << "attribute 'activations' has " << given->size()
                           << " entries, expected " << acts.size();
    acts = *given;
  }
  layer.activations = acts;

  RankedTensorType xType = tensorType(*x);
  if (xType.getRank() != 3 || !xType.hasStaticShape())
    return b.unsupported("input X of type " +
                         llvm::formatv("{0}", xType).str() +
                         " (a static [seq, batch, input] shape is needed)");
  layer.element = xType.getElementType();
  if (!isa<FloatType>(layer.element))
    return b.emitError() << "X has element type " << layer.element
                         << ", expected a float type";
  Value seq = *x;
  if (*layout == 1) {
    FailureOr<Value> t = transposed(b, *x, {1, 0, 2});
    if (failed(t))
      return failure();
    seq = *t;
  }
  RankedTensorType seqType = tensorType(seq);
  layer.steps = seqType.getDimSize(0);
  layer.batch = seqType.getDimSize(1);
  int64_t inputSize = seqType.getDimSize(2);
  unsigned gates = gateCount(cell);
  RankedTensorType rType = tensorType(*r);
  if (rType.getRank() != 3 || ShapedType::isDynamic(rType.getDimSize(2)))
    return b.emitError() << "R has type " << rType
                         << ", expected [directions, gates * hidden, hidden]";
  FailureOr<int64_t> hidden = b.intAttr("hidden_size", rType.getDimSize(2));
  if (failed(hidden) ||
      failed(b.checkRange("attribute 'hidden_size'", *hidden, 1, std::nullopt)))
    return failure();
  layer.hidden = *hidden;
  int64_t d = layer.directions, g = gates, h = layer.hidden;
  auto expect = [&](Value v, ArrayRef<int64_t> shape,
                    StringRef name) -> LogicalResult {
    RankedTensorType type = tensorType(v);
    if (type.getShape() == shape && type.getElementType() == layer.element)
      return success();
    InFlightDiagnostic diag = b.emitError();
    diag << name << " has type " << type << ", expected [";
    llvm::interleaveComma(shape, diag);
    diag << "] of " << layer.element << " (hidden_size " << h << ")";
    return failure();
  };
  if (failed(expect(*w, {d, g * h, inputSize}, "W")) ||
      failed(expect(*r, {d, g * h, h}, "R")))
    return failure();
  if (layer.steps == 0)
    return b.unsupported("a sequence of length 0");
  Value lens = b.optionalInput(4);
  if (lens) {
    RankedTensorType lensType = tensorType(lens);
    if (lensType.getShape() != ArrayRef<int64_t>{layer.batch} ||
        !lensType.getElementType().isInteger(32))
      return b.emitError() << "sequence_lens has type " << lensType
                           << ", expected [" << layer.batch << "] of i32";
    // [B] -> [B, 1], to broadcast against the [B, H] states.
    FailureOr<Value> column = b.make<kiln::UnsqueezeOp>(lens, ArrayRef<int64_t>{1});
    if (failed(column))
      return failure();
    lens = *column;
  }
  Value bias = b.optionalInput(3), h0 = b.optionalInput(5),
        c0 = cell == Cell::lstm ? b.optionalInput(6) : Value(),
        peephole = cell == Cell::lstm ? b.optionalInput(7) : Value();
  SmallVector<int64_t> stateShape =
      *layout == 0 ? SmallVector<int64_t>{d, layer.batch, h}
                   : SmallVector<int64_t>{layer.batch, d, h};
  if ((bias && failed(expect(bias, {d, 2 * g * h}, "B"))) ||
      (h0 && failed(expect(h0, stateShape, "initial_h"))) ||
      (c0 && failed(expect(c0, stateShape, "initial_c"))) ||
      (peephole && failed(expect(peephole, {d, 3 * h}, "P"))))
    return failure();
  if (*layout == 1) {
    for (Value *state : {&h0, &c0}) {
      if (!*state)
        continue;
      FailureOr<Value> t = transposed(b, *state, {1, 0, 2});
      if (failed(t))
        return failure();
      *state = *t;
    }
  }
  auto zeros = [&]() {
    auto type = RankedTensorType::get({layer.batch, h}, layer.element);
    return b.constant(DenseElementsAttr::get(
        type, FloatAttr::get(layer.element, 0.0)));
  };

  SmallVector<Value> ys, finalH, finalC;
  for (int64_t dir = 0; dir < d; ++dir) {
    Direction state;
    state.reverse = layer.reverse || dir == 1;
    state.acts = ArrayRef<std::string>(layer.activations)
                     .slice(dir * defaults.size(), defaults.size());
    FailureOr<Value> wd = takeAt(b, *w, 0, dir), rd = takeAt(b, *r, 0, dir);
    if (failed(wd) || failed(rd))
      return failure();
    FailureOr<Value> wT = transposed(b, *wd, {1, 0}), rT = transposed(b, *rd, {1, 0});
    if (failed(wT) || failed(rT))
      return failure();
    state.wT = *wT;
    state.rT = *rT;
    if (bias) {
      FailureOr<Value> bd = takeAt(b, bias, 0, dir);
      if (failed(bd))
        return failure();
      FailureOr<Value> wb = sliceOf(b, *bd, 0, 0, g * h),
                       rb = sliceOf(b, *bd, 0, g * h, 2 * g * h);
      if (failed(wb) || failed(rb))
        return failure();
      state.wBias = *wb;
      state.rBias = *rb;
    }
    if (peephole) {
      FailureOr<Value> p = takeAt(b, peephole, 0, dir);
      if (failed(p))
        return failure();
      state.peephole = *p;
    }
    for (auto [init, into] : {std::make_pair(h0, &state.h), std::make_pair(c0, &state.c)}) {
      if (!init) {
        *into = zeros();
        continue;
      }
      FailureOr<Value> v = takeAt(b, init, 0, dir);
      if (failed(v))
        return failure();
      *into = *v;
    }
    SmallVector<Value> hs(layer.steps);
    for (int64_t i = 0; i < layer.steps; ++i) {
      int64_t t = state.reverse ? layer.steps - 1 - i : i;
      FailureOr<Value> xt = takeAt(b, seq, 0, t);
      Value hPrev = state.h, cPrev = state.c;
      if (failed(xt) || failed(step(b, layer, state, *xt)))
        return failure();
      hs[t] = state.h;
      if (!lens)
        continue;
      // Steps at or past a batch row's length keep its state and output 0
      // (in reverse, the state stays the initial one until the row starts).
      Type i32 = IntegerType::get(b.context(), 32);
      FailureOr<Value> live =
          b.make<kiln::LessOp>(b.scalar(i32, static_cast<double>(t)), lens);
      if (failed(live))
        return failure();
      FailureOr<Value> h = b.make<kiln::SelectOp>(*live, state.h, hPrev);
      FailureOr<Value> c = b.make<kiln::SelectOp>(*live, state.c, cPrev);
      FailureOr<Value> y = b.make<kiln::SelectOp>(*live, state.h, zeros());
      if (failed(h) || failed(c) || failed(y))
        return failure();
      state.h = *h;
      state.c = *c;
      hs[t] = *y;
    }
    FailureOr<Value> y = stackParts(b, hs, 0); // [T, B, H]
    if (failed(y))
      return failure();
    ys.push_back(*y);
    finalH.push_back(state.h);
    finalC.push_back(state.c);
  }
  FailureOr<Value> y = stackParts(b, ys, 1); // [T, D, B, H]
  FailureOr<Value> yh = stackParts(b, finalH, 0), yc = stackParts(b, finalC, 0);
  if (failed(y) || failed(yh) || failed(yc))
    return failure();
  SmallVector<Value> outputs = {*y, *yh, *yc};
  if (*layout == 1) {
    FailureOr<Value> ty = transposed(b, *y, {2, 0, 1, 3});
    FailureOr<Value> th = transposed(b, *yh, {1, 0, 2});
    FailureOr<Value> tc = transposed(b, *yc, {1, 0, 2});
    if (failed(ty) || failed(th) || failed(tc))
      return failure();
    outputs = {*ty, *th, *tc};
  }
  outputs.resize(cell == Cell::lstm ? 3 : 2);
  outputs.resize(std::min<size_t>(outputs.size(), b.numOutputs()));
  return b.setOutputs(outputs);
}

} // namespace

void registerRecurrentHandlers(HandlerRegistry &r) {
  r.add("RNN", 7, recurrent<Cell::rnn>);
  r.add("GRU", 7, recurrent<Cell::gru>);
  r.add("LSTM", 7, recurrent<Cell::lstm>);
}

} // namespace kiln::onnx_import
