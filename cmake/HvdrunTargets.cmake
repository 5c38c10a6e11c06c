# Settings every hvdrun target shares: warnings, and the include root so that
# headers are included by their path from the repository root ("common/placement/host_spec.h"). libhvdrun's
# public headers ("hvdrun/status.h") come with the targets that provide them (hvdrun_vocabulary,
# hvdrun_runtime), so that a target that uses them without linking them does not build.

function(hvdrun_target_defaults target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion -Wnon-virtual-dtor>)
  # CUDA sources (nvcc): its own warnings, and the host compiler's through -Xcompiler.
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
  if(HVDRUN_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>
                                             $<$<COMPILE_LANGUAGE:CUDA>:--Werror=all-warnings>)
  endif()
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
endfunction()

# hvdrun_add_unit_tests(SOURCES a_test.cc ... LIBRARIES lib ...): adds a folder's unit tests to the
# single hvdrun_unit_tests binary (registered with CTest in tests/CMakeLists.txt).
function(hvdrun_add_unit_tests)
  if(NOT HVDRUN_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES" ${ARGN})
  target_sources(hvdrun_unit_tests PRIVATE ${ARG_SOURCES})
  target_link_libraries(hvdrun_unit_tests PRIVATE ${ARG_LIBRARIES})
endfunction()
