# The compiler and linker flags of hvdrun's builds, for dpkg-buildflags: debian/rules includes this
# file, and scripts/quickstart.sh sources it (a line here is both make and shell: keep each value one
# word) to build the tests with the flags the packages ship with. Two builds with the same flags
# compile the same objects, so that the package test's build (packaging/test-debs.sh) takes every
# one from the compiler cache the test build filled, and the tests run the code as it is packaged.
#
# - Hardening: every feature dpkg-buildflags has.
# - -g1 (line tables: a backtrace still names functions, files and lines, inlined frames too)
#   instead of -g: full debug information makes the files that include libtorch half as long
#   again to compile (9.0 s against 13.6 s for examples/trainer/gradient_reducer.cc), and the
#   -dbgsym packages six times as large (45 MB against 7.8 MB).
# - A program links only the libraries it uses, so that ${shlibs:Depends} names no other.
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
export DEB_CXXFLAGS_MAINT_STRIP=-g
export DEB_CXXFLAGS_MAINT_APPEND=-g1
export DEB_LDFLAGS_MAINT_APPEND=-Wl,--as-needed
