// SinkhornChecks.h - the argument checks the dense and the grid Sinkhorn
// share, with the same messages.
#pragma once

#include "topovox/Sinkhorn.h"

#include "../common/Parallel.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace topovox
{
namespace transport
{
// Whether every value passes `ok`, on up to `threads` threads (at most
// eight, and one per 64 K values: memory's bandwidth is the bound).
template <typename Ok>
bool allValues(const std::vector<double>& v, int threads, Ok ok)
{
  std::atomic<bool> all(true);
  const int64_t n = static_cast<int64_t>(v.size());
  const int workers = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({ threads, 8, n / 65536 })));
  parallelFor(n, workers, [&](int, int64_t k0, int64_t k1) {
    bool good = true;
    for (int64_t k = k0; k < k1; ++k)
      good &= ok(v[static_cast<size_t>(k)]);
    if (!good)
      all = false;
  });
  return all;
}

// reg, numItermax, and the two marginals (`what`: "histograms", "densities").
inline void checkSinkhornArguments(
  const SinkhornOptions& o, const std::vector<double>& a, const std::vector<double>& b, const char* what, int threads)
{
  if (!(o.reg > 0) || !std::isfinite(o.reg))
    throw std::invalid_argument("reg must be positive and finite");
  if (o.numItermax < 1)
    throw std::invalid_argument("numItermax must be at least 1");
  for (const auto* v : { &a, &b })
    if (!allValues(*v, threads, [](double x) { return x >= 0 && std::isfinite(x); }))
      throw std::invalid_argument(std::string(what) + " must be nonnegative and finite");
}

// What both paths throw for a cost matrix with a value that is not finite.
[[noreturn]] inline void throwCostNotFinite()
{
  throw std::invalid_argument("the cost matrix must be finite");
}

// The cost matrix's check for the CPU path, on up to four threads (the GPU
// path checks it on the device). A d = 1024 matrix is 8 MB: 0.75 ms on
// one thread of the H200 machine, 0.38 ms on four, 0.34 on eight (threads
// started for the call), the memory's bandwidth the bound.
inline void checkCostMatrix(const std::vector<double>& M, int threads)
{
  if (!allValues(M, std::min(threads, 4), [](double x) { return std::isfinite(x); }))
    throwCostNotFinite();
}
}
}
