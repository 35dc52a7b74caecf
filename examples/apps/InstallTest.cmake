# ctest examples.installed_package: install the runtime component of the Kiln
# build into a fresh prefix, configure examples/apps against it with
# find_package(KilnRuntime), build, and run run_model on MODEL, once with
# kiln::runtime and once with kiln::runtime_static.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
foreach(var KILN_BUILD_DIR APPS_SOURCE_DIR WORK_DIR MODEL)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "InstallTest.cmake needs -D${var}=...")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${KILN_BUILD_DIR} --component KilnRuntime --prefix ${prefix})
foreach(file include/kiln-c/runtime.h lib/cmake/KilnRuntime/KilnRuntimeConfig.cmake)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "the install has no ${file}")
  endif()
endforeach()

foreach(kind shared static)
  if(kind STREQUAL "static")
    set(static ON)
  else()
    set(static OFF)
  endif()
  set(build ${WORK_DIR}/build-${kind})
  run(${CMAKE_COMMAND} -S ${APPS_SOURCE_DIR} -B ${build} -DCMAKE_PREFIX_PATH=${prefix}
      -DKILN_RUNTIME_STATIC=${static} -DCMAKE_BUILD_TYPE=Release)
  run(${CMAKE_COMMAND} --build ${build})
  run(${build}/run_model ${MODEL} 1)
  if(NOT last_output MATCHES "output 'output_0' f32 \\[1, 4\\]")
    message(FATAL_ERROR "${kind}: unexpected output:\n${last_output}")
  endif()
  # The static build must not need libkiln_runtime.so at run time.
  run(readelf -d ${build}/run_model)
  if(static AND last_output MATCHES "libkiln_runtime")
    message(FATAL_ERROR "the static build still needs libkiln_runtime.so")
  elseif(NOT static AND NOT last_output MATCHES "libkiln_runtime")
    message(FATAL_ERROR "the shared build does not link libkiln_runtime.so")
  endif()
  message(STATUS "${kind} ok")
endforeach()
message("installed package: shared ok, static ok")
