// PersistenceCurve.cpp - counts of pairs above each persistence, per
// dimension: one sort and one sweep from the longest-lived pairs down.
#include "topovox/Persistence.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace topovox
{
PersistenceCurve persistenceCurve(const std::vector<int>& dimensions, const std::vector<double>& persistence)
{
  if (dimensions.size() != persistence.size())
    throw std::invalid_argument("the pair dimensions and persistences differ in number");
  std::vector<size_t> order(persistence.size());
  std::iota(order.begin(), order.end(), size_t(0));
  for (size_t i = 0; i < order.size(); ++i)
  {
    if (dimensions[i] < 0 || dimensions[i] > 3)
      throw std::invalid_argument("a pair has a dimension outside 0..3");
    if (!(persistence[i] >= 0))
      throw std::invalid_argument("a pair has a negative or NaN persistence");
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return persistence[a] > persistence[b]; });
  // Sweep from the largest persistence down; record at each distinct value.
  PersistenceCurve curve;
  std::array<int64_t, 4> alive{ 0, 0, 0, 0 };
  for (size_t k = 0; k < order.size(); ++k)
  {
    const size_t i = order[k];
    ++alive[static_cast<size_t>(dimensions[i])];
    const bool lastOfValue = k + 1 == order.size() || persistence[order[k + 1]] != persistence[i];
    if (lastOfValue && std::isfinite(persistence[i]))
    {
      curve.persistence.push_back(persistence[i]);
      curve.pairs.push_back(alive);
    }
  }
  std::reverse(curve.persistence.begin(), curve.persistence.end());
  std::reverse(curve.pairs.begin(), curve.pairs.end());
  return curve;
}
}
