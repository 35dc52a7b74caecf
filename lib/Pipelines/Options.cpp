//===- Options.cpp - The one parser of kilnc's target options -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// --cpu, --gpu, --precision and --cuda-f32-gemm become kiln::HostCPU,
// kiln::Chip, kiln::Precision and kiln::F32Gemm here, once, and on the CPU
// --precision with the CPU's features the kiln::CPUMatmulISA, and the CPU's
// vector unit the vector width, register count and default matmul tile of
// every CPU kernel; nothing after this reads them as text or assumes them.
//
//===----------------------------------------------------------------------===//

#include "kiln/Pipelines/Pipelines.h"

#include <tuple>

namespace kiln {

static llvm::Error optionError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The CPU matmul kernels' instruction set for `precision` on `cpu`: f32
/// FMAs for fp32; for bf16, AVX-512 BF16 where the CPU has it (an AMX-BF16
/// tile kernel, once it exists, would be chosen before it); an error naming
/// the missing feature and --cpu otherwise.
static llvm::Expected<CPUMatmulISA> chooseCPUMatmulISA(Precision precision,
                                                       const HostCPU &cpu) {
  switch (precision) {
  case Precision::FP32:
    return CPUMatmulISA::F32FMA;
  case Precision::BF16:
    if (hostCPUHasFeature(cpu, "avx512bf16"))
      return CPUMatmulISA::AVX512BF16;
    return optionError("--precision=bf16 needs a CPU with AMX-BF16 (amx-bf16) or AVX-512 "
                       "BF16 (avx512bf16); --cpu=" + cpu.str() +
                       " has neither: pick a --cpu that has one (e.g. znver4, "
                       "sapphirerapids) or --precision=fp32");
  case Precision::TF32:
  case Precision::FP16:
    break;
  }
  return optionError("--precision=" + precisionName(precision) +
                     " is for --target=cuda; the CPU target computes in fp32 or bf16");
}

CPUVectorUnit cpuVectorUnit(const HostCPU &cpu) {
  if (hostCPUHasFeature(cpu, "avx512f"))
    return {"avx512", 16, 32};
  if (hostCPUHasFeature(cpu, "avx2"))
    return {"avx2", 8, 16};
  if (hostCPUHasFeature(cpu, "avx"))
    return {"avx", 8, 16};
  return {"sse", 4, 16};
}

CPUMatmulTiling defaultCPUMatmulTiling(const CPUVectorUnit &unit) {
  CPUMatmulTiling tiling;
  if (unit.registers < 32)
    tiling.vectors = 2;
  return tiling;
}

llvm::Error parsePipelineOptions(const TargetOptionText &text, PipelineOptions &options) {
  std::optional<HostCPU> cpu = parseHostCPU(text.cpu);
  if (!cpu)
    return optionError("--cpu='" + text.cpu + "': expected one of " + hostCPUNames());
  std::optional<Precision> precision = parsePrecision(text.precision);
  if (!precision)
    return optionError("--precision='" + text.precision +
                       "': expected fp32, tf32, fp16 or bf16");
  if (options.target == Target::CPU) {
    llvm::Expected<CPUMatmulISA> isa = chooseCPUMatmulISA(*precision, *cpu);
    if (!isa)
      return isa.takeError();
    options.cpuMatmul = *isa;
    CPUVectorUnit unit = cpuVectorUnit(*cpu);
    options.vectorWidth = unit.width;
    options.vectorRegisters = unit.registers;
    CPUMatmulTiling tiling = defaultCPUMatmulTiling(unit);
    CPUMatmulTiling &matmul = options.matmul;
    std::tie(matmul.rows, matmul.vectors, matmul.m, matmul.n, matmul.k, matmul.tasks) =
        std::tie(tiling.rows, tiling.vectors, tiling.m, tiling.n, tiling.k, tiling.tasks);
  }
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
