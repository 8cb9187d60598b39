// GridValues.h - a GridView's samples read in the kernels' order (x
// fastest), whatever its strides: visited, packed into a contiguous vector,
// or converted to doubles.
#pragma once

#include "topovox/Grid.h"

#include "ScalarDispatch.h"

#include <cstdint>
#include <vector>

namespace topovox
{
// visit(k, value) for every voxel k (x fastest) of a grid of type T, in order.
template <typename T, typename Visit>
void forEachValue(const GridView& g, Visit visit)
{
  const T* d = static_cast<const T*>(g.data);
  int64_t k = 0;
  for (int64_t z = 0; z < g.dims[2]; ++z)
    for (int64_t y = 0; y < g.dims[1]; ++y)
      for (int64_t x = 0; x < g.dims[0]; ++x)
        visit(k++, d[x * g.strides[0] + y * g.strides[1] + z * g.strides[2]]);
}

// The samples of a grid of type T, packed.
template <typename T>
std::vector<T> packedValues(const GridView& g)
{
  std::vector<T> out(static_cast<size_t>(g.voxelCount()));
  forEachValue<T>(g, [&](int64_t k, T v) { out[static_cast<size_t>(k)] = v; });
  return out;
}

// The samples as doubles, whatever the grid's type.
inline std::vector<double> valuesAsDouble(const GridView& g)
{
  std::vector<double> out(static_cast<size_t>(g.voxelCount()));
  dispatchScalarType(g.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    forEachValue<T>(g, [&](int64_t k, T v) { out[static_cast<size_t>(k)] = static_cast<double>(v); });
  });
  return out;
}
} // namespace topovox
