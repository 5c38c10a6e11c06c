# Included by the top-level CMakeLists.txt when HVDRUN_FUZZERS=ON, before any target: every object of
# the build directory is compiled for libFuzzer's coverage (fuzzer-no-link) and with AddressSanitizer
# and UBSan, any undefined behaviour fatal, so that a fuzzer built on a library (hvdrun_common,
# hvdrun_lab_core) explores and checks the library's code as its own. The libraries' own sources are
# what is fuzzed; FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION (libFuzzer's convention) turns the checks a
# release keeps quiet (a non-finite number reaching a report, lab/number_text.h) into crashes.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "HVDRUN_FUZZERS=ON needs clang++ (configure with -DCMAKE_CXX_COMPILER=clang++); "
                      "the compiler is ${CMAKE_CXX_COMPILER_ID}")
endif()
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
add_compile_definitions(FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
add_link_options(-fsanitize=address,undefined)
