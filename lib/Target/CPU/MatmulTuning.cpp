//===- MatmulTuning.cpp - The CPU matmul family's tuning space -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The space and the cost model of kiln/Target/CPU/MatmulTuning.h. The
// model's machine is a Zen-class core (2 FMA and 2 load ports, 4-cycle FMA
// latency, 48 KiB L1D, 1 MiB L2) with the vector registers it is given
// (their width and count); its constants rank configurations, they do not
// promise absolute times.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/CPU/MatmulTuning.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace kiln::matmul_tuning {

namespace {

/// The model's core.
constexpr double kFmaPorts = 2, kLoadPorts = 2, kFmaLatency = 4;
constexpr int64_t kL1Bytes = 48 * 1024, kL2Bytes = 1024 * 1024;
/// Cycles per packed element: B is packed a vector at a time, A one
/// scalar at a time (MatmulLoops.cpp, packB and packA).
constexpr double kPackBCycles = 0.25, kPackACycles = 1.0;
/// Bytes per cycle one core streams from memory (the roofline's slope).
constexpr double kMemoryBytesPerCycle = 16;
/// Cycles of loop and address set-up around one micro-kernel call.
constexpr double kKernelCallCycles = 24;
/// Predicted gain a configuration needs over the fallback to replace it,
/// and the fewest predicted cycles of a matmul the model decides for: below
/// them (squeeze-excite products, classifiers at batch 1) the call and
/// set-up costs it does not model dominate, and the fallback stays.
constexpr double kRequiredGain = 0.5;
constexpr double kMinModeledCycles = 1e5;

/// The values each dimension of the space takes. The register tiles of 32
/// registers (AVX-512) and of 16 (AVX2, SSE): each list's first tile is that
/// register file's default (CPUMatmulTiling, kiln::parsePipelineOptions).
using Tile = std::pair<int64_t, int64_t>;
constexpr Tile kRegisterTiles32[] = {{6, 4}, {4, 4}, {5, 5}, {8, 3},
                                     {12, 2}, {14, 2}, {8, 2}, {4, 6}};
constexpr Tile kRegisterTiles16[] = {{6, 2}, {4, 3}, {5, 2}, {3, 3}, {4, 2}, {14, 1}};
constexpr int64_t kRowBlocks[] = {72, 48, 96, 144};
constexpr int64_t kColumnBlocks[] = {256, 128, 512};
constexpr int64_t kDepthBlocks[] = {256, 128, 384};
constexpr int64_t kParallelTasks[] = {4, 2, 8};

/// Cycles of one k step of a `rows` x `vectors` kernel: FMAs over the FMA
/// ports, the broadcasts of A and loads of B over the load ports, and the
/// FMA latency when there are too few accumulators to hide it.
double kernelStepCycles(int64_t rows, int64_t vectors) {
  double fmas = static_cast<double>(rows * vectors);
  return std::max({fmas / kFmaPorts, static_cast<double>(rows + vectors) / kLoadPorts,
                   kFmaLatency * fmas / std::max(fmas, kFmaLatency * kFmaPorts)});
}

/// Cycles per B element a row group packs, by how it is read (planSplit).
double packBCycles(BPacking packing) {
  switch (packing) {
  case BPacking::Contiguous:
    return kPackBCycles;
  case BPacking::RowWrap:
    return 0.4;
  case BPacking::Gather:
    return 1.0;
  }
  return kPackBCycles;
}

/// Cycles per element of a constant A that a column block streams from
/// L2/L3 (read in place, no packing), and the set-up of one task (its
/// packing buffers, the pool's hand-over).
constexpr double kStreamACycles = 0.1, kTaskCycles = 2000;
/// Below this many tasks' set-up in FMA cycles a matmul is not split.
constexpr double kMinSplitTasks = 20;

/// The makespan of `work` (in task order) on `threads` threads under the
/// runtime pool's schedule: chunks of max(1, tasks / (4 threads)) tasks,
/// each taken by the thread that is free first.
double makespan(llvm::ArrayRef<double> work, int64_t threads) {
  int64_t count = static_cast<int64_t>(work.size());
  int64_t chunk = std::max<int64_t>(1, count / (4 * threads));
  llvm::SmallVector<double> busy(threads, 0.0);
  for (int64_t first = 0; first < count; first += chunk) {
    double sum = 0;
    for (int64_t i = first; i < std::min(count, first + chunk); ++i)
      sum += work[i];
    *std::min_element(busy.begin(), busy.end()) += sum;
  }
  return *std::max_element(busy.begin(), busy.end());
}

/// [i * total / parts, (i + 1) * total / parts): part i of an even split.
std::pair<int64_t, int64_t> evenPart(int64_t i, int64_t total, int64_t parts) {
  return {i * total / parts, (i + 1) * total / parts};
}

} // namespace

MatmulSplit planSplit(int64_t m, int64_t n, int64_t k, const MatmulConfig &config,
                      VectorRegisters vectors, bool constantA, bool constantB,
                      BPacking packing) {
  int64_t vw = vectors.width, nr = config.vectors * vw, mr = config.rows;
  int64_t tileN = llvm::divideCeil(config.n, nr) * nr;
  MatmulSplit split;
  if (n <= 0)
    return split;
  int64_t grid = llvm::divideCeil(n, tileN);
  split.columnBlocks = grid;
  if (m <= 0)
    return split;
  int64_t tasks = std::max<int64_t>(1, config.tasks);
  int64_t columnPanels = llvm::divideCeil(n, nr), rowPanels = llvm::divideCeil(m, mr);
  // Columns of panel range [first, last): the partial last panel counts
  // the vectors its kernels run.
  auto columns = [&](int64_t first, int64_t last) {
    int64_t end = std::min(last * nr, n);
    int64_t full = std::max<int64_t>(0, end - first * nr);
    return llvm::divideCeil(full, vw) * vw;
  };
  double pack = constantB ? 0.0 : packBCycles(packing);
  double aCycles = constantA ? kStreamACycles : kPackACycles;
  double macsPerCycle = kFmaPorts * vw;
  // A matmul of a few microseconds stays on the tileN grid, one group: the
  // pool's hand-over would cost about as much as it saves.
  if (static_cast<double>(m) * columns(0, columnPanels) * k / macsPerCycle <
      kMinSplitTasks * kTaskCycles) {
    split.balanced = !constantB;
    return split;
  }
  int64_t maxBlocks = std::min(columnPanels, std::max<int64_t>(2 * tasks, llvm::alignTo(grid, tasks)));
  if (constantB)
    maxBlocks = grid;
  int64_t maxGroups = std::min(rowPanels, 2 * tasks);
  double best = -1;
  for (int64_t blocks = grid; blocks <= std::max(grid, maxBlocks); ++blocks) {
    for (int64_t groups = 1; groups <= maxGroups; ++groups) {
      if (blocks * groups > std::max(4 * tasks, grid))
        break;
      llvm::SmallVector<double> work;
      for (int64_t j = 0; j < blocks; ++j) {
        auto [c0, c1] = blocks == grid && constantB
                            ? std::pair<int64_t, int64_t>{j * tileN / nr,
                                                          std::min((j + 1) * tileN / nr,
                                                                   columnPanels)}
                            : evenPart(j, columnPanels, blocks);
        double cols = columns(c0, c1);
        for (int64_t g = 0; g < groups; ++g) {
          auto [r0, r1] = evenPart(g, rowPanels, groups);
          double rows = std::min(r1 * mr, m) - r0 * mr;
          work.push_back(rows * cols * k / macsPerCycle + pack * cols * k +
                         aCycles * rows * k + kTaskCycles);
        }
      }
      double score = 0;
      for (int64_t threads = 1; threads <= tasks; threads *= 2)
        score += threads * makespan(work, threads);
      if (best < 0 || score < best * (1 - 1e-3)) {
        best = score;
        split = {blocks, groups, !constantB};
      }
    }
  }
  return split;
}

std::string MatmulConfig::str() const {
  return (llvm::Twine(rows) + "x" + llvm::Twine(vectors) + "x" + llvm::Twine(m) + "x" +
          llvm::Twine(n) + "x" + llvm::Twine(k) + "x" + llvm::Twine(tasks))
      .str();
}

bool MatmulConfig::operator==(const MatmulConfig &other) const {
  return rows == other.rows && vectors == other.vectors && m == other.m && n == other.n &&
         k == other.k && tasks == other.tasks;
}

std::optional<MatmulConfig> parseMatmulConfig(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, 'x');
  MatmulConfig config;
  int64_t *fields[] = {&config.rows, &config.vectors, &config.m,
                       &config.n,    &config.k,       &config.tasks};
  if (parts.size() != std::size(fields))
    return std::nullopt;
  for (auto [part, field] : llvm::zip(parts, fields))
    if (part.getAsInteger(10, *field) || *field < 1 || *field > 4096)
      return std::nullopt;
  return config;
}

bool isSupported(const MatmulConfig &config, VectorRegisters vectors) {
  int64_t registers = config.rows * config.vectors + config.vectors + 1;
  return config.rows >= 1 && config.vectors >= 1 && registers <= vectors.registers &&
         config.m >= config.rows && config.n >= config.vectors * vectors.width &&
         config.k >= 1 && config.tasks >= 1;
}

std::vector<MatmulConfig> searchSpace(VectorRegisters vectors) {
  llvm::ArrayRef<Tile> tiles = vectors.registers >= 32 ? llvm::ArrayRef(kRegisterTiles32)
                                                        : llvm::ArrayRef(kRegisterTiles16);
  std::vector<MatmulConfig> space;
  for (auto [rows, columns] : tiles)
    for (int64_t m : kRowBlocks)
      for (int64_t n : kColumnBlocks)
        for (int64_t k : kDepthBlocks)
          for (int64_t tasks : kParallelTasks) {
            MatmulConfig config{rows, columns, m, n, k, tasks};
            if (isSupported(config, vectors))
              space.push_back(config);
          }
  return space;
}

double predictCycles(const MatmulProblem &problem, const MatmulConfig &config,
                     VectorRegisters registers) {
  const double m = problem.m, n = problem.n, k = problem.k;
  int64_t vectorWidth = registers.width;
  int64_t nr = config.vectors * vectorWidth;
  // The loop nest rounds its cache blocks to whole register tiles.
  int64_t tileM = llvm::divideCeil(config.m, config.rows) * config.rows;
  // Micro-kernels: full MR-row panels, then one kernel as high as the
  // leftover rows; over the full column panels, then the partial one with
  // only the vectors its columns need.
  double panels = std::floor(m / config.rows);
  int64_t leftover = problem.m % config.rows;
  auto columnPanel = [&](int64_t vectors) {
    return panels * kernelStepCycles(config.rows, vectors) +
           (leftover ? kernelStepCycles(leftover, vectors) : 0.0);
  };
  int64_t restVectors = llvm::divideCeil(problem.n % nr, vectorWidth);
  double columnPanels = std::ceil(n / nr);
  double compute = k * (std::floor(n / nr) * columnPanel(config.vectors) +
                        (restVectors ? columnPanel(restVectors) : 0.0));
  // Run-time packing: B once per (column block, row group), A once per
  // column block, unless packed at compile time.
  MatmulSplit split = planSplit(problem.m, problem.n, problem.k, config, registers,
                                problem.constantA, problem.constantB, BPacking::Contiguous);
  double columnBlocks = split.columnBlocks, rowGroups = split.rowGroups;
  double packing = (problem.constantB ? 0 : kPackBCycles * k * n * rowGroups) +
                   (problem.constantA ? 0 : kPackACycles * m * k * columnBlocks);
  double calls = columnPanels * std::ceil(m / config.rows) * std::ceil(k / config.k);
  // Roofline: the kernels cannot run faster than A, B and C stream in
  // (A reread per column block, B per row group).
  double bytes = 4 * (m * k * columnBlocks + k * n * rowGroups + 2 * m * n);
  double total = std::max(compute, bytes / kMemoryBytesPerCycle) + packing +
                 kKernelCallCycles * calls;
  // The B panel (KC x NR) is reread per MR-row block from L1, the A block
  // (MC x KC) per column panel from L2: spilling either costs bandwidth.
  int64_t depth = std::min<int64_t>(config.k, std::max<int64_t>(problem.k, 1));
  if (depth * nr * 4 > kL1Bytes)
    total *= 1.02;
  if (std::min<int64_t>(tileM, std::max<int64_t>(problem.m, 1)) * depth * 4 > kL2Bytes / 2)
    total *= 1.15;
  return total;
}

std::vector<MatmulConfig> rankByCostModel(const MatmulProblem &problem,
                                          const MatmulConfig &fallback,
                                          VectorRegisters vectors, size_t limit) {
  std::vector<MatmulConfig> ranked = {fallback};
  bool known = problem.m > 0 && problem.n > 0 && problem.k > 0;
  std::vector<std::pair<double, MatmulConfig>> scored;
  for (const MatmulConfig &config : searchSpace(vectors))
    if (config != fallback)
      scored.emplace_back(known ? predictCycles(problem, config, vectors) : 0.0, config);
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto &x, const auto &y) { return x.first < y.first; });
  // The register tile is what the model is least sure of (measured, 6x4
  // beats tiles it predicts equal): first the best configuration of each
  // other tile, then the rest. Configurations the model cannot tell apart
  // (it does not see every dimension) are measured once: the first of each
  // predicted time.
  std::vector<double> taken = {known ? predictCycles(problem, fallback, vectors) : -1.0};
  std::vector<std::pair<int64_t, int64_t>> tiles = {{fallback.rows, fallback.vectors}};
  auto take = [&](double cycles, const MatmulConfig &config) {
    if (ranked.size() >= limit ||
        (known && llvm::any_of(taken, [&](double t) {
           return std::abs(t - cycles) <= 1e-4 * std::max(t, cycles);
         })))
      return;
    taken.push_back(cycles);
    ranked.push_back(config);
  };
  for (const auto &[cycles, config] : scored) {
    std::pair<int64_t, int64_t> tile = {config.rows, config.vectors};
    if (llvm::is_contained(tiles, tile))
      continue;
    tiles.push_back(tile);
    take(cycles, config);
  }
  for (const auto &[cycles, config] : scored)
    take(cycles, config);
  return ranked;
}

MatmulConfig chooseByCostModel(const MatmulProblem &problem, const MatmulConfig &fallback,
                               VectorRegisters vectors) {
  if (problem.m <= 0 || problem.n <= 0 || problem.k <= 0)
    return fallback;
  double fallbackCycles = predictCycles(problem, fallback, vectors);
  if (fallbackCycles < kMinModeledCycles)
    return fallback;
  MatmulConfig best = fallback;
  double bestCycles = fallbackCycles * (1 - kRequiredGain);
  for (const MatmulConfig &config : searchSpace(vectors)) {
    double cycles = predictCycles(problem, config, vectors);
    if (cycles < bestCycles) {
      best = config;
      bestCycles = cycles;
    }
  }
  return best;
}

std::string signatureKey(llvm::StringRef signature) {
  return llvm::utohexstr(llvm::xxh3_64bits(signature), /*LowerCase=*/true, /*Width=*/16);
}

} // namespace kiln::matmul_tuning
