//===- DeviceTrace.h - Dispatch spans of a traced CUDA run, timed on the GPU -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// CUDA artifacts call the same trace hooks as CPU artifacts around each
// dispatch, but on the host they would time only the kernel launches. Here
// each hook records a CUDA event on the session's stream instead; after the
// run's final synchronize, finish() turns the events' elapsed times since
// the run's start event into RunRecorder spans on the trace's host clock
// (start event = host time when it was recorded on the idle stream).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CUDA_DEVICETRACE_H
#define KILN_RUNTIME_CUDA_DEVICETRACE_H

#include "Trace.h"
#include "cuda/Driver.h"

#include <mutex>
#include <string>
#include <vector>

namespace kiln::rt::cuda {

/// The session's reusable CUDA events (timing enabled).
class EventPool {
public:
  explicit EventPool(const Driver &driver) : driver(driver) {}
  ~EventPool();
  EventPool(const EventPool &) = delete;
  EventPool &operator=(const EventPool &) = delete;
  /// A free event or a new one; NULL with `error` set on failure.
  CUevent take(std::string &error);
  void give(CUevent event);

private:
  const Driver &driver;
  std::mutex mutex;
  std::vector<CUevent> free;
};

class DeviceTraceRecorder {
public:
  DeviceTraceRecorder(const Driver &driver, CUstream stream, EventPool &events,
                      RunRecorder &recorder);
  ~DeviceTraceRecorder(); // gives the events back
  DeviceTraceRecorder(const DeviceTraceRecorder &) = delete;
  DeviceTraceRecorder &operator=(const DeviceTraceRecorder &) = delete;

  /// Records the start event (the stream must be idle) and sets the hooks
  /// of `host` to this recorder.
  void start(kiln_abi_host &host);
  /// After the stream is synchronized: adds one span per dispatch to the
  /// run's recorder. Returns false with `error` set if recording failed.
  bool finish(std::string &error);

private:
  static void begin(void *self, int32_t dispatch) noexcept;
  static void end(void *self, int32_t dispatch) noexcept;
  CUevent record(const char *what, int32_t dispatch);

  struct Span {
    int32_t dispatch;
    CUevent begin, end;
  };
  const Driver &driver;
  CUstream stream;
  EventPool &events;
  RunRecorder &recorder;
  CUevent startEvent = nullptr;
  uint64_t startNs = 0;
  std::vector<std::pair<int32_t, CUevent>> open;
  std::vector<Span> spans;
  std::vector<CUevent> taken;
  std::string error; // the first failure
};

} // namespace kiln::rt::cuda

#endif // KILN_RUNTIME_CUDA_DEVICETRACE_H
