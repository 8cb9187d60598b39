// NativeThresholds.h - thresholds given as doubles, turned into the image's
// scalar type without changing which values satisfy "v <= t" (sublevel) or
// "v >= t" (superlevel): t becomes the largest value of the type <= t (the
// smallest >= t for superlevel). Thresholds that no value of the type can
// reach (t below the type's lowest value, sublevel) are counted in `skipped`
// and left out; since thresholds are monotone they can only lead the list.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

namespace topovox
{
namespace euler
{
template <typename T>
struct NativeThresholds
{
  std::vector<T> values;
  int skipped = 0;
};

template <typename T>
NativeThresholds<T> toNative(const std::vector<double>& thresholds, bool superlevel)
{
  NativeThresholds<T> out;
  for (double t : thresholds)
  {
    if constexpr (std::is_floating_point<T>::value)
    {
      T v = static_cast<T>(t);
      if (!superlevel && static_cast<double>(v) > t)
        v = std::nextafter(v, -std::numeric_limits<T>::infinity());
      if (superlevel && static_cast<double>(v) < t)
        v = std::nextafter(v, std::numeric_limits<T>::infinity());
      out.values.push_back(v);
    }
    else
    {
      // 2^digits is one past the type's max and exact in a double (the max
      // itself is not, for 64-bit types); r is integral, so r > max is r >= it.
      const double pastMax = std::ldexp(1.0, std::numeric_limits<T>::digits);
      const double lowest = std::is_signed<T>::value ? -pastMax : 0.0;
      const double r = superlevel ? std::ceil(t) : std::floor(t);
      if ((!superlevel && r < lowest) || (superlevel && r >= pastMax))
      {
        ++out.skipped;
        continue;
      }
      // Clamping keeps the meaning: every value is <= max and >= lowest.
      if (r >= pastMax)
        out.values.push_back(std::numeric_limits<T>::max());
      else if (r <= lowest)
        out.values.push_back(std::numeric_limits<T>::lowest());
      else
        out.values.push_back(static_cast<T>(r));
    }
  }
  return out;
}
}
}
