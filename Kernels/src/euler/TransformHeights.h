// TransformHeights.h - the height image of one direction of the Euler
// characteristic transform (EulerTransform.h), the one formula that both the
// engine and the tests' brute force use:
//   h(p) = weight * X(p) + alpha * <u, origin + spacing * p>,
// NaN where X is NaN or p is outside the shape (X < shapeLevel).
#pragma once

#include "topovox/EulerTransform.h"

#include "../common/Parallel.h"
#include "../common/ScalarDispatch.h"

#include <cmath>
#include <vector>

namespace topovox
{
namespace euler
{
inline double transformHeight(double x, const double u[3], const double position[3], const EulerTransformOptions& o)
{
  if (x != x || (o.shapeLevel == o.shapeLevel && !(x >= o.shapeLevel)))
    return std::numeric_limits<double>::quiet_NaN();
  const double along = u[0] * position[0] + u[1] * position[1] + u[2] * position[2];
  return (o.weight != 0 ? o.weight * x : 0.0) + o.alpha * along;
}

// Heights of every voxel of `grid` (halo included), x fastest, into h.
inline void transformHeights(
  const GridView& grid, const EulerTransformOptions& o, const double u[3], int threads, std::vector<double>& h)
{
  h.resize(static_cast<size_t>(grid.voxelCount()));
  dispatchScalarType(grid.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* data = static_cast<const T*>(grid.data);
    parallelFor(grid.dims[1] * grid.dims[2], threads, [&](int, int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
      {
        const int64_t y = r % grid.dims[1], z = r / grid.dims[1];
        for (int64_t x = 0; x < grid.dims[0]; ++x)
        {
          const double position[3] = { o.origin[0] + o.spacing[0] * static_cast<double>(x),
            o.origin[1] + o.spacing[1] * static_cast<double>(y), o.origin[2] + o.spacing[2] * static_cast<double>(z) };
          const double v = static_cast<double>(data[x * grid.strides[0] + y * grid.strides[1] + z * grid.strides[2]]);
          h[static_cast<size_t>(x + grid.dims[0] * r)] = transformHeight(v, u, position, o);
        }
      }
    });
  });
}
}
}
