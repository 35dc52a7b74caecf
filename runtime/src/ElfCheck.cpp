//===- ElfCheck.cpp - Checks an artifact's ELF headers before dlopen -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Only what dlopen would trust without checking: the identification, the
// file type and machine, and that the program headers, every segment's file
// bytes and the section headers lie inside the file.
//
//===----------------------------------------------------------------------===//

#include "ElfCheck.h"

#include "Status.h"

#include <cstring>
#include <elf.h>
#include <unistd.h>
#include <vector>

namespace kiln::rt {
namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#else
#error "unsupported host architecture"
#endif

bool readAt(int fd, void *buffer, size_t bytes, uint64_t offset) {
  ssize_t got = ::pread(fd, buffer, bytes, static_cast<off_t>(offset));
  return got == static_cast<ssize_t>(bytes);
}

/// "" if [offset, offset + count * size) lies inside the file.
std::string checkExtent(const char *what, uint64_t offset, uint64_t count,
                        uint64_t size, uint64_t fileBytes) {
  uint64_t bytes = 0, end = 0;
  if (__builtin_mul_overflow(count, size, &bytes) ||
      __builtin_add_overflow(offset, bytes, &end))
    return cat("corrupt ELF header: ", what, " extent overflows");
  if (end > fileBytes)
    return cat("truncated: ", what, " end at byte ", end, ", the file has ",
               fileBytes);
  return "";
}

std::string checkIdentity(const Elf64_Ehdr &header) {
  if (header.e_ident[EI_CLASS] != ELFCLASS64)
    return "a 32-bit ELF file; artifacts are 64-bit shared libraries";
  if (header.e_ident[EI_DATA] != ELFDATA2LSB)
    return "a big-endian ELF file; artifacts are little-endian";
  if (header.e_type != ET_DYN)
    return "an ELF file but not a shared library";
  if (header.e_machine != kHostMachine)
    return cat("built for another architecture (ELF machine ", header.e_machine,
               ", this host is ", kHostMachine, ")");
  return "";
}

std::string checkSegments(int fd, const Elf64_Ehdr &header, uint64_t fileBytes) {
  if (header.e_phnum == 0 || header.e_phentsize != sizeof(Elf64_Phdr))
    return "corrupt ELF header: no usable program headers";
  std::string problem = checkExtent("the program headers", header.e_phoff,
                                    header.e_phnum, sizeof(Elf64_Phdr), fileBytes);
  if (!problem.empty())
    return problem;
  std::vector<Elf64_Phdr> segments(header.e_phnum);
  if (!readAt(fd, segments.data(), segments.size() * sizeof(Elf64_Phdr),
              header.e_phoff))
    return "cannot read the program headers";
  for (size_t i = 0; i < segments.size(); ++i) {
    std::string what = cat("segment ", i, "'s bytes");
    problem = checkExtent(what.c_str(), segments[i].p_offset, 1,
                          segments[i].p_filesz, fileBytes);
    if (!problem.empty())
      return problem;
  }
  return "";
}

} // namespace

std::string checkSharedLibraryHeaders(int fd, uint64_t fileBytes) {
  Elf64_Ehdr header;
  std::memset(&header, 0, sizeof(header));
  if (fileBytes < SELFMAG || !readAt(fd, &header, SELFMAG, 0) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    return "not a shared library (no ELF header)";
  if (fileBytes < sizeof(header) || !readAt(fd, &header, sizeof(header), 0))
    return cat("truncated: the file has only ", fileBytes, " bytes");
  std::string problem = checkIdentity(header);
  if (problem.empty())
    problem = checkSegments(fd, header, fileBytes);
  if (problem.empty() && header.e_shoff && header.e_shnum)
    problem = checkExtent("the section headers", header.e_shoff, header.e_shnum,
                          sizeof(Elf64_Shdr), fileBytes);
  return problem;
}

} // namespace kiln::rt
