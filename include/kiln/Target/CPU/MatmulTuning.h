//===- MatmulTuning.h - The CPU matmul family's tuning space ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// What kiln-cpu-matmul (GEMMs and the convs that reach its kernel) can be
// tuned over, owned by the family: the configurations its loop nest really
// supports (register tile, cache blocks, parallel split), the version of
// that space, the signature of one matmul (the tuning key) and the analytic
// cost model that picks a configuration when the tuning database has none.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_CPU_MATMULTUNING_H
#define KILN_TARGET_CPU_MATMULTUNING_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::matmul_tuning {

/// Bumped whenever the space or the meaning of a configuration changes:
/// database records of another version are ignored.
inline constexpr llvm::StringLiteral kSpaceVersion = "cpu-matmul-2";

/// One configuration of the loop nest (MatmulLoops.cpp): a register tile
/// of `rows` x `vectors` vectors, cache blocks `m` x `n` x `k`, and the
/// parallel tasks a matmul aims for when it has fewer column blocks.
struct MatmulConfig {
  int64_t rows = 6, vectors = 4;
  int64_t m = 72, n = 256, k = 256;
  int64_t tasks = 4;

  /// `RxVxMxNxKxT`, e.g. `6x4x72x256x256x4`.
  std::string str() const;
  bool operator==(const MatmulConfig &other) const;
  bool operator!=(const MatmulConfig &other) const { return !(*this == other); }
};

/// Parses str()'s form; nullopt when it is not six positive integers.
std::optional<MatmulConfig> parseMatmulConfig(llvm::StringRef text);

/// The vector registers the kernels are generated for (from --cpu's
/// features, kiln::parsePipelineOptions): `width` f32 lanes per vector and
/// `registers` architectural vector registers. AVX-512: 16 lanes, 32
/// registers (zmm0-31); AVX2: 8 lanes, 16 registers (ymm0-15).
struct VectorRegisters {
  int64_t width = 16, registers = 32;
};

/// Whether the loop nest supports `config` on `vectors`: the accumulators,
/// one broadcast of A and the vectors of B fit the vector registers
/// (R*V + V + 1 <= registers, so the micro-kernel never spills); cache
/// blocks at least one register tile.
bool isSupported(const MatmulConfig &config, VectorRegisters vectors);

/// The declared search space for `vectors`: every supported combination of
/// the register tiles (a list per register file: 32 or 16 registers),
/// cache blocks and parallel splits the tuner tries, in a fixed order.
std::vector<MatmulConfig> searchSpace(VectorRegisters vectors);

/// What the cost model knows of one matmul: C[M,N] (+)= A[M,K] B[K,N]
/// (-1: a dynamic size), and whether A or B is a weight packed at compile
/// time (then it is not packed per cache block at run time).
struct MatmulProblem {
  int64_t m = -1, n = -1, k = -1;
  bool constantA = false, constantB = false;
};

/// How a matmul of static M and N is split into parallel tasks
/// (MatmulLoops.cpp): `columnBlocks` blocks of whole column panels, as
/// equal as panels allow, times `rowGroups` groups of whole row panels,
/// as equal as panels allow; task t is (column block t / rowGroups, row
/// group t % rowGroups). `balanced`: the column blocks are spread evenly
/// over the panels, else they are the tileN grid (a constant B is packed
/// at compile time in tileN blocks; a dynamic N).
struct MatmulSplit {
  int64_t columnBlocks = 1, rowGroups = 1;
  bool balanced = false;
};

/// What kind of B packing a split pays for per row group, per element:
/// contiguous vector loads, two masked loads for a row-wrapping conv, or a
/// gather (strided convs, narrow rows) or a B prologue.
enum class BPacking { Contiguous, RowWrap, Gather };

/// The split of an M x N x K matmul under `config`: at least the tileN
/// grid's column blocks; among the splits into at most 2T column blocks
/// and 2T row groups (T = config.tasks), the one with the least core time
/// summed over 1, 2, 4, ... T threads (makespan times threads: the
/// thread pool's dynamic schedule over the tasks' modelled cycles, which
/// count the FMAs of whole panels, the B packing each row group repeats,
/// A streamed or packed per column block and a per-task cost). T is thus
/// the largest thread count the split is balanced for. Dynamic M or N:
/// the tileN grid of columns, one row group. `constantB`: the tileN grid
/// (compile-time panels), `constantA`: weights read in place.
MatmulSplit planSplit(int64_t m, int64_t n, int64_t k, const MatmulConfig &config,
                      VectorRegisters vectors, bool constantA, bool constantB,
                      BPacking packing);

/// Predicted cycles of `problem` under `config` on one core: a roofline,
/// the larger of the micro-kernel's issue bound (FMA and load ports, FMA
/// latency) over the padded register tiles and the operands' streaming
/// time, plus the run-time packing and the loop overhead per kernel call,
/// with penalties for cache blocks that do not fit L1/L2.
double predictCycles(const MatmulProblem &problem, const MatmulConfig &config,
                     VectorRegisters vectors);

/// The untuned choice: `fallback` (today's fixed configuration) unless a
/// configuration of the space is predicted to take at most half its
/// cycles (at least 2x faster); always
/// `fallback` for dynamic shapes and for matmuls predicted under 1e5
/// cycles (where unmodeled overheads dominate).
MatmulConfig chooseByCostModel(const MatmulProblem &problem, const MatmulConfig &fallback,
                               VectorRegisters vectors);

/// The space ranked by predicted cycles (stable: ties keep the space's
/// order), `fallback` first, one configuration per predicted time (the
/// first in the space's order); at most `limit` configurations: the
/// tuner's search order.
std::vector<MatmulConfig> rankByCostModel(const MatmulProblem &problem,
                                          const MatmulConfig &fallback,
                                          VectorRegisters vectors, size_t limit);

/// The content-addressed key of a canonical signature: 16 hex digits of
/// its xxh3 hash.
std::string signatureKey(llvm::StringRef signature);

} // namespace kiln::matmul_tuning

#endif // KILN_TARGET_CPU_MATMULTUNING_H
