// FactoredLogSumExp.h - the log domain's log-sum-exps as plain sums, where
// that is exact, for the CPU's dense (SinkhornCPU.h) and grid
// (GridSinkhorn.cpp) solvers and the GPU's grid solver (GridSinkhornCUDA.cu,
// factorRows on the host). The GPU's dense solver tests the rows on the
// device (SinkhornCUDA.cu) against the same kFactorRange.
//
// With m_k the row maximum of X (-M / reg) and c the maximum of x,
//   logsumexp_l (X_kl + x_l) = m_k + c + log sum_l E_kl exp(x_l - c),
// E = exp(X - m) made once: an exp per column instead of one per term, and
// the sums plain products. Exact as long as the largest term does not
// underflow; it is at least exp(-(max_l X_kl - min_l X_kl)), so it is used
// only where every row spans at most kFactorRange (terms that underflow are
// then below 1e-300 of it).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace topovox
{
namespace transport
{
constexpr double kFactorRange = 600.0;

// E and the row maxima of the d x d row-major X; false (E, rowMax left
// unspecified) where a value is not finite or a row spans more than
// kFactorRange.
bool factorRows(const std::vector<double>& X, int64_t d, std::vector<double>& E, std::vector<double>& rowMax);

// The row maxima of the n x n Toeplitz X[i][j] = diagonal[i - j + n - 1]
// (the grid solver's factors, GridSinkhornSolver.h), without building it;
// false where factorRows would be: a value not finite, or a row spanning
// more than kFactorRange.
bool toeplitzRowMaxima(const std::vector<double>& diagonal, int64_t n, std::vector<double>& rowMax);

// The factored log-sum-exp's end: lse from the sum of E_kl exp(x_l - c),
// the row's maximum m_k and c; -inf for a zero sum, NaN for NaN.
inline double factoredLse(double sum, double top, double c)
{
  return sum > 0 ? (top + c) + std::log(sum) : (sum == 0 ? -std::numeric_limits<double>::infinity() : sum);
}

// The maximum of x, NaN left out (as the direct maximum leaves it).
inline double maximumOf(const double* x, int64_t d)
{
  double c = -std::numeric_limits<double>::infinity();
  for (int64_t l = 0; l < d; ++l)
    c = std::max(c, x[l]);
  return c;
}
}
}
