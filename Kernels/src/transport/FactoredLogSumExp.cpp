// FactoredLogSumExp.cpp - which rows qualify for the factored log-sum-exp
// (FactoredLogSumExp.h), and their E.
#include "FactoredLogSumExp.h"

namespace topovox
{
namespace transport
{
bool factorRows(const std::vector<double>& X, int64_t d, std::vector<double>& E, std::vector<double>& rowMax)
{
  rowMax.assign(static_cast<size_t>(d), 0.0);
  for (int64_t k = 0; k < d; ++k)
  {
    double top = -std::numeric_limits<double>::infinity(), bottom = std::numeric_limits<double>::infinity();
    for (int64_t l = 0; l < d; ++l)
    {
      const double x = X[static_cast<size_t>(k * d + l)];
      if (!std::isfinite(x))
        return false;
      top = std::max(top, x);
      bottom = std::min(bottom, x);
    }
    if (top - bottom > kFactorRange)
      return false;
    rowMax[static_cast<size_t>(k)] = top;
  }
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
  {
    // Row i holds the diagonal's values i .. i + n - 1 (in reverse order).
    double top = -std::numeric_limits<double>::infinity(), bottom = std::numeric_limits<double>::infinity();
    for (int64_t t = i; t < i + n; ++t)
    {
      const double x = diagonal[static_cast<size_t>(t)];
      if (!std::isfinite(x))
        return false;
      top = std::max(top, x);
      bottom = std::min(bottom, x);
    }
    if (top - bottom > kFactorRange)
      return false;
    rowMax[static_cast<size_t>(i)] = top;
  }
  return true;
}
}
}
