# hvdrun's CMake package: find_package(hvdrun 0.2 REQUIRED) gives the imported target
# hvdrun::hvdrun, libhvdrun with its include directory and the C++17 its headers need:
#
#   find_package(hvdrun 0.2 REQUIRED)
#   add_executable(app app.cc)
#   target_link_libraries(app PRIVATE hvdrun::hvdrun)
#
# The library's own dependencies (Gloo, MPI) are private to it: a program needs none of them.
include(${CMAKE_CURRENT_LIST_DIR}/hvdrunTargets.cmake)
