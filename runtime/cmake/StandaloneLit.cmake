# Lets a standalone runtime build run the kiln-run lit tests:
#   lit build-rt/test --filter kiln-run
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
find_program(KILN_FILECHECK NAMES FileCheck FileCheck-22
  PATHS /usr/lib/llvm-22/bin NO_DEFAULT_PATH)
if(NOT KILN_FILECHECK)
  message(STATUS "FileCheck not found: the standalone build has no lit config")
  return()
endif()
get_filename_component(KILN_LLVM_TOOLS_DIR ${KILN_FILECHECK} DIRECTORY)
file(WRITE ${CMAKE_BINARY_DIR}/test/lit.site.cfg.py "\
# Written by runtime/cmake/StandaloneLit.cmake.
config.llvm_tools_dir = '${KILN_LLVM_TOOLS_DIR}'
config.kiln_tools_dir = '${CMAKE_BINARY_DIR}/bin'
config.kiln_src_root = '${KILN_SOURCE_ROOT}'
config.kiln_obj_root = '${CMAKE_BINARY_DIR}'
config.python_executable = ''
import lit.llvm
lit.llvm.initialize(lit_config, config)
lit_config.load_config(config, '${KILN_SOURCE_ROOT}/test/lit.cfg.py')
")
