// BruteForceEuler.h - the test oracle: builds every cell of the cubical
// complex explicitly on the doubled grid, gives it its value by the
// definition (V: max of its vertices; T: min of the voxels whose cubes contain
// it; NaN voxels absent), and counts cells per threshold by direct
// comparison. Slow and obvious on purpose; shares no code with the kernels.
#pragma once

#include "topovox/EulerCurve.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace topovox
{
namespace test
{
// values: x fastest, dims nx, ny, nz; thresholds in filtration order.
template <typename T>
std::vector<std::array<int64_t, 4>> bruteForceCounts(const std::vector<T>& values,
  const int64_t dims[3], Construction construction, Filtration filtration,
  const std::vector<double>& thresholds)
{
  const bool super = filtration == Filtration::Superlevel;
  const bool tc = construction == Construction::T;
  int64_t cd[3];
  for (int a = 0; a < 3; ++a)
    cd[a] = dims[a] == 1 ? 1 : (tc ? 2 * dims[a] + 1 : 2 * dims[a] - 1);
  auto at = [&](int64_t x, int64_t y, int64_t z) { return values[x + dims[0] * (y + dims[1] * z)]; };
  std::vector<std::array<int64_t, 4>> counts(thresholds.size(), std::array<int64_t, 4>{ 0, 0, 0, 0 });
  for (int64_t cz = 0; cz < cd[2]; ++cz)
    for (int64_t cy = 0; cy < cd[1]; ++cy)
      for (int64_t cx = 0; cx < cd[0]; ++cx)
      {
        const int64_t c[3] = { cx, cy, cz };
        // Per axis, the voxel coordinates this cell touches.
        std::vector<int64_t> span[3];
        int dim = 0;
        for (int a = 0; a < 3; ++a)
        {
          if (dims[a] == 1)
          {
            span[a] = { 0 };
            continue;
          }
          if (!tc)
          {
            if (c[a] % 2)
            {
              span[a] = { (c[a] - 1) / 2, (c[a] + 1) / 2 };
              ++dim;
            }
            else
              span[a] = { c[a] / 2 };
          }
          else
          {
            if (c[a] % 2)
            {
              span[a] = { (c[a] - 1) / 2 };
              ++dim;
            }
            else
            {
              for (int64_t v : { c[a] / 2 - 1, c[a] / 2 })
                if (v >= 0 && v < dims[a])
                  span[a].push_back(v);
            }
          }
        }
        bool present = !tc; // V: all vertices must be numbers; T: any coface
        bool haveValue = false;
        double value = 0;
        for (int64_t z : span[2])
          for (int64_t y : span[1])
            for (int64_t x : span[0])
            {
              const T v = at(x, y, z);
              const bool nan = v != v;
              if (!tc)
              {
                if (nan)
                  present = false;
                else if (!haveValue || (super ? double(v) < value : double(v) > value))
                  value = double(v), haveValue = true;
              }
              else if (!nan)
              {
                present = true;
                if (!haveValue || (super ? double(v) > value : double(v) < value))
                  value = double(v), haveValue = true;
              }
            }
        if (!present)
          continue;
        for (size_t j = 0; j < thresholds.size(); ++j)
        {
          // Compare in T's own type where the threshold is representable;
          // the tests only use thresholds that are values of T.
          const bool in = super ? value >= thresholds[j] : value <= thresholds[j];
          if (in)
            counts[j][dim] += 1;
        }
      }
  return counts;
}
}
}
