// DiagramDistance.cpp - diagram distances (DiagramDistance.h): the
// augmented transport problem, padded to a square one for the dense
// log-domain Sinkhorn of Sinkhorn.h (zero masses give zero plan rows).
#include "topovox/DiagramDistance.h"

#include "topovox/Sinkhorn.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace topovox
{
namespace
{
double groundDistance(const DiagramPoint& x, const DiagramPoint& y, double p)
{
  const double db = std::fabs(x.birth - y.birth), dd = std::fabs(x.death - y.death);
  if (std::isinf(p))
    return std::max(db, dd);
  return std::pow(std::pow(db, p) + std::pow(dd, p), 1.0 / p);
}

double toDiagonal(const DiagramPoint& x, double p)
{
  const double length = std::fabs(x.death - x.birth);
  return std::isinf(p) ? length / 2 : length * std::pow(2.0, 1.0 / p - 1.0);
}
} // namespace

DiagramDistance diagramDistance(
  const std::vector<DiagramPoint>& X, const std::vector<DiagramPoint>& Y, const DiagramDistanceOptions& o)
{
  if (!(o.order >= 1) || std::isinf(o.order))
    throw std::invalid_argument("the order q must be a finite number >= 1");
  if (!(o.internalP >= 1))
    throw std::invalid_argument("the internal p must be >= 1 (or infinite)");
  if (!(o.relativeReg > 0) || std::isinf(o.relativeReg))
    throw std::invalid_argument("the relative regularisation must be positive and finite");
  for (const auto* d : { &X, &Y })
    for (const DiagramPoint& x : *d)
      if (!std::isfinite(x.birth) || !std::isfinite(x.death))
        throw std::invalid_argument("diagram points must be finite (essential classes are compared apart)");
  const int64_t n = static_cast<int64_t>(X.size()), m = static_cast<int64_t>(Y.size());
  DiagramDistance r;
  r.matchX.assign(X.size(), -1);
  r.matchY.assign(Y.size(), -1);
  if (n == 0 && m == 0)
    return r;
  // Rows: X then its diagonal; columns: Y then theirs; padded to N x N.
  const int64_t N = std::max(n, m) + 1;
  std::vector<double> a(static_cast<size_t>(N), 0.0), b(a), M(static_cast<size_t>(N * N), 0.0);
  const double mass = static_cast<double>(n + m);
  for (int64_t i = 0; i < n; ++i)
    a[static_cast<size_t>(i)] = 1.0 / mass;
  a[static_cast<size_t>(N - 1)] = static_cast<double>(m) / mass;
  for (int64_t j = 0; j < m; ++j)
    b[static_cast<size_t>(j)] = 1.0 / mass;
  b[static_cast<size_t>(N - 1)] = static_cast<double>(n) / mass;
  double largest = 0;
  auto cost = [&](int64_t i, int64_t j) -> double& { return M[static_cast<size_t>(i * N + j)]; };
  for (int64_t i = 0; i < n; ++i)
  {
    for (int64_t j = 0; j < m; ++j)
      cost(i, j) = std::pow(groundDistance(X[static_cast<size_t>(i)], Y[static_cast<size_t>(j)], o.internalP), o.order);
    cost(i, N - 1) = std::pow(toDiagonal(X[static_cast<size_t>(i)], o.internalP), o.order);
  }
  for (int64_t j = 0; j < m; ++j)
    cost(N - 1, j) = std::pow(toDiagonal(Y[static_cast<size_t>(j)], o.internalP), o.order);
  for (double c : M)
    largest = std::max(largest, c);
  if (largest == 0)
    return r; // every point on the diagonal, or the same diagrams of such
  SinkhornOptions so;
  so.method = SinkhornMethod::SinkhornLog;
  so.reg = o.relativeReg * largest;
  so.numItermax = o.numItermax;
  so.stopThr = o.stopThr / mass;
  so.computePlans = true;
  so.threads = o.threads;
  so.device = Device::CPU;
  const SinkhornResult s = sinkhorn(a, b, M, 1, N, so);
  r.iterations = s.iterations[0];
  r.warnings = s.warnings;
  r.distance = std::pow(std::max(0.0, s.costs[0] * mass), 1.0 / o.order);
  // Each point goes where most of its mass does: a point of the other
  // diagram, or the diagonal (the last row and column, reported as -1).
  // transposed: the columns of the plan (points of Y) instead of its rows.
  auto match = [&](int64_t count, int64_t others, bool transposed, std::vector<int64_t>& out) {
    auto plan = [&](int64_t k, int64_t l) {
      return s.plans[static_cast<size_t>(transposed ? l * N + k : k * N + l)];
    };
    for (int64_t k = 0; k < count; ++k)
    {
      int64_t best = N - 1;
      for (int64_t l = 0; l < others; ++l)
        if (plan(k, l) > plan(k, best))
          best = l;
      out[static_cast<size_t>(k)] = best == N - 1 ? -1 : best;
    }
  };
  match(n, m, false, r.matchX);
  match(m, n, true, r.matchY);
  return r;
}

double essentialCost(std::vector<double> birthsX, std::vector<double> birthsY, double order)
{
  if (birthsX.size() != birthsY.size())
    return INFINITY;
  std::sort(birthsX.begin(), birthsX.end());
  std::sort(birthsY.begin(), birthsY.end());
  double sum = 0;
  for (size_t k = 0; k < birthsX.size(); ++k)
    sum += std::pow(std::fabs(birthsX[k] - birthsY[k]), order);
  return sum;
}

std::vector<DimensionDistance> diagramDistances(
  const std::vector<DiagramPair>& X, const std::vector<DiagramPair>& Y, const DiagramDistanceOptions& options)
{
  // Per dimension: the finite points with their ids, the essential births.
  struct Split
  {
    std::vector<DiagramPoint> finite;
    std::vector<int64_t> ids;
    std::vector<double> essential;
  };
  auto split = [](const std::vector<DiagramPair>& pairs, Split (&out)[4]) {
    for (const DiagramPair& p : pairs)
    {
      if (p.dimension < 0 || p.dimension > 3)
        continue;
      Split& s = out[p.dimension];
      if (std::isinf(p.death))
        s.essential.push_back(p.birth);
      else
      {
        s.finite.push_back({ p.birth, p.death });
        s.ids.push_back(p.id);
      }
    }
  };
  Split x[4], y[4];
  split(X, x);
  split(Y, y);
  std::vector<DimensionDistance> out;
  for (int d = 0; d < 4; ++d)
  {
    if (x[d].finite.empty() && y[d].finite.empty() && x[d].essential.empty() && y[d].essential.empty())
      continue;
    const DiagramDistance r = diagramDistance(x[d].finite, y[d].finite, options);
    DimensionDistance dd;
    dd.dimension = d;
    dd.finiteDistance = r.distance;
    dd.essentialCost = essentialCost(x[d].essential, y[d].essential, options.order);
    dd.distance = std::pow(std::pow(r.distance, options.order) + dd.essentialCost, 1.0 / options.order);
    dd.iterations = r.iterations;
    dd.warnings = r.warnings;
    for (size_t i = 0; i < r.matchX.size(); ++i)
      dd.matching.emplace_back(x[d].ids[i], r.matchX[i] < 0 ? -1 : y[d].ids[static_cast<size_t>(r.matchX[i])]);
    for (size_t j = 0; j < r.matchY.size(); ++j)
      if (r.matchY[j] < 0)
        dd.matching.emplace_back(-1, y[d].ids[j]);
    out.push_back(std::move(dd));
  }
  return out;
}

} // namespace topovox
