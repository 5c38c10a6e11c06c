// BitCast<To>(from): the bits of a trivially copyable value as another type of the same size, as
// C++20's std::bit_cast gives them. GCC 10's library has no std::bit_cast (GCC 11's has): the
// relocatable bundle is to build with GCC 10 (docs/bundle-baseline.md), so where the
// library lacks it, the bits are copied with memcpy, which the compiler folds into a register move
// as it does std::bit_cast. Not constexpr there: use it in constant expressions only through
// constants the compiler folds (const, not constexpr).
#ifndef HVDRUN_RUNTIME_BIT_CAST_H_
#define HVDRUN_RUNTIME_BIT_CAST_H_

#include <bit>
#include <cstring>
#include <type_traits>

namespace hvdrun {

template <typename To, typename From>
requires(sizeof(To) == sizeof(From) && std::is_trivially_copyable_v<To> && std::is_trivially_copyable_v<From>)
#if defined(__cpp_lib_bit_cast)
    constexpr To BitCast(const From& from) noexcept {
  return std::bit_cast<To>(from);
}
#else
    inline To BitCast(const From& from) noexcept {
  To to{};
  std::memcpy(&to, &from, sizeof(To));
  return to;
}
#endif

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BIT_CAST_H_
