//===- Device.h - A CUDA session's device: context, stream, caches, runs --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CUDA_DEVICE_H
#define KILN_RUNTIME_CUDA_DEVICE_H

#include "Model.h"
#include "Validation.h"
#include "cuda/Driver.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::rt::cuda {

/// Device 0's primary context, one stream, and what the session's runs share:
/// loaded kernel modules and functions, and the device copies of the
/// model's constants. Intermediates come from the device's default memory
/// pool in stream order; its release threshold is raised so that memory
/// freed by one run is reused by the next instead of returned to the driver.
class Device {
public:
  /// Opens device 0 for a model compiled for `chip` ("sm_90a"); fails with
  /// a clear status without a driver, without a device, or when the device
  /// is older than the chip.
  static kiln_status *open(const std::string &chip, std::unique_ptr<Device> &out);
  ~Device();

  /// Copies the inputs to the device, runs `model` with device buffers,
  /// copies the outputs back into `outputs` (host memory of
  /// `plan.outputBytes`), and reports the first CUDA failure.
  kiln_status *run(const kiln_model &model, const RunPlan &plan,
                   const std::vector<void *> &outputs, const kiln_abi_host &host);

  const std::string &name() const { return deviceName; }
  /// Kernel time of the last successful run in ms; negative before one.
  double lastDeviceMs() const { return lastMs.load(); }

  // The kiln_abi_cuda services, called from generated code through RunState.
  CUfunction getFunction(const void *image, const char *name, std::string &error);
  const std::string &functionName(CUfunction function);
  CUdeviceptr constant(const void *hostData, uint64_t bytes, std::string &error);
  /// The device copy of `map`, uploaded once per session (tensor maps of
  /// equal contents share it).
  CUdeviceptr tensorMap(const CUtensorMap &map, std::string &error);

  const Driver &driver;
  CUstream stream = nullptr;
  /// KILN_CUDA_SYNC=1: synchronize after every launch, so that a failing
  /// kernel is named exactly.
  bool syncEachLaunch = false;
  /// KILN_CUDA_POISON_OUTPUTS=1: outputs are filled with NaN before each run.
  bool poisonOutputs = false;

private:
  explicit Device(const Driver &driver) : driver(driver) {}

  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string deviceName;
  std::atomic<double> lastMs{-1};
  std::mutex mutex; // guards the caches below
  std::unordered_map<const void *, CUmodule> modules;
  std::map<std::pair<CUmodule, std::string>, CUfunction> functions;
  std::unordered_map<CUfunction, std::string> names;
  std::unordered_map<const void *, CUdeviceptr> constants;
  std::map<std::string, CUdeviceptr> tensorMaps; // by the map's 128 bytes
};

} // namespace kiln::rt::cuda

#endif // KILN_RUNTIME_CUDA_DEVICE_H
