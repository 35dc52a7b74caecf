//===- SignalHandlers.cpp - ONNX signal processing ops --------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// HannWindow, HammingWindow, BlackmanWindow (constants: their size must be
// known at import time), DFT and STFT. A DFT is a matmul of the real and
// imaginary parts with constant cos/sin matrices of the transform length
// (zero rows where the input is truncated), so it is quadratic in the
// length; the sizes must be static.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"
#include "TensorLoader.h"

#include <cmath>

using namespace mlir;

namespace kiln::onnx_import {
namespace {

/// The largest cos/sin matrix (elements) a DFT builds.
constexpr int64_t kMaxDftMatrix = int64_t(1) << 24;

/// A constant of `type` (float elements) holding `values`.
Value floatConstant(NodeBinder &b, RankedTensorType type, ArrayRef<double> values) {
  auto element = cast<FloatType>(type.getElementType());
  SmallVector<APFloat> data;
  bool lost;
  for (double v : values) {
    APFloat f(v);
    f.convert(element.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    data.push_back(f);
  }
  return b.constant(DenseElementsAttr::get(type, data));
}

//===----------------------------------------------------------------------===//
// Window functions
//===----------------------------------------------------------------------===//

enum class Window { hann, hamming, blackman };

/// a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N the size (periodic) or the
/// size - 1 (symmetric), as ONNX's reference computes it.
template <Window kind>
LogicalResult window(NodeBinder &b) {
  FailureOr<SmallVector<int64_t>> size = b.requireConstantInts(0, "'size'");
  FailureOr<int64_t> periodic = b.intAttr("periodic", 1);
  FailureOr<int64_t> dtype = b.intAttr("output_datatype", 1);
  if (failed(size) || failed(periodic) || failed(dtype) ||
      failed(b.checkRange("attribute 'periodic'", *periodic, 0, 1)))
    return failure();
  if (size->size() != 1 || size->front() < 0)
    return b.emitError() << "input 'size' must be one value >= 0";
  int64_t n = size->front();
  Type element = convertElementType(b.context(), static_cast<int32_t>(*dtype));
  if (!element || !(isa<FloatType>(element) || element.isSignlessInteger()))
    return b.unsupported("a window of " + elementTypeName(static_cast<int32_t>(*dtype)));
  double a0 = 0.5, a1 = 0.5, a2 = 0;
  if (kind == Window::hamming) {
    a0 = 25.0 / 46.0;
    a1 = 1 - a0;
  } else if (kind == Window::blackman) {
    a0 = 0.42;
    a2 = 0.08;
  }
  double denominator = static_cast<double>(*periodic ? n : n - 1);
  SmallVector<double> values;
  for (int64_t i = 0; i < n; ++i) {
    double angle = 2 * M_PI * static_cast<double>(i) / denominator;
    values.push_back(a0 - a1 * std::cos(angle) + a2 * std::cos(2 * angle));
  }
  auto f64 = RankedTensorType::get({n}, b.builder().getF64Type());
  if (failed(b.checkSize(f64)))
    return failure();
  Value wide = floatConstant(b, f64, values);
  if (element.isF64())
    return b.setOutput(0, wide);
  FailureOr<Value> out = b.makeTyped<kiln::CastOp>(f64.clone(element), wide);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

//===----------------------------------------------------------------------===//
// DFT
//===----------------------------------------------------------------------===//

/// A complex tensor as its real and imaginary parts (`im` null: real).
struct Complex {
  Value re, im;
};

enum class Transform { forward, inverse, inverseReal };

/// `x`'s last dim (n values) transformed with length `length` into `outLen`
/// values: forward e^{-i 2 pi k t / length}, inverse e^{+i...} / length, and
/// inverseReal (irfft) the Hermitian sum of a one-sided input, which gives
/// a real result.
FailureOr<Complex> dftLastDim(NodeBinder &b, Complex x, int64_t length, int64_t outLen,
                              Transform kind) {
  RankedTensorType type = tensorType(x.re);
  int64_t n = type.getShape().back();
  if (n * outLen > kMaxDftMatrix)
    return b.unsupported("a DFT of " + Twine(n) + " x " + Twine(outLen) +
                         " values (Kiln builds the transform as a matrix of at most " +
                         Twine(kMaxDftMatrix) + " elements)");
  // cos, and sin with the sign of the real part's and the imaginary part's terms.
  SmallVector<double> cosines, sinesRe, sinesIm;
  int64_t used = kind == Transform::inverseReal ? std::min(n, length / 2 + 1)
                                                : std::min(n, length);
  for (int64_t t = 0; t < n; ++t)
    for (int64_t k = 0; k < outLen; ++k) {
      if (t >= used) {
        cosines.push_back(0);
        sinesRe.push_back(0);
        sinesIm.push_back(0);
        continue;
      }
      // Exact phase: (t k) mod length before the floating-point product.
      double phase = 2 * M_PI * static_cast<double>((t * k) % length) /
                     static_cast<double>(length);
      double c = std::cos(phase), s = std::sin(phase);
      if (kind == Transform::forward) {
        cosines.push_back(c);
        sinesRe.push_back(s);
        sinesIm.push_back(-s);
        continue;
      }
      double scale = 1.0 / static_cast<double>(length);
      if (kind == Transform::inverseReal) // t is the frequency, k the sample
        scale *= (t == 0 || 2 * t == length) ? 1.0 : 2.0;
      cosines.push_back(c * scale);
      sinesRe.push_back(-s * scale);
      sinesIm.push_back(s * scale);
    }
  auto matrixType = RankedTensorType::get({n, outLen}, type.getElementType());
  Value cosine = floatConstant(b, matrixType, cosines);
  auto product = [&](Value v, ArrayRef<double> m) -> FailureOr<Value> {
    Value matrix = m.data() == cosines.data() ? cosine : floatConstant(b, matrixType, m);
    return b.make<kiln::MatmulOp>(v, matrix);
  };
  auto sum = [&](FailureOr<Value> a, Value other, ArrayRef<double> m) -> FailureOr<Value> {
    if (failed(a) || !other)
      return a;
    FailureOr<Value> term = product(other, m);
    if (failed(term))
      return failure();
    return b.make<kiln::AddOp>(*a, *term);
  };
  FailureOr<Value> re = sum(product(x.re, cosines), x.im, sinesRe);
  if (failed(re))
    return failure();
  if (kind == Transform::inverseReal)
    return Complex{*re, Value()};
  FailureOr<Value> im = x.im ? sum(product(x.im, cosines), x.re, sinesIm)
                             : product(x.re, sinesIm);
  if (failed(im))
    return failure();
  return Complex{*re, *im};
}

/// The parts of `x` ([..., 1] real or [..., 2] complex), without that dim.
FailureOr<Complex> splitComplex(NodeBinder &b, Value x) {
  RankedTensorType type = tensorType(x);
  int64_t last = type.getRank() - 1;
  int64_t parts = type.getDimSize(last);
  if (parts != 1 && parts != 2)
    return b.emitError() << "the last dim of input 0 is " << parts
                         << ", expected 1 (real) or 2 (complex)";
  Complex c;
  for (int64_t i = 0; i < parts; ++i) {
    FailureOr<Value> part = x;
    if (parts != 1)
      part = b.make<kiln::SliceOp>(x, ArrayRef<int64_t>{i}, ArrayRef<int64_t>{i + 1},
                                   ArrayRef<int64_t>{last}, ArrayRef<int64_t>{1});
    if (failed(part))
      return failure();
    part = b.make<kiln::SqueezeOp>(*part, ArrayRef<int64_t>{last});
    if (failed(part))
      return failure();
    (i == 0 ? c.re : c.im) = *part;
  }
  return c;
}

/// [..., 2] (or [..., 1] when real) from the parts.
FailureOr<Value> joinComplex(NodeBinder &b, Complex c) {
  int64_t rank = tensorType(c.re).getRank();
  FailureOr<Value> re = b.make<kiln::UnsqueezeOp>(c.re, ArrayRef<int64_t>{rank});
  if (failed(re) || !c.im)
    return re;
  FailureOr<Value> im = b.make<kiln::UnsqueezeOp>(c.im, ArrayRef<int64_t>{rank});
  if (failed(im))
    return failure();
  return b.make<kiln::ConcatOp>(ValueRange{*re, *im}, static_cast<uint64_t>(rank));
}

/// DFT (17: `axis` attribute, 1 by default; 20: `axis` input, -2 by
/// default): the signal axis moved last, transformed, moved back.
LogicalResult dft(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<int64_t> inverse = b.intAttr("inverse", 0), onesided = b.intAttr("onesided", 0);
  if (failed(x) || failed(inverse) || failed(onesided) ||
      failed(b.checkRange("attribute 'inverse'", *inverse, 0, 1)) ||
      failed(b.checkRange("attribute 'onesided'", *onesided, 0, 1)))
    return failure();
  RankedTensorType type = tensorType(*x);
  if (!type.hasStaticShape())
    return b.unsupported("DFT with dynamic input shapes");
  int64_t rank = type.getRank();
  if (rank < 2)
    return b.emitError() << "input 0 has rank " << rank << ", expected at least 2";
  int64_t axis = 1;
  if (b.opset() >= 20) {
    axis = -2;
    if (b.hasInput(2)) {
      FailureOr<SmallVector<int64_t>> given = b.requireConstantInts(2, "'axis'");
      if (failed(given))
        return failure();
      if (given->size() != 1)
        return b.emitError() << "input 'axis' must be one value";
      axis = given->front();
    }
  } else {
    FailureOr<int64_t> attr = b.intAttr("axis", 1);
    if (failed(attr))
      return failure();
    axis = *attr;
  }
  FailureOr<int64_t> normalized = kiln::normalizeAxis(b.loc(), "axis", axis, rank);
  if (failed(normalized))
    return failure();
  if (*normalized == rank - 1)
    return b.emitError() << "'axis' is the last dim, which holds the real and "
                            "imaginary parts";
  int64_t n = type.getDimSize(*normalized);
  int64_t length = *inverse && *onesided ? 2 * (n - 1) : n;
  if (b.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> given = b.requireConstantInts(1, "'dft_length'");
    if (failed(given))
      return failure();
    if (given->size() != 1)
      return b.emitError() << "input 'dft_length' must be one value";
    length = given->front();
  }
  if (length < 1)
    return b.emitError() << "the DFT length is " << length << ", expected at least 1";
  Transform kind = !*inverse ? Transform::forward
                             : (*onesided ? Transform::inverseReal : Transform::inverse);
  int64_t outLen = kind == Transform::forward && *onesided ? length / 2 + 1 : length;

  FailureOr<Complex> parts = splitComplex(b, *x);
  if (failed(parts))
    return failure();
  // The signal axis last, and back.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != *normalized)
      perm.push_back(d);
  perm.push_back(*normalized);
  SmallVector<int64_t> back(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    back[p] = i;
  auto permute = [&](Value v, ArrayRef<int64_t> order) -> FailureOr<Value> {
    if (!v)
      return v;
    return b.make<kiln::TransposeOp>(v, order);
  };
  FailureOr<Value> re = permute(parts->re, perm), im = permute(parts->im, perm);
  if (failed(re) || failed(im))
    return failure();
  FailureOr<Complex> y = dftLastDim(b, Complex{*re, *im}, length, outLen, kind);
  if (failed(y))
    return failure();
  re = permute(y->re, back);
  im = permute(y->im, back);
  if (failed(re) || failed(im))
    return failure();
  FailureOr<Value> out = joinComplex(b, Complex{*re, *im});
  return failed(out) ? failure() : b.setOutput(0, *out);
}

//===----------------------------------------------------------------------===//
// STFT
//===----------------------------------------------------------------------===//

/// STFT (17): frames gathered by constant indices, times the window, a DFT
/// along each frame.
LogicalResult stft(NodeBinder &b) {
  FailureOr<Value> signal = b.input(0);
  FailureOr<SmallVector<int64_t>> step = b.requireConstantInts(1, "'frame_step'");
  Value windowValues = b.optionalInput(2);
  FailureOr<int64_t> onesided = b.intAttr("onesided", 1);
  if (failed(signal) || failed(step) || failed(onesided) ||
      failed(b.checkRange("attribute 'onesided'", *onesided, 0, 1)))
    return failure();
  RankedTensorType type = tensorType(*signal);
  if (!type.hasStaticShape() || (windowValues && !tensorType(windowValues).hasStaticShape()))
    return b.unsupported("STFT with dynamic input shapes");
  if (type.getRank() != 3)
    return b.emitError() << "input 0 has rank " << type.getRank()
                         << ", expected 3 ([batch, length, 1 or 2])";
  if (step->size() != 1 || step->front() < 1)
    return b.emitError() << "input 'frame_step' must be one value >= 1";
  int64_t total = type.getDimSize(1);
  int64_t frameLength = total;
  if (windowValues) {
    if (tensorType(windowValues).getRank() != 1)
      return b.emitError() << "input 'window' must be 1-D";
    frameLength = tensorType(windowValues).getDimSize(0);
  }
  if (b.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> given = b.requireConstantInts(3, "'frame_length'");
    if (failed(given))
      return failure();
    if (given->size() != 1 || (windowValues && given->front() != frameLength))
      return b.emitError() << "input 'frame_length' must be one value equal to the "
                              "window's length";
    frameLength = given->front();
  }
  if (frameLength < 1 || frameLength > total)
    return b.emitError() << "the frame length is " << frameLength
                         << ", expected a value in [1, " << total << "]";
  int64_t frames = 1 + (total - frameLength) / step->front();
  SmallVector<int64_t> positions;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t j = 0; j < frameLength; ++j)
      positions.push_back(f * step->front() + j);
  auto indexType = RankedTensorType::get({frames, frameLength}, b.builder().getI64Type());
  Value indices = b.constant(DenseElementsAttr::get(indexType, ArrayRef(positions)));
  FailureOr<Complex> parts = splitComplex(b, *signal);
  if (failed(parts))
    return failure();
  auto framesOf = [&](Value v) -> FailureOr<Value> {
    if (!v)
      return v;
    FailureOr<Value> framed = b.make<kiln::GatherOp>(v, indices, static_cast<uint64_t>(1));
    if (failed(framed) || !windowValues)
      return framed;
    return b.make<kiln::MulOp>(*framed, windowValues);
  };
  FailureOr<Value> re = framesOf(parts->re), im = framesOf(parts->im);
  if (failed(re) || failed(im))
    return failure();
  int64_t outLen = *onesided ? frameLength / 2 + 1 : frameLength;
  FailureOr<Complex> y =
      dftLastDim(b, Complex{*re, *im}, frameLength, outLen, Transform::forward);
  if (failed(y))
    return failure();
  FailureOr<Value> out = joinComplex(b, *y);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

} // namespace

void registerSignalHandlers(HandlerRegistry &r) {
  r.add("HannWindow", 17, window<Window::hann>);
  r.add("HammingWindow", 17, window<Window::hamming>);
  r.add("BlackmanWindow", 17, window<Window::blackman>);
  r.add("DFT", 17, dft);
  r.add("STFT", 17, stft);
}

} // namespace kiln::onnx_import
