# One precompiled header (KilnPrecompiledHeaders.h) built once, by the object
# library kiln_pch, and reused by every compiler library under lib/ (the
# `obj.*` object libraries of add_mlir_library). On a cold build this halves
# the compile time of a typical pass; docs/building.md has the measurements.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

option(KILN_PRECOMPILED_HEADERS "Compile lib/ against one precompiled header of MLIR/LLVM headers" ON)

# ccache caches units compiled against a precompiled header only when told
# that the PCH's defines and __TIME__ cannot change the result.
function(kiln_ccache_launcher ccache)
  set(launcher ${CMAKE_COMMAND} -E env
      "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
      ${ccache})
  set(CMAKE_C_COMPILER_LAUNCHER ${launcher} PARENT_SCOPE)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${launcher} PARENT_SCOPE)
endfunction()

function(kiln_collect_object_libraries dir out)
  set(found)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    if(target MATCHES "^obj\\.Kiln")
      list(APPEND found ${target})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    kiln_collect_object_libraries(${subdir} nested)
    list(APPEND found ${nested})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# Call after add_subdirectory(lib).
function(kiln_precompile_headers)
  if(NOT KILN_PRECOMPILED_HEADERS)
    return()
  endif()
  add_library(kiln_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/KilnPrecompiledHeaders.cpp)
  set_target_properties(kiln_pch PROPERTIES POSITION_INDEPENDENT_CODE ON)
  # The flags add_mlir_library gives its libraries (-fno-exceptions, ...):
  # GCC ignores a PCH built with other settings (-Winvalid-pch says so).
  llvm_update_compile_flags(kiln_pch)
  target_precompile_headers(kiln_pch PRIVATE ${PROJECT_SOURCE_DIR}/cmake/KilnPrecompiledHeaders.h)
  kiln_collect_object_libraries(${PROJECT_SOURCE_DIR}/lib libraries)
  foreach(library IN LISTS libraries)
    target_precompile_headers(${library} REUSE_FROM kiln_pch)
  endforeach()
  list(LENGTH libraries count)
  message(STATUS "Kiln: ${count} compiler libraries reuse one precompiled header")
endfunction()
