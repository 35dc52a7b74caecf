//===- Decoder.cpp - kiln_decoder: token-by-token runs over a KV cache it owns ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The cache is two buffers per past/present pair. A run hands the model the
// past as a dense [batch, heads, length, head] view of one buffer and has it
// write the present ([batch, heads, length + count, head]) into the other;
// flipping `current` afterwards makes that present the next past. So the
// runtime copies no cache bytes and allocates nothing per token, and a run
// that fails leaves the past untouched. The model still rewrites the whole
// present each run (its concat of past and new keys). A model compiled with
// kilnc --kv-cache-length instead updates one fixed-length buffer per pair
// in place (its presents alias their pasts): the run writes only the new
// rows, `current` never flips, and a failed run may have written rows
// [length, length + count), which the next run writes again; rows below
// `length` are never touched. A static decode step (kilnc --decode-step)
// is such a model for one token per sequence and a fixed batch: every run
// hands it the whole cache and a mask of the cache's length whose ones mark
// the filled rows, the new row goes where position_ids says, and a prompt
// goes through it one token per run (nothing in a run depends on the fill,
// so a CUDA session replays the recorded step). Its caches start zeroed, so
// the masked rows never hold a NaN. On a CUDA session
// both buffers are device memory, handed to the run in place: the cache
// never crosses to the host (only ids, positions, mask and logits do). A
// model compiled with kilnc --greedy-ids has the output greedy_ids: the
// greedy pick reads it, and on a CUDA session the logits then stay on the
// device too, copied back only when kiln_decoder_get_logits asks for them.
//
//===----------------------------------------------------------------------===//

#include "DecoderSignature.h"
#include "Dtype.h"
#include "SessionRun.h"
#include "Status.h"
#include "Validation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

namespace kiln::rt {
namespace {

constexpr int64_t kDefaultMaxTokens = 1024;
constexpr size_t kAlignment = 64;

/// A 64-byte aligned block that only grows.
class AlignedBuffer {
public:
  AlignedBuffer() = default;
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  ~AlignedBuffer() { std::free(data_); }

  /// False if `bytes` cannot be allocated (the old block is then kept).
  bool reserve(size_t bytes) {
    if (data_ && bytes <= bytes_)
      return true;
    size_t rounded = (std::max<size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
    if (rounded < bytes)
      return false;
    void *block = std::aligned_alloc(kAlignment, rounded);
    if (!block)
      return false;
    std::free(data_);
    data_ = block;
    bytes_ = rounded;
    return true;
  }
  void *data() const { return data_; }
  size_t bytes() const { return bytes_; }

private:
  void *data_ = nullptr;
  size_t bytes_ = 0;
};

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float value;
  if (exponent == 0)
    value = std::ldexp(static_cast<float>(mantissa), -24);
  else if (exponent == 31)
    value = mantissa ? std::numeric_limits<float>::quiet_NaN()
                     : std::numeric_limits<float>::infinity();
  else
    value = std::ldexp(static_cast<float>(mantissa | 0x400), static_cast<int>(exponent) - 25);
  return sign ? -value : value;
}

float bf16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

float loadFloat(const void *data, int32_t dtype, size_t index) {
  switch (dtype) {
  case KILN_DTYPE_F16:
    return halfToFloat(static_cast<const uint16_t *>(data)[index]);
  case KILN_DTYPE_BF16:
    return bf16ToFloat(static_cast<const uint16_t *>(data)[index]);
  default:
    return static_cast<const float *>(data)[index];
  }
}

/// Stores `value` as element `index` of an i64, i32, f32 or bool tensor.
void storeInteger(void *data, int32_t dtype, size_t index, int64_t value) {
  switch (dtype) {
  case KILN_DTYPE_I32:
    static_cast<int32_t *>(data)[index] = static_cast<int32_t>(value);
    break;
  case KILN_DTYPE_F32:
    static_cast<float *>(data)[index] = static_cast<float>(value);
    break;
  case KILN_DTYPE_BOOL:
    static_cast<unsigned char *>(data)[index] = value != 0;
    break;
  default:
    static_cast<int64_t *>(data)[index] = value;
  }
}

/// One run's input tensors, with storage for their dims.
struct RunInputs {
  std::vector<kiln_tensor> tensors;
  std::vector<std::array<int64_t, 4>> dims;
};

} // namespace
} // namespace kiln::rt

struct kiln_decoder {
  kiln_session *session = nullptr;
  const kiln_model *model = nullptr;
  kiln::rt::DecoderSignature signature;
  int64_t maxTokens = 0;
  int64_t maxBatch = 0;
  int64_t batch = 0;  // 0 while the cache is empty
  int64_t length = 0; // tokens per sequence in the cache
  int current = 0;    // the half of each cache that holds the past
  /// One half of a cache: host memory, or device memory on a CUDA session.
  struct Half {
    kiln::rt::AlignedBuffer host;
    void *device = nullptr;
    size_t deviceBytes = 0;
    void *data() const { return device ? device : host.data(); }
    size_t bytes() const { return device ? deviceBytes : host.bytes(); }
  };
  struct Cache {
    Half halves[2];
  };
  std::vector<Cache> caches; // parallel to signature.caches
  std::vector<kiln::rt::AlignedBuffer> outputs; // other outputs (logits, ...)
  kiln::rt::AlignedBuffer ids, mask, positions;
  std::array<int64_t, 3> logitsDims{};
  bool hasLogits = false;
  std::vector<const void *> onDevice; // the device halves, for runPlanned
  /// With greedy_ids on a CUDA session: the logits in device memory, and
  /// their host copy, made when kiln_decoder_get_logits first asks.
  void *deviceLogits = nullptr;
  size_t deviceLogitsBytes = 0;
  mutable kiln::rt::AlignedBuffer copiedLogits;
  mutable bool logitsCopied = false;

  ~kiln_decoder() {
    for (Cache &cache : caches)
      for (Half &half : cache.halves)
        if (half.device)
          kiln::rt::sessionDeviceFree(*session, half.device);
    if (deviceLogits)
      kiln::rt::sessionDeviceFree(*session, deviceLogits);
  }
  bool logitsOnDevice() const {
    return signature.greedyIds && kiln::rt::sessionOnDevice(*session);
  }
};

namespace kiln::rt {
namespace {

kiln_status *invalidArgument(std::string message) {
  return makeStatus(KILN_STATUS_INVALID_ARGUMENT, std::move(message));
}

uint64_t bytesPerToken(const DecoderSignature &signature) {
  uint64_t bytes = 0;
  for (const CachePair &cache : signature.caches)
    bytes += static_cast<uint64_t>(cache.heads * cache.headSize) * cache.elementBytes;
  return bytes;
}

/// The halves of cache `i` the decoder allocates: both, or the first only
/// for a cache updated in place.
struct HalfRange {
  kiln_decoder::Half *first, *last;
  kiln_decoder::Half *begin() const { return first; }
  kiln_decoder::Half *end() const { return last; }
};
HalfRange allocatedHalves(kiln_decoder &decoder, size_t i) {
  kiln_decoder::Half *halves = decoder.caches[i].halves;
  return {halves, halves + (decoder.signature.caches[i].inPlace ? 1 : 2)};
}

kiln_status *allocateCaches(kiln_decoder &decoder) {
  decoder.caches = std::vector<kiln_decoder::Cache>(decoder.signature.caches.size());
  bool zeroed = decoder.signature.stepBatch > 0;
  std::vector<unsigned char> zeros; // a device cache's initial bytes, grown as needed
  for (size_t i = 0; i < decoder.caches.size(); ++i) {
    const CachePair &pair = decoder.signature.caches[i];
    int64_t rows = pair.inPlace ? pair.cacheLength : decoder.maxTokens;
    int64_t dims[] = {decoder.maxBatch, pair.heads, rows, pair.headSize};
    size_t bytes = 0;
    if (!checkedByteSize(pair.elementBytes, dims, 4, bytes))
      return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                        cat("a cache of ", formatDims(dims, 4), " overflows size_t"));
    // In place: one buffer, past and present alike.
    for (kiln_decoder::Half &half : allocatedHalves(decoder, i)) {
      std::string error;
      bool ok = true;
      if (sessionOnDevice(*decoder.session)) {
        half.device = sessionDeviceAlloc(*decoder.session, bytes, error);
        half.deviceBytes = bytes;
        ok = half.device != nullptr;
        if (ok)
          decoder.onDevice.push_back(half.device);
        if (ok && zeroed) {
          if (zeros.size() < bytes)
            zeros.resize(bytes);
          ok = sessionDeviceCopyToDevice(*decoder.session, half.device, zeros.data(), bytes,
                                         error);
        }
      } else {
        ok = half.host.reserve(bytes);
        if (ok && zeroed)
          std::memset(half.host.data(), 0, bytes);
      }
      if (!ok)
        return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                          cat("cannot allocate ", bytes, " bytes for the cache of '",
                              decoder.model->inputs[pair.input].name, "' ",
                              formatDims(dims, 4), error.empty() ? "" : ": ", error));
    }
  }
  decoder.outputs = std::vector<AlignedBuffer>(decoder.model->outputs.size());
  return nullptr;
}

kiln_status *createDecoder(kiln_session *session, const kiln_decoder_options *given,
                           kiln_decoder **out_decoder) {
  if (!out_decoder)
    return invalidArgument("out_decoder is NULL");
  *out_decoder = nullptr;
  if (!session)
    return invalidArgument("session is NULL");
  kiln_decoder_options options;
  kiln_decoder_options_init(&options);
  if (given)
    options = *given;
  constexpr int64_t kLimit = int64_t(1) << 31;
  if (options.max_tokens < 1 || options.max_tokens > kLimit)
    return invalidArgument(cat("max_tokens is ", options.max_tokens,
                               ", accepted range is [1, ", kLimit, "]"));
  if (options.max_batch < 1 || options.max_batch > kLimit)
    return invalidArgument(cat("max_batch is ", options.max_batch,
                               ", accepted range is [1, ", kLimit, "]"));
  auto decoder = std::make_unique<kiln_decoder>();
  decoder->session = session;
  decoder->model = &sessionModel(*session);
  decoder->maxTokens = options.max_tokens;
  decoder->maxBatch = options.max_batch;
  if (kiln_status *status = recognizeDecoder(*decoder->model, decoder->signature))
    return status;
  // A static decode step holds exactly its compiled batch.
  if (decoder->signature.stepBatch)
    decoder->maxBatch = decoder->signature.stepBatch;
  if (int64_t length = decoder->signature.inPlaceLength; length && decoder->maxTokens > length)
    return invalidArgument(cat("max_tokens is ", decoder->maxTokens, ", but the model's cache "
                               "holds ", length, " tokens per sequence (kilnc --kv-cache-length)"));
  if (kiln_status *status = allocateCaches(*decoder))
    return status;
  *out_decoder = decoder.release();
  return nullptr;
}

/// Everything a prefill or step is refused for, before any state changes.
kiln_status *checkTokens(const kiln_decoder &decoder, const int64_t *ids, int64_t batch,
                         int64_t count) {
  if (batch < 1 || batch > decoder.maxBatch)
    return invalidArgument(cat("batch is ", batch, ", accepted range is [1, ",
                               decoder.maxBatch, "] (max_batch)"));
  if (int64_t step = decoder.signature.stepBatch; step && batch != step)
    return invalidArgument(cat("batch is ", batch, ", but the model is a decode step "
                               "compiled for batch ", step, " (kilnc --decode-step)"));
  if (decoder.length > 0 && batch != decoder.batch)
    return invalidArgument(cat("batch is ", batch, " but the cache holds ", decoder.batch,
                               " sequences; reset the decoder to change the batch"));
  if (count < 1)
    return invalidArgument(cat("count is ", count, ", expected at least 1 token"));
  if (count > decoder.maxTokens - decoder.length)
    return invalidArgument(cat(count, " tokens do not fit the cache: ", decoder.length,
                               " cached + ", count, " > max_tokens ", decoder.maxTokens,
                               "; reset the decoder or create it with a larger max_tokens"));
  if (!ids)
    return invalidArgument("ids is NULL");
  int64_t vocab = decoder.signature.vocabSize;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < count; ++i) {
      int64_t id = ids[b * count + i];
      if (id < 0 || id >= vocab)
        return invalidArgument(cat("input id ", id, " at [", b, ", ", i,
                                   "] is outside the vocabulary [0, ", vocab, ")"));
    }
  return nullptr;
}

/// A dense tensor of `model` input `index` with `rank` dims over `data`.
void addInput(const kiln_decoder &decoder, RunInputs &inputs, size_t index,
              std::array<int64_t, 4> dims, int32_t rank, void *data) {
  const TensorDesc &desc = decoder.model->inputs[index];
  size_t bytes = 0;
  checkedByteSize(kiln_dtype_size(desc.dtype), dims.data(), rank, bytes);
  inputs.dims.push_back(dims);
  inputs.tensors.push_back(
      {desc.name.c_str(), desc.dtype, rank, nullptr, data, bytes});
}

/// Fills the token, mask and position inputs and views the past of each cache.
kiln_status *buildInputs(kiln_decoder &decoder, const int64_t *ids, int64_t batch,
                         int64_t count, RunInputs &inputs) {
  const DecoderSignature &sig = decoder.signature;
  const auto &modelInputs = decoder.model->inputs;
  int64_t total = decoder.length + count;
  // A decode step's mask covers the whole cache: ones for the filled rows.
  int64_t columns = sig.stepBatch ? sig.inPlaceLength : total;
  size_t tokens = static_cast<size_t>(batch * count), masked = static_cast<size_t>(batch * columns);
  if (!decoder.ids.reserve(tokens * 8) || !decoder.positions.reserve(tokens * 8) ||
      !decoder.mask.reserve(masked * 8))
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "cannot allocate the decoder's inputs");
  for (size_t i = 0; i < tokens; ++i) {
    storeInteger(decoder.ids.data(), modelInputs[sig.inputIds].dtype, i, ids[i]);
    if (sig.positionIds)
      storeInteger(decoder.positions.data(), modelInputs[*sig.positionIds].dtype, i,
                   decoder.length + static_cast<int64_t>(i) % count);
  }
  if (sig.attentionMask)
    for (size_t i = 0; i < masked; ++i)
      storeInteger(decoder.mask.data(), modelInputs[*sig.attentionMask].dtype, i,
                   static_cast<int64_t>(i % static_cast<size_t>(columns)) < total);
  inputs.dims.reserve(modelInputs.size());
  addInput(decoder, inputs, sig.inputIds, {batch, count}, 2, decoder.ids.data());
  if (sig.positionIds)
    addInput(decoder, inputs, *sig.positionIds, {batch, count}, 2, decoder.positions.data());
  if (sig.attentionMask)
    addInput(decoder, inputs, *sig.attentionMask, {batch, columns}, 2, decoder.mask.data());
  for (size_t i = 0; i < sig.caches.size(); ++i) {
    const CachePair &pair = sig.caches[i];
    // In place: the whole fixed-length buffer, whatever its fill.
    int64_t rows = pair.inPlace ? pair.cacheLength : decoder.length;
    addInput(decoder, inputs, pair.input, {batch, pair.heads, rows, pair.headSize}, 4,
             decoder.caches[i].halves[pair.inPlace ? 0 : decoder.current].data());
  }
  for (size_t i = 0; i < inputs.tensors.size(); ++i)
    inputs.tensors[i].dims = inputs.dims[i].data();
  return nullptr;
}

/// The dims planRun resolved for output `index`.
const int64_t *plannedOutputDims(const kiln_model &model, const RunPlan &plan, size_t index) {
  size_t offset = plan.firstOutputDim;
  for (size_t i = 0; i < index; ++i)
    offset += static_cast<size_t>(model.outputs[i].rank());
  return plan.dims.data() + offset;
}

/// Points every output at its buffer: presents at the other half of their
/// cache, after checking the model computes the shape the cache expects.
kiln_status *bindOutputs(kiln_decoder &decoder, const RunPlan &plan, int64_t batch,
                         int64_t count, std::vector<void *> &outputData) {
  const kiln_model &model = *decoder.model;
  const DecoderSignature &sig = decoder.signature;
  outputData.assign(model.outputs.size(), nullptr);
  for (size_t i = 0; i < sig.caches.size(); ++i) {
    const CachePair &pair = sig.caches[i];
    const int64_t *dims = plannedOutputDims(model, plan, pair.output);
    int64_t rows = pair.inPlace ? pair.cacheLength : decoder.length + count;
    int64_t expected[] = {batch, pair.heads, rows, pair.headSize};
    if (!std::equal(expected, expected + 4, dims))
      return makeStatus(KILN_STATUS_INVALID_MODEL,
                        cat("output '", model.outputs[pair.output].name, "' is ",
                            formatDims(dims, 4), " for a past of ", decoder.length,
                            " and ", count, " new tokens; the cache expects ",
                            formatDims(expected, 4)));
    outputData[pair.output] =
        decoder.caches[i].halves[pair.inPlace ? 0 : 1 - decoder.current].data();
  }
  const int64_t *logits = plannedOutputDims(model, plan, sig.logits);
  if (logits[0] != batch || logits[1] < 1)
    return makeStatus(KILN_STATUS_INVALID_MODEL,
                      cat("output 'logits' is ", formatDims(logits, 3), " for batch ", batch,
                          "; expected [", batch, ", >= 1, ", sig.vocabSize, "]"));
  if (decoder.logitsOnDevice()) {
    size_t bytes = plan.outputBytes[sig.logits];
    if (bytes > decoder.deviceLogitsBytes) {
      if (decoder.deviceLogits)
        sessionDeviceFree(*decoder.session, decoder.deviceLogits);
      decoder.deviceLogitsBytes = 0;
      std::string error;
      decoder.deviceLogits = sessionDeviceAlloc(*decoder.session, bytes, error);
      if (!decoder.deviceLogits)
        return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                          cat("cannot allocate ", bytes, " bytes for the logits: ", error));
      decoder.deviceLogitsBytes = bytes;
    }
    outputData[sig.logits] = decoder.deviceLogits;
  }
  for (size_t i = 0; i < outputData.size(); ++i) {
    if (outputData[i])
      continue;
    if (!decoder.outputs[i].reserve(plan.outputBytes[i]))
      return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                        cat("cannot allocate ", plan.outputBytes[i], " bytes for output '",
                            model.outputs[i].name, "'"));
    outputData[i] = decoder.outputs[i].data();
  }
  return nullptr;
}

kiln_status *runBlock(kiln_decoder *decoder, const int64_t *ids, int64_t batch,
                      int64_t count);

kiln_status *runTokens(kiln_decoder *decoder, const int64_t *ids, int64_t batch,
                       int64_t count) {
  if (!decoder)
    return invalidArgument("decoder is NULL");
  if (kiln_status *status = checkTokens(*decoder, ids, batch, count))
    return status;
  if (!decoder->signature.stepBatch || count == 1)
    return runBlock(decoder, ids, batch, count);
  // A decode step takes one token per sequence per run: column by column.
  // A failure forgets the columns already run (their rows are rewritten).
  int64_t length = decoder->length;
  std::vector<int64_t> column(static_cast<size_t>(batch));
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t b = 0; b < batch; ++b)
      column[static_cast<size_t>(b)] = ids[b * count + i];
    if (kiln_status *status = runBlock(decoder, column.data(), batch, 1)) {
      decoder->length = length;
      decoder->hasLogits = false;
      return status;
    }
  }
  return nullptr;
}

/// One run of `count` tokens per sequence, after checkTokens.
kiln_status *runBlock(kiln_decoder *decoder, const int64_t *ids, int64_t batch,
                      int64_t count) {
  RunInputs inputs;
  if (kiln_status *status = buildInputs(*decoder, ids, batch, count, inputs))
    return status;
  const kiln_model &model = *decoder->model;
  RunPlan plan;
  if (kiln_status *status = planRun(model, sessionMaxBytes(*decoder->session),
                                    inputs.tensors.data(), inputs.tensors.size(),
                                    model.outputs.size(), plan))
    return status;
  std::vector<void *> outputData;
  if (kiln_status *status = bindOutputs(*decoder, plan, batch, count, outputData))
    return status;
  // From here the logits buffer may be overwritten; the past is not.
  decoder->hasLogits = false;
  decoder->logitsCopied = false;
  std::vector<const void *> onDevice = decoder->onDevice;
  if (decoder->logitsOnDevice())
    onDevice.push_back(decoder->deviceLogits);
  if (kiln_status *status =
          runPlanned(*decoder->session, plan, outputData.data(), nullptr, onDevice))
    return status;
  const int64_t *logits = plannedOutputDims(model, plan, decoder->signature.logits);
  std::copy(logits, logits + 3, decoder->logitsDims.begin());
  decoder->hasLogits = true;
  if (!decoder->signature.inPlaceLength)
    decoder->current = 1 - decoder->current;
  decoder->length += count;
  decoder->batch = batch;
  return nullptr;
}

kiln_status *checkLogits(const kiln_decoder *decoder) {
  if (!decoder)
    return invalidArgument("decoder is NULL");
  if (!decoder->hasLogits)
    return invalidArgument("the decoder has no logits: run kiln_decoder_prefill or "
                           "kiln_decoder_step first (a reset or a failed run forgets them)");
  return nullptr;
}

kiln_status *greedyIds(const kiln_decoder *decoder, int64_t *out_ids, int64_t batch) {
  if (kiln_status *status = checkLogits(decoder))
    return status;
  if (!out_ids)
    return invalidArgument("out_ids is NULL");
  int64_t rows = decoder->logitsDims[0], positions = decoder->logitsDims[1],
          vocab = decoder->logitsDims[2];
  if (batch != rows)
    return invalidArgument(cat("batch is ", batch, " but the logits hold ", rows,
                               " sequences"));
  if (decoder->signature.greedyIds) {
    // The model's ArgMax: [rows, positions] ids, the last position's wanted.
    const auto *ids =
        static_cast<const int64_t *>(decoder->outputs[*decoder->signature.greedyIds].data());
    for (int64_t b = 0; b < rows; ++b) {
      int64_t id = ids[b * positions + positions - 1];
      if (id < 0 || id >= vocab)
        return makeStatus(KILN_STATUS_INTERNAL, cat("output 'greedy_ids' of sequence ", b,
                                                    " is ", id, ", outside [0, ", vocab, ")"));
      out_ids[b] = id;
    }
    return nullptr;
  }
  const TensorDesc &desc = decoder->model->outputs[decoder->signature.logits];
  const void *data = decoder->outputs[decoder->signature.logits].data();
  for (int64_t b = 0; b < rows; ++b) {
    size_t row = static_cast<size_t>((b * positions + positions - 1) * vocab);
    int64_t best = -1;
    float bestValue = 0;
    for (int64_t v = 0; v < vocab; ++v) {
      float value = loadFloat(data, desc.dtype, row + static_cast<size_t>(v));
      if (!std::isnan(value) && (best < 0 || value > bestValue)) {
        best = v;
        bestValue = value;
      }
    }
    if (best < 0)
      return makeStatus(KILN_STATUS_INTERNAL,
                        cat("the logits of sequence ", b, " are all NaN"));
    out_ids[b] = best;
  }
  return nullptr;
}

} // namespace
} // namespace kiln::rt

extern "C" {

void kiln_decoder_options_init(kiln_decoder_options *options) {
  if (!options)
    return;
  options->max_tokens = kiln::rt::kDefaultMaxTokens;
  options->max_batch = 1;
}

kiln_status *kiln_decoder_create(kiln_session *session, const kiln_decoder_options *options,
                                 kiln_decoder **out_decoder) {
  return kiln::rt::guard(
      [&] { return kiln::rt::createDecoder(session, options, out_decoder); });
}

void kiln_decoder_destroy(kiln_decoder *decoder) { delete decoder; }

kiln_status *kiln_decoder_prefill(kiln_decoder *decoder, const int64_t *ids, int64_t batch,
                                  int64_t count) {
  return kiln::rt::guard([&] { return kiln::rt::runTokens(decoder, ids, batch, count); });
}

kiln_status *kiln_decoder_step(kiln_decoder *decoder, const int64_t *ids, int64_t batch) {
  return kiln::rt::guard([&]() -> kiln_status * {
    if (decoder && decoder->length == 0)
      return kiln::rt::invalidArgument("the cache is empty: run kiln_decoder_prefill "
                                       "with the prompt before the first step");
    return kiln::rt::runTokens(decoder, ids, batch, 1);
  });
}

kiln_status *kiln_decoder_reset(kiln_decoder *decoder) {
  return kiln::rt::guard([&]() -> kiln_status * {
    if (!decoder)
      return kiln::rt::invalidArgument("decoder is NULL");
    decoder->batch = 0;
    decoder->length = 0;
    decoder->hasLogits = false;
    return nullptr;
  });
}

kiln_status *kiln_decoder_get_logits(const kiln_decoder *decoder, kiln_tensor *out_logits) {
  return kiln::rt::guard([&]() -> kiln_status * {
    if (kiln_status *status = kiln::rt::checkLogits(decoder))
      return status;
    if (!out_logits)
      return kiln::rt::invalidArgument("out_logits is NULL");
    const kiln::rt::TensorDesc &desc = decoder->model->outputs[decoder->signature.logits];
    size_t bytes = 0;
    kiln::rt::checkedByteSize(kiln_dtype_size(desc.dtype), decoder->logitsDims.data(), 3,
                              bytes);
    const void *data = decoder->outputs[decoder->signature.logits].data();
    if (decoder->logitsOnDevice()) {
      kiln::rt::AlignedBuffer &host = decoder->copiedLogits;
      std::string error;
      if (!decoder->logitsCopied && !host.reserve(bytes))
        return kiln::rt::makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                                    kiln::rt::cat("cannot allocate ", bytes,
                                                  " bytes for the logits"));
      if (!decoder->logitsCopied &&
          !kiln::rt::sessionDeviceCopyToHost(*decoder->session, host.data(),
                                             decoder->deviceLogits, bytes, error))
        return kiln::rt::makeStatus(KILN_STATUS_INTERNAL, error);
      decoder->logitsCopied = true;
      data = host.data();
    }
    *out_logits = {desc.name.c_str(), desc.dtype, 3, decoder->logitsDims.data(),
                   const_cast<void *>(data), bytes};
    return nullptr;
  });
}

kiln_status *kiln_decoder_greedy_ids(const kiln_decoder *decoder, int64_t *out_ids,
                                     int64_t batch) {
  return kiln::rt::guard([&] { return kiln::rt::greedyIds(decoder, out_ids, batch); });
}

kiln_status *kiln_decoder_get_info(const kiln_decoder *decoder, kiln_decoder_info *out_info) {
  return kiln::rt::guard([&]() -> kiln_status * {
    if (!decoder || !out_info)
      return kiln::rt::invalidArgument(!decoder ? "decoder is NULL" : "out_info is NULL");
    kiln_decoder_info info{};
    info.num_layers = decoder->signature.numLayers;
    info.num_caches = static_cast<int64_t>(decoder->signature.caches.size());
    info.vocab_size = decoder->signature.vocabSize;
    info.max_tokens = decoder->maxTokens;
    info.max_batch = decoder->maxBatch;
    info.batch = decoder->batch;
    info.length = decoder->length;
    for (const kiln_decoder::Cache &cache : decoder->caches)
      info.cache_bytes += cache.halves[0].bytes() + cache.halves[1].bytes();
    info.cache_bytes_per_token = kiln::rt::bytesPerToken(decoder->signature);
    *out_info = info;
    return nullptr;
  });
}

} // extern "C"
