// OrderKeys.cuh - unsigned integer keys whose order is the filtration order,
// so that the GPU compares each neighbour with one integer comparison.
//   unsigned ints: the value; signed ints: the value with its sign bit flipped;
//   floats: the IEEE bits made monotone (-0 first made +0, so -0 == +0 as in
//   the CPU path's comparisons); NaN -> the largest key, after every number.
//   Superlevel filtrations invert every non-NaN key.
// Keys are 32-bit for types up to 4 bytes and 64-bit otherwise.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace topovox
{
namespace euler
{
template <typename T>
using KeyOf = typename std::conditional<(sizeof(T) <= 4), uint32_t, uint64_t>::type;

template <typename T, bool Super>
__host__ __device__ __forceinline__ KeyOf<T> orderKey(T v)
{
  using K = KeyOf<T>;
  K k;
  if constexpr (std::is_floating_point<T>::value)
  {
    using Bits = typename std::conditional<(sizeof(T) == 4), uint32_t, uint64_t>::type;
    if (v != v)
      return ~K(0); // NaN: last, in either direction
    if (v == T(0))
      v = T(0); // -0 -> +0
    Bits b;
    memcpy(&b, &v, sizeof(T));
    const Bits sign = Bits(1) << (8 * sizeof(T) - 1);
    k = static_cast<K>((b & sign) ? ~b : (b | sign));
  }
  else if constexpr (std::is_signed<T>::value)
  {
    using U = typename std::make_unsigned<T>::type;
    k = static_cast<K>(static_cast<U>(static_cast<U>(v) ^ (U(1) << (8 * sizeof(T) - 1))));
  }
  else
    k = static_cast<K>(v);
  return Super ? static_cast<K>(~k) : k;
}

// The value behind a (non-NaN) key, as a double: used only to guess a
// threshold bin, which comparisons of keys then make exact.
template <typename T, bool Super>
__host__ __device__ __forceinline__ double keyValue(KeyOf<T> key)
{
  using K = KeyOf<T>;
  const K k = Super ? static_cast<K>(~key) : key;
  if constexpr (std::is_floating_point<T>::value)
  {
    using Bits = typename std::conditional<(sizeof(T) == 4), uint32_t, uint64_t>::type;
    const Bits sign = Bits(1) << (8 * sizeof(T) - 1);
    Bits b = static_cast<Bits>(k);
    b = (b & sign) ? (b ^ sign) : static_cast<Bits>(~b);
    T v;
    memcpy(&v, &b, sizeof(T));
    return static_cast<double>(v);
  }
  else if constexpr (std::is_signed<T>::value)
  {
    using U = typename std::make_unsigned<T>::type;
    return static_cast<double>(
      static_cast<T>(static_cast<U>(static_cast<U>(k) ^ (U(1) << (8 * sizeof(T) - 1)))));
  }
  else
    return static_cast<double>(static_cast<T>(k));
}
}
}
