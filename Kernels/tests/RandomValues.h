// RandomValues.h - the tests' random images: n values drawn uniformly from
// the integers 0 .. levels-1 and stored as T, so that few levels give
// plateaus and ties (the inputs where orders and tie-breaks matter) and
// many give noise.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace kernel_check
{
template <typename T>
std::vector<T> randomValues(std::mt19937_64& rng, size_t n, int levels)
{
  std::uniform_int_distribution<int> level(0, levels - 1);
  std::vector<T> v(n);
  for (T& x : v)
    x = static_cast<T>(level(rng));
  return v;
}
} // namespace kernel_check
