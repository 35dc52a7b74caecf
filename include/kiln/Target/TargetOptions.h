//===- TargetOptions.h - Typed code generation options: precision, chip -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===------------------------------------------------------------------------------===//
//
// The options that select what a target generates, as enums and structs: the
// matmul precision, the CPU matmul instruction set, the CUDA chip, the CUDA
// f32 GEMM mode and the host CPU.
// Text becomes these once (kiln::parsePipelineOptions for kilnc's flags, the
// cl parsers below for pass options); passes test the values, never strings.
//
//===------------------------------------------------------------------------------===//

#ifndef KILN_TARGET_TARGETOPTIONS_H
#define KILN_TARGET_TARGETOPTIONS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace kiln {

/// The operand precision of matmul-class products (kilnc --precision); every
/// precision accumulates and writes f32.
enum class Precision { FP32, TF32, FP16, BF16 };

inline llvm::StringRef precisionName(Precision precision) {
  switch (precision) {
  case Precision::FP32: return "fp32";
  case Precision::TF32: return "tf32";
  case Precision::FP16: return "fp16";
  case Precision::BF16: return "bf16";
  }
  return "fp32";
}

inline std::optional<Precision> parsePrecision(llvm::StringRef name) {
  for (Precision p : {Precision::FP32, Precision::TF32, Precision::FP16, Precision::BF16})
    if (precisionName(p) == name)
      return p;
  return std::nullopt;
}

/// Whether products in `precision` read 16-bit operands (f16 or bf16).
inline bool isHalfPrecision(Precision precision) {
  return precision == Precision::FP16 || precision == Precision::BF16;
}

/// The instruction set of the CPU's matmul kernels, chosen once from
/// --precision and the features of --cpu (kiln::parsePipelineOptions):
/// f32 FMAs, or bf16 operands with f32 accumulation on AVX-512 BF16
/// (`vdpbf16ps`, pairs of k interleaved). An AMX-BF16 tile kernel would
/// be a third value beside these.
enum class CPUMatmulISA { F32FMA, AVX512BF16 };

inline llvm::StringRef cpuMatmulISAName(CPUMatmulISA isa) {
  return isa == CPUMatmulISA::AVX512BF16 ? "avx512bf16" : "f32-fma";
}

/// The operand element type of `isa`'s kernels: bf16 for the dot-product
/// kernels, f32 otherwise.
inline bool readsBF16(CPUMatmulISA isa) { return isa == CPUMatmulISA::AVX512BF16; }

/// An NVIDIA GPU architecture, sm_XY or the arch-specific sm_XYa.
struct Chip {
  /// XY of sm_XY: 90 for Hopper, 80 for Ampere.
  unsigned version = 90;
  /// The "a" suffix: features of exactly this architecture (wgmma on sm_90a).
  bool archSpecific = true;

  /// The smallest version kilnc generates code for.
  static constexpr unsigned kMinVersion = 60;

  /// Hopper's warpgroup MMA (nvgpu.warpgroup.mma, TMA): only sm_90a.
  bool hasWgmma() const { return version == 90 && archSpecific; }
  /// The warp-level mma.sync of sm_80 and later.
  bool hasMmaSync() const { return version >= 80; }
  /// "sm_90a", as NVVM, ptxas and the artifact spell it.
  std::string str() const {
    return "sm_" + std::to_string(version) + (archSpecific ? "a" : "");
  }
  bool operator==(const Chip &other) const {
    return version == other.version && archSpecific == other.archSpecific;
  }
};

/// sm_XY or sm_XYa with XY >= Chip::kMinVersion.
inline std::optional<Chip> parseChip(llvm::StringRef name) {
  Chip chip;
  if (!name.consume_front("sm_") || name.consumeInteger(10, chip.version) ||
      !(name.empty() || name == "a") || chip.version < Chip::kMinVersion)
    return std::nullopt;
  chip.archSpecific = name == "a";
  return chip;
}

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const Chip &chip) {
  return os << chip.str();
}

/// How --precision=fp32 products run where the chip has wgmma (kilnc
/// --cuda-f32-gemm): split operands on tf32 tensor cores (3xTF32,
/// error-compensated) or FMA loops.
enum class F32Gemm { Split3xTF32, SIMT };

inline llvm::StringRef f32GemmName(F32Gemm mode) {
  return mode == F32Gemm::SIMT ? "simt" : "3xtf32";
}

inline std::optional<F32Gemm> parseF32Gemm(llvm::StringRef name) {
  for (F32Gemm mode : {F32Gemm::Split3xTF32, F32Gemm::SIMT})
    if (f32GemmName(mode) == name)
      return mode;
  return std::nullopt;
}

/// The x86-64 CPU host code is generated for (kilnc --cpu): the compiling
/// machine, or a CPU name LLVM's x86 backend knows (checked by
/// kiln::parseHostCPU). It decides the target machine's CPU and features:
/// the compiling machine's own for native, the named CPU's otherwise.
struct HostCPU {
  /// The LLVM CPU name ("x86-64-v3", "znver4"); empty for the compiling
  /// machine.
  std::string name;

  bool isNative() const { return name.empty(); }
  /// As --cpu spells it.
  std::string str() const { return isNative() ? "native" : name; }
  bool operator==(const HostCPU &other) const { return name == other.name; }
};

} // namespace kiln

namespace llvm::cl {
/// `chip=sm_80` in pass options: parsed by kiln::parseChip.
template <>
class parser<kiln::Chip> : public basic_parser<kiln::Chip> {
public:
  parser(Option &option) : basic_parser(option) {}
  bool parse(Option &option, StringRef, StringRef arg, kiln::Chip &value) {
    if (std::optional<kiln::Chip> chip = kiln::parseChip(arg)) {
      value = *chip;
      return false;
    }
    return option.error("'" + arg + "': expected sm_XY with XY >= " +
                        Twine(kiln::Chip::kMinVersion) + ", e.g. sm_90a or sm_80");
  }
  StringRef getValueName() const override { return "sm_XY"; }
  void printOptionDiff(const Option &option, const kiln::Chip &value,
                       const OptionValue<kiln::Chip> &, size_t globalWidth) const {
    printOptionName(option, globalWidth);
    outs() << "= " << value.str() << "\n";
  }
};
} // namespace llvm::cl

#endif // KILN_TARGET_TARGETOPTIONS_H
