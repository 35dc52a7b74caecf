//===- Compile.cpp - kiln-run MODEL.onnx: compile through kilnc, cached ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "Compile.h"

#include "KilnRun.h"

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace kilnrun {
namespace fs = std::filesystem;

namespace {

/// 128-bit FNV-1a (two 64-bit lanes with different offsets): a cache key,
/// not a security boundary; the cache directory is the user's own.
struct Hasher {
  uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  void bytes(const void *data, size_t size) {
    const auto *p = static_cast<const unsigned char *>(data);
    for (size_t i = 0; i < size; ++i) {
      a = (a ^ p[i]) * 0x100000001b3ull;
      b = (b ^ p[i] ^ 0x5a) * 0x100000001b3ull;
    }
  }
  void text(const std::string &s) {
    uint64_t size = s.size();
    bytes(&size, sizeof size);
    bytes(s.data(), s.size());
  }
  void file(const fs::path &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
      throw ToolError(fmt::format("'{}': cannot read the model", path.string()));
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0)
      bytes(buffer, static_cast<size_t>(in.gcount()));
  }
  /// Size and modification time: enough to notice a rebuilt kilnc or
  /// rewritten external-data files without reading them.
  void stamp(const fs::path &path) {
    std::error_code ec;
    auto size = fs::file_size(path, ec);
    auto time = fs::last_write_time(path, ec).time_since_epoch().count();
    text(path.filename().string());
    bytes(&size, sizeof size);
    bytes(&time, sizeof time);
  }
  std::string hex() const { return fmt::format("{:016x}{:016x}", a, b); }
};

bool isExecutable(const fs::path &path) {
  return !path.empty() && ::access(path.c_str(), X_OK) == 0 && fs::is_regular_file(path);
}

fs::path findKilnc(const std::string &explicitPath) {
  if (!explicitPath.empty()) {
    if (!isExecutable(explicitPath))
      throw ToolError(fmt::format("--kilnc '{}' is not an executable file", explicitPath));
    return explicitPath;
  }
  if (const char *env = std::getenv("KILNC"); env && *env) {
    if (!isExecutable(env))
      throw ToolError(fmt::format("$KILNC '{}' is not an executable file", env));
    return env;
  }
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && isExecutable(self.parent_path() / "kilnc"))
    return self.parent_path() / "kilnc";
  if (const char *path = std::getenv("PATH")) {
    std::string dirs = path;
    size_t start = 0;
    while (start <= dirs.size()) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos)
        end = dirs.size();
      fs::path candidate = fs::path(dirs.substr(start, end - start)) / "kilnc";
      if (end > start && isExecutable(candidate))
        return candidate;
      start = end + 1;
    }
  }
  throw ToolError("cannot find kilnc to compile the model (not next to kiln-run nor on "
                  "PATH); pass --kilnc PATH or compile with kilnc and run the .so");
}

fs::path cacheDirectory(const std::string &explicitDir) {
  if (!explicitDir.empty())
    return explicitDir;
  if (const char *env = std::getenv("KILN_CACHE_DIR"); env && *env)
    return env;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return fs::path(xdg) / "kiln";
  if (const char *home = std::getenv("HOME"); home && *home)
    return fs::path(home) / ".cache" / "kiln";
  throw ToolError("no cache directory for compiled models: set KILN_CACHE_DIR or pass "
                  "--cache-dir");
}

/// Runs argv, waiting for it; returns its exit status (or throws).
int runProcess(const std::vector<std::string> &args) {
  std::vector<char *> argv;
  for (const std::string &arg : args)
    argv.push_back(const_cast<char *>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int error = posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
  if (error != 0)
    throw ToolError(fmt::format("cannot start '{}': {}", args[0], std::strerror(error)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      throw ToolError(fmt::format("waiting for '{}': {}", args[0], std::strerror(errno)));
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

} // namespace

bool needsCompilation(const std::string &model) {
  fs::path ext = fs::path(model).extension();
  return ext == ".onnx" || ext == ".mlir";
}

std::string compileModel(const std::string &model, const CompileOptions &options) {
  if (!fs::is_regular_file(model))
    throw ToolError(fmt::format("'{}': no such model file", model));
  fs::path kilnc = findKilnc(options.kilnc);
  fs::path cache = cacheDirectory(options.cacheDir);

  // The key: the model's bytes, the other files of its directory (external
  // data) by name, size and time, the kilnc binary by size and time, and
  // every argument.
  Hasher key;
  key.text("kiln-run cache v1");
  key.file(model);
  std::error_code ec;
  fs::path dir = fs::absolute(model).parent_path();
  for (const fs::directory_entry &entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file(ec) && entry.path().filename() != fs::path(model).filename())
      key.stamp(entry.path());
  key.stamp(kilnc);
  for (const std::string &arg : options.kilncArgs)
    key.text(arg);

  fs::create_directories(cache, ec);
  if (ec)
    throw ToolError(fmt::format("cannot create the cache directory '{}': {}", cache.string(),
                                ec.message()));
  fs::path artifact = cache / (key.hex() + ".so");
  if (fs::is_regular_file(artifact)) {
    fmt::print("compiled: {} (cached)\n", artifact.string());
    return artifact.string();
  }
  fs::path temporary = cache / fmt::format("{}.{}.tmp.so", key.hex(), ::getpid());
  std::vector<std::string> args = {kilnc.string(), model, "-o", temporary.string()};
  args.insert(args.end(), options.kilncArgs.begin(), options.kilncArgs.end());
  auto start = std::chrono::steady_clock::now();
  int status = runProcess(args);
  if (status != 0) {
    fs::remove(temporary, ec);
    throw ToolError(fmt::format("kilnc failed (exit code {}) to compile '{}'", status, model));
  }
  fs::rename(temporary, artifact, ec);
  if (ec) {
    fs::remove(temporary, ec);
    throw ToolError(fmt::format("cannot store '{}' in the cache: {}", artifact.string(),
                                ec.message()));
  }
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  fmt::print("compiled: {} (kilnc, {:.1f} s)\n", artifact.string(), elapsed.count());
  return artifact.string();
}

} // namespace kilnrun
