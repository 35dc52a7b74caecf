//===- DeviceTrace.cpp - Dispatch spans of a traced CUDA run --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "cuda/DeviceTrace.h"

#include "Status.h"

namespace kiln::rt::cuda {

EventPool::~EventPool() {
  for (CUevent event : free)
    driver.eventDestroy(event);
}

CUevent EventPool::take(std::string &error) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!free.empty()) {
      CUevent event = free.back();
      free.pop_back();
      return event;
    }
  }
  CUevent event = nullptr;
  if (CUresult r = driver.eventCreate(&event, /*CU_EVENT_DEFAULT*/ 0); r != kSuccess) {
    error = cat("cuEventCreate failed: ", describe(driver, r));
    return nullptr;
  }
  return event;
}

void EventPool::give(CUevent event) {
  std::lock_guard<std::mutex> lock(mutex);
  free.push_back(event);
}

DeviceTraceRecorder::DeviceTraceRecorder(const Driver &driver, CUstream stream,
                                         EventPool &events, RunRecorder &recorder)
    : driver(driver), stream(stream), events(events), recorder(recorder) {}

DeviceTraceRecorder::~DeviceTraceRecorder() {
  for (CUevent event : taken)
    events.give(event);
}

CUevent DeviceTraceRecorder::record(const char *what, int32_t dispatch) {
  if (!error.empty())
    return nullptr;
  std::string failure;
  CUevent event = events.take(failure);
  if (!event) {
    error = cat("tracing dispatch ", dispatch, ": ", failure);
    return nullptr;
  }
  taken.push_back(event);
  if (CUresult r = driver.eventRecord(event, stream); r != kSuccess) {
    error = cat("tracing dispatch ", dispatch, ": cuEventRecord at its ", what,
                " failed: ", describe(driver, r));
    return nullptr;
  }
  return event;
}

void DeviceTraceRecorder::start(kiln_abi_host &host) {
  try {
    // Room for every hook of a run without allocating in most of them.
    taken.reserve(64);
    startEvent = record("start", -1);
  } catch (...) {
    error = "tracing: out of host memory";
  }
  startNs = recorder.nowNs();
  host.trace = this;
  host.trace_begin = &DeviceTraceRecorder::begin;
  host.trace_end = &DeviceTraceRecorder::end;
}

void DeviceTraceRecorder::begin(void *self, int32_t dispatch) noexcept {
  auto *trace = static_cast<DeviceTraceRecorder *>(self);
  try {
    if (CUevent event = trace->record("begin", dispatch))
      trace->open.emplace_back(dispatch, event);
  } catch (...) {
    trace->error = "tracing: out of host memory";
  }
}

void DeviceTraceRecorder::end(void *self, int32_t dispatch) noexcept {
  auto *trace = static_cast<DeviceTraceRecorder *>(self);
  if (trace->open.empty() || trace->open.back().first != dispatch)
    return; // unbalanced hooks: ignore rather than invent a time
  CUevent begin = trace->open.back().second;
  trace->open.pop_back();
  try {
    if (CUevent event = trace->record("end", dispatch))
      trace->spans.push_back({dispatch, begin, event});
  } catch (...) {
    trace->error = "tracing: out of host memory";
  }
}

bool DeviceTraceRecorder::finish(std::string &failure) {
  if (!error.empty()) {
    failure = error;
    return false;
  }
  auto sinceStart = [&](CUevent event, int32_t dispatch, uint64_t &ns) {
    float ms = 0;
    if (CUresult r = driver.eventElapsedTime(&ms, startEvent, event); r != kSuccess) {
      failure = cat("tracing dispatch ", dispatch, ": cuEventElapsedTime failed: ",
                    describe(driver, r));
      return false;
    }
    ns = startNs + static_cast<uint64_t>(static_cast<double>(ms) * 1e6);
    return true;
  };
  for (const Span &span : spans) {
    uint64_t begin = 0, end = 0;
    if (!sinceStart(span.begin, span.dispatch, begin) ||
        !sinceStart(span.end, span.dispatch, end))
      return false;
    recorder.addSpan(span.dispatch, begin, std::max(begin, end));
  }
  return true;
}

} // namespace kiln::rt::cuda
