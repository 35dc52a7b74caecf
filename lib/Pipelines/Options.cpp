//===- Options.cpp - The one parser of kilnc's target options -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// --cpu, --gpu, --precision and --cuda-f32-gemm become kiln::HostCPU,
// kiln::Chip, kiln::Precision and kiln::F32Gemm here, once; nothing after
// this reads them as text.
//
//===----------------------------------------------------------------------===//

#include "kiln/Pipelines/Pipelines.h"

namespace kiln {

static llvm::Error optionError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error parsePipelineOptions(const TargetOptionText &text, PipelineOptions &options) {
  std::optional<HostCPU> cpu = parseHostCPU(text.cpu);
  if (!cpu)
    return optionError("--cpu='" + text.cpu + "': expected one of " + hostCPUNames());
  std::optional<Precision> precision = parsePrecision(text.precision);
  if (!precision)
    return optionError("--precision='" + text.precision +
                       "': expected fp32, tf32, fp16 or bf16");
  if (options.target == Target::CPU && *precision != Precision::FP32)
    return optionError("--precision=" + text.precision +
                       " is for --target=cuda; the CPU target computes in fp32");
  std::optional<Chip> chip = parseChip(text.gpu);
  if (!chip)
    return optionError("--gpu='" + text.gpu + "': expected sm_XY with XY >= " +
                       llvm::Twine(Chip::kMinVersion) + ", e.g. sm_90a or sm_80");
  std::optional<F32Gemm> f32Gemm = parseF32Gemm(text.f32Gemm);
  if (!f32Gemm)
    return optionError("--cuda-f32-gemm='" + text.f32Gemm + "': expected 3xtf32 or simt");
  options.cpu = *cpu;
  options.cuda.precision = *precision;
  options.cuda.chip = *chip;
  options.cuda.f32Gemm = *f32Gemm;
  return llvm::Error::success();
}

} // namespace kiln
