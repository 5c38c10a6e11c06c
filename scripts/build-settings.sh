# shellcheck shell=bash
# Sourced, not run: the settings every scripted build of this tree shares, so that they compile
# each file with the same arguments. scripts/quickstart.sh's two modes use it; so can any other
# script that builds the tree (a relocatable bundle, a Release check).
#
#   hvdrun_build_settings TREE [demo|test|release-check]
#
# exports the compiler-cache settings below and sets the array hvdrun_cmake_args to the configure
# arguments of the named build (without -S and -B):
#   test           build type None, as Debian's, tests built, warnings as errors: CI's build
#   demo           build type Release, no tests, warnings shown but not fatal: the README's demo,
#                  which a newer compiler's new warning must not stop. Only what the demo runs:
#                  hvdrun, hvdrun-agent, hvdrun-lab, hvdrun-trainer, libhvdrun with its Gloo and MPI
#                  backends (no hvdrun-bench, hvdrun.torch or NCCL backend), from what
#                  `install-deps.sh demo` installs
#   release-check  the demo's build with warnings as errors, and hvdrun-bench's and hvdrun.torch's
#                  Release build (where their dependencies are installed): what fails when the
#                  demo's build, or a Release build of the rest, would print a compiler warning. It
#                  compiles the demo's objects (the cache ignores -Werror), so a machine that runs
#                  both compiles them once.
# Every build sets each option it depends on, so that another build's cached settings in the same
# build directory (a Release build without tests, or warnings as errors) never carry over.
#
# All compile with the flags the Debian packages are built with (dpkg-buildflags with
# packaging/debian/buildflags.mk: hardening, -g1 line tables), through ccache. The package test's
# build compiles the same files with the same arguments in a copy of this tree, under it: with the
# settings below, ccache gives it the test build's objects instead of compiling them again.
#   CCACHE_DIR           named, as debhelper gives the package build another HOME
#   CCACHE_BASEDIR       paths under this tree are hashed relative to the build directory
#   CCACHE_IGNOREOPTIONS the test build's -Werror changes no object; the package build has none
# Build with LC_ALL=C.UTF-8, as debhelper does: ccache keys hold the locale, in which the compiler
# writes its messages.
hvdrun_build_settings() {
  local tree=$1 build=${2:-test}
  export CCACHE_DIR=${CCACHE_DIR:-$(ccache -k cache_dir)}
  export CCACHE_BASEDIR=$tree
  export CCACHE_IGNOREOPTIONS=-Werror
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache
  local cxxflags cppflags ldflags
  cxxflags=$(hvdrun_buildflag "$tree" CXXFLAGS)
  cppflags=$(hvdrun_buildflag "$tree" CPPFLAGS)
  ldflags=$(hvdrun_buildflag "$tree" LDFLAGS)
  hvdrun_cmake_args=(-G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_FLAGS="$cxxflags $cppflags"
    -DCMAKE_EXE_LINKER_FLAGS="$ldflags" -DCMAKE_SHARED_LINKER_FLAGS="$ldflags"
    -DCMAKE_MODULE_LINKER_FLAGS="$ldflags")
  case "$build" in
    # -U: the option's default, a part built where its dependencies are (python/CMakeLists.txt,
    # runtime/CMakeLists.txt).
    test) hvdrun_cmake_args+=(-DCMAKE_BUILD_TYPE=None -DHVDRUN_BUILD_TESTS=ON -DHVDRUN_WERROR=ON
      -DHVDRUN_WITH_BENCH=ON -UHVDRUN_PYTHON -UHVDRUN_WITH_NCCL) ;;
    demo) hvdrun_cmake_args+=(-DCMAKE_BUILD_TYPE=Release -DHVDRUN_BUILD_TESTS=OFF -DHVDRUN_WERROR=OFF
      -DHVDRUN_WITH_BENCH=OFF -DHVDRUN_PYTHON=OFF -DHVDRUN_WITH_NCCL=OFF) ;;
    release-check) hvdrun_cmake_args+=(-DCMAKE_BUILD_TYPE=Release -DHVDRUN_BUILD_TESTS=OFF -DHVDRUN_WERROR=ON
      -DHVDRUN_WITH_BENCH=ON -UHVDRUN_PYTHON -UHVDRUN_WITH_NCCL) ;;
    *)
      echo "hvdrun_build_settings: no build '$build' (test, demo or release-check)" >&2
      return 2
      ;;
  esac
}

# hvdrun_buildflag TREE NAME: dpkg-buildflags' NAME with the packages' settings, from the tree, as
# dpkg-buildflags maps the current directory's paths (-ffile-prefix-map).
hvdrun_buildflag() {
  # shellcheck source=packaging/debian/buildflags.mk
  (cd "$1" && . packaging/debian/buildflags.mk && dpkg-buildflags --get "$2")
}
