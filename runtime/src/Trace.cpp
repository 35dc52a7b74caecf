//===- Trace.cpp - Per-dispatch timing and Chrome-trace JSON ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Generated code calls host->trace_begin/trace_end around each dispatch
// only when host->trace is set, so untraced runs pay one branch per
// dispatch. The hooks run on the run's own thread and must not throw or
// allocate much: they append to a vector reserved for the model's dispatches.
//
//===----------------------------------------------------------------------===//

#include "Trace.h"

#include "Status.h"

#include <cstdio>
#include <memory>
#include <sys/syscall.h>
#include <unistd.h>

namespace kiln::rt {

RunRecorder::RunRecorder(kiln_trace &trace, const std::vector<std::string> &dispatchNames)
    : trace(trace), dispatchNames(dispatchNames),
      thread(static_cast<uint32_t>(::syscall(SYS_gettid))), runBegin(trace.nowNs()) {
  open.reserve(4);
  events.reserve(dispatchNames.size() + 1);
}

void RunRecorder::attach(kiln_abi_host &host) {
  host.trace = this;
  host.trace_begin = &RunRecorder::begin;
  host.trace_end = &RunRecorder::end;
}

void RunRecorder::begin(void *self, int32_t dispatch) {
  auto *recorder = static_cast<RunRecorder *>(self);
  try {
    recorder->open.emplace_back(dispatch, recorder->trace.nowNs());
  } catch (...) { // out of memory: lose the event, never throw into C
  }
}

void RunRecorder::end(void *self, int32_t dispatch) {
  auto *recorder = static_cast<RunRecorder *>(self);
  uint64_t now = recorder->trace.nowNs();
  if (recorder->open.empty() || recorder->open.back().first != dispatch)
    return; // unbalanced hooks: ignore rather than invent a time
  uint64_t begin = recorder->open.back().second;
  recorder->open.pop_back();
  try {
    recorder->events.push_back({nullptr, dispatch, recorder->thread, begin, now});
  } catch (...) {
  }
}

void RunRecorder::addSpan(int32_t dispatch, uint64_t beginNs, uint64_t endNs) {
  events.push_back({nullptr, dispatch, thread, beginNs, endNs});
}

void RunRecorder::finish() {
  events.push_back({nullptr, -1, thread, runBegin, trace.nowNs()});
  std::lock_guard<std::mutex> lock(trace.mutex);
  for (kiln_trace_event &event : events) {
    std::string name =
        event.dispatch < 0 ? "run"
        : static_cast<size_t>(event.dispatch) < dispatchNames.size()
            ? dispatchNames[static_cast<size_t>(event.dispatch)]
            : cat("dispatch ", event.dispatch);
    event.name = trace.names.insert(std::move(name)).first->c_str();
    trace.events.push_back(event);
  }
}

namespace {

void writeJsonString(std::FILE *file, const char *text) {
  std::fputc('"', file);
  for (const char *c = text; *c; ++c) {
    unsigned char u = static_cast<unsigned char>(*c);
    if (u == '"' || u == '\\')
      std::fprintf(file, "\\%c", u);
    else if (u < 0x20)
      std::fprintf(file, "\\u%04x", u);
    else
      std::fputc(u, file);
  }
  std::fputc('"', file);
}

kiln_status *writeJson(const kiln_trace &trace, const char *path) {
  if (!path || !*path)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "trace path is empty");
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> file(std::fopen(path, "w"), &std::fclose);
  if (!file)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      cat("cannot write trace '", path, "'"));
  std::lock_guard<std::mutex> lock(trace.mutex);
  std::fputs("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n", file.get());
  for (size_t i = 0; i < trace.events.size(); ++i) {
    const kiln_trace_event &e = trace.events[i];
    std::fputs("  {\"name\": ", file.get());
    writeJsonString(file.get(), e.name);
    std::fprintf(file.get(),
                 ", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": 1, \"tid\": %u, "
                 "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"dispatch\": %d}}%s\n",
                 e.dispatch < 0 ? "run" : "dispatch", e.thread, e.begin_ns / 1e3,
                 (e.end_ns - e.begin_ns) / 1e3, e.dispatch,
                 i + 1 < trace.events.size() ? "," : "");
  }
  std::fputs("]}\n", file.get());
  if (std::ferror(file.get()))
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, cat("cannot write trace '", path, "'"));
  return nullptr;
}

} // namespace
} // namespace kiln::rt

extern "C" {

kiln_status *kiln_trace_create(kiln_trace **out_trace) {
  return kiln::rt::guard([&]() -> kiln_status * {
    if (!out_trace)
      return kiln::rt::makeStatus(KILN_STATUS_INVALID_ARGUMENT, "out_trace is NULL");
    *out_trace = new kiln_trace();
    return nullptr;
  });
}

void kiln_trace_destroy(kiln_trace *trace) { delete trace; }

size_t kiln_trace_event_count(const kiln_trace *trace) {
  if (!trace)
    return 0;
  std::lock_guard<std::mutex> lock(trace->mutex);
  return trace->events.size();
}

kiln_status *kiln_trace_get_event(const kiln_trace *trace, size_t index,
                                  kiln_trace_event *out_event) {
  return kiln::rt::guard([&]() -> kiln_status * {
    using kiln::rt::cat;
    if (!trace || !out_event)
      return kiln::rt::makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                                  !trace ? "trace is NULL" : "out_event is NULL");
    std::lock_guard<std::mutex> lock(trace->mutex);
    if (index >= trace->events.size())
      return kiln::rt::makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                                  cat("event index ", index, " is out of range, the trace has ",
                                      trace->events.size(), " events"));
    *out_event = trace->events[index];
    return nullptr;
  });
}

kiln_status *kiln_trace_write_json(const kiln_trace *trace, const char *path) {
  return kiln::rt::guard([&]() -> kiln_status * {
    if (!trace)
      return kiln::rt::makeStatus(KILN_STATUS_INVALID_ARGUMENT, "trace is NULL");
    return kiln::rt::writeJson(*trace, path);
  });
}

} // extern "C"
