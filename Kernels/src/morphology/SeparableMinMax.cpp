// SeparableMinMax.cpp - scipy's separable minimum/maximum filter
// (SeparableMinMax.h), lines on the CPU threads.
#include "SeparableMinMax.h"

#include "MorphologyVoxel.h"

#include "../common/Parallel.h"

#include <algorithm>

namespace topovox
{
namespace morphology
{
namespace
{
struct Entry
{
  double value;
  int64_t death; // the position at which it leaves the window
};

// One line: `in` is the line extended by size1 + origin samples before and
// size2 - origin after (n + k - 1 values); out gets n values. The ring holds
// candidate minima in ascending order from `front` to `back`.
void sweepLine(const double* in, int64_t n, int64_t k, bool minimum, std::vector<Entry>& ring, double* out)
{
  if (k == 1)
  {
    std::copy(in, in + n, out);
    return;
  }
  ring.resize(static_cast<size_t>(k));
  auto next = [&](size_t i) { return i + 1 == ring.size() ? 0 : i + 1; };
  auto previous = [&](size_t i) { return i == 0 ? ring.size() - 1 : i - 1; };
  // The new value takes the front's place when it is at least as good (a
  // NaN never is); otherwise it pops every entry at the back that is no
  // better than it (a NaN pops nothing and is never popped by a number).
  auto takesFront = [minimum](double v, double front) { return minimum ? v <= front : v >= front; };
  auto noBetter = [minimum](double entry, double v) { return minimum ? entry >= v : entry <= v; };
  size_t front = 0, back = 0;
  ring[0] = { in[0], k };
  for (int64_t t = 1; t < n + k - 1; ++t)
  {
    const double value = in[t];
    if (ring[front].death == t)
      front = next(front);
    if (takesFront(value, ring[front].value))
    {
      ring[front] = { value, t + k };
      back = front;
    }
    else
    {
      while (noBetter(ring[back].value, value))
        back = previous(back);
      back = next(back);
      ring[back] = { value, t + k };
    }
    if (t >= k - 1)
      out[t - (k - 1)] = ring[front].value;
  }
}
} // namespace

bool isSeparableBox(const StructuringElement& s)
{
  return s.values.empty() && std::all_of(s.footprint.begin(), s.footprint.end(), [](uint8_t f) { return f != 0; });
}

template <typename T>
void separableMinOrMax(std::vector<T>& values, const int64_t dims[3], const StructuringElement& s, bool minimum,
  const GreyOptions& o)
{
  const int64_t stride[3] = { 1, dims[0], dims[0] * dims[1] };
  std::vector<T> next(values.size());
  for (int a = 2; a >= 0; --a) // numpy's axis order: z, y, x
  {
    const int64_t k = s.dims[a];
    if (k <= 1)
      continue;
    const int64_t n = dims[a];
    const int64_t before = k / 2 + s.origin[a]; // and k - 1 - before after the line
    const int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
    parallelFor(dims[b] * dims[c], threadCount(o.threads), [&](int, int64_t l0, int64_t l1) {
      std::vector<double> line(static_cast<size_t>(n + k - 1)), result(static_cast<size_t>(n));
      std::vector<Entry> ring;
      for (int64_t l = l0; l < l1; ++l)
      {
        const int64_t first = (l % dims[b]) * stride[b] + (l / dims[b]) * stride[c];
        for (int64_t t = 0; t < n + k - 1; ++t)
        {
          const int64_t at = extendIndex(t - before, n, static_cast<int>(o.mode));
          line[static_cast<size_t>(t)] = at < 0 ? o.cval : static_cast<double>(values[static_cast<size_t>(first + at * stride[a])]);
        }
        sweepLine(line.data(), n, k, minimum, ring, result.data());
        for (int64_t i = 0; i < n; ++i)
          next[static_cast<size_t>(first + i * stride[a])] = static_cast<T>(result[static_cast<size_t>(i)]);
      }
    });
    values.swap(next);
  }
}

template void separableMinOrMax<float>(std::vector<float>&, const int64_t[3], const StructuringElement&, bool,
  const GreyOptions&);
template void separableMinOrMax<double>(std::vector<double>&, const int64_t[3], const StructuringElement&, bool,
  const GreyOptions&);
}
}
