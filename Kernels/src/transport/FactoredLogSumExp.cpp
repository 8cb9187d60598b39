// FactoredLogSumExp.cpp - which rows qualify for the factored log-sum-exp
// (FactoredLogSumExp.h), and their E.
#include "FactoredLogSumExp.h"

namespace topovox
{
namespace transport
{
namespace
{
// The maximum of a row's `count` values, in `top`; false where a value is
// not finite or they span more than kFactorRange.
bool rowMaximum(const double* row, int64_t count, double& top)
{
  top = -std::numeric_limits<double>::infinity();
  double bottom = std::numeric_limits<double>::infinity();
  for (int64_t l = 0; l < count; ++l)
  {
    if (!std::isfinite(row[l]))
      return false;
    top = std::max(top, row[l]);
    bottom = std::min(bottom, row[l]);
  }
  return top - bottom <= kFactorRange;
}
} // namespace

bool factorRows(const std::vector<double>& X, int64_t d, std::vector<double>& E, std::vector<double>& rowMax)
{
  rowMax.assign(static_cast<size_t>(d), 0.0);
  for (int64_t k = 0; k < d; ++k)
    if (!rowMaximum(X.data() + k * d, d, rowMax[static_cast<size_t>(k)]))
      return false;
  E.resize(X.size());
  for (int64_t k = 0; k < d; ++k)
    for (int64_t l = 0; l < d; ++l)
      E[static_cast<size_t>(k * d + l)] = std::exp(X[static_cast<size_t>(k * d + l)] - rowMax[static_cast<size_t>(k)]);
  return true;
}

bool toeplitzRowMaxima(const std::vector<double>& diagonal, int64_t n, std::vector<double>& rowMax)
{
  rowMax.assign(static_cast<size_t>(n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    if (!rowMaximum(diagonal.data() + i, n, rowMax[static_cast<size_t>(i)])) // row i: values i .. i + n - 1, reversed
      return false;
  return true;
}
}
}
