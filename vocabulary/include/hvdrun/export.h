// HVDRUN_EXPORT marks what libhvdrun exports: its public API, the declarations in the hvdrun/ headers.
//
// The library is built with hidden visibility by default (runtime/CMakeLists.txt), so that its
// internals are not part of its ABI and cannot clash with a program's own symbols; the classes and
// functions declared in these headers carry HVDRUN_EXPORT, everything else stays inside the library.
// A program that uses the library needs nothing of this: with GCC and Clang on ELF the same
// attribute both exports a definition and imports a declaration.
#ifndef HVDRUN_EXPORT_H_
#define HVDRUN_EXPORT_H_

#define HVDRUN_EXPORT __attribute__((visibility("default")))
// For the library's private classes declared inside exported ones (Runtime::Impl), which would
// otherwise be exported with their enclosing class.
#define HVDRUN_NO_EXPORT __attribute__((visibility("hidden")))

#endif  // HVDRUN_EXPORT_H_
