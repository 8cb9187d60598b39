// SinkhornCPU.cpp - the sums and log-sum-exps the CPU's Sinkhorn solvers
// share (SinkhornCPU.h).
#include "SinkhornCPU.h"

#include "../common/Parallel.h"

namespace topovox
{
namespace transport
{
double norm2(const double* x, int64_t n)
{
  double s = 0;
  for (int64_t k = 0; k < n; ++k)
    s += x[k] * x[k];
  return std::sqrt(s);
}

// log(sum(exp(x))) over n values with a stride, -inf when all are -inf.
double logSumExp(const double* x, int64_t n, int64_t stride)
{
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t k = 0; k < n; ++k)
    m = std::max(m, x[k * stride]);
  if (m == -std::numeric_limits<double>::infinity())
    return m;
  double s = 0;
  for (int64_t k = 0; k < n; ++k)
    s += std::exp(x[k * stride] - m);
  return m + std::log(s);
}

// K^T u (times nothing else): s_j = sum_i K[i][j] u[i], columns j0.. .
void columnSums(const std::vector<double>& K, const double* u, int64_t d, int64_t j0, double out[kLanes])
{
  double s[kLanes] = {};
  const int lanes = static_cast<int>(std::min<int64_t>(kLanes, d - j0));
  for (int64_t i = 0; i < d; ++i)
  {
    const double* row = K.data() + i * d + j0;
    const double ui = u[i];
    if (lanes == kLanes)
      for (int q = 0; q < kLanes; ++q)
        s[q] += row[q] * ui;
    else
      for (int q = 0; q < lanes; ++q)
        s[q] += row[q] * ui;
  }
  for (int q = 0; q < kLanes; ++q)
    out[q] = s[q];
}

// X transposed (d x d, row-major).
std::vector<double> transposed(const std::vector<double>& X, int64_t d)
{
  std::vector<double> out(X.size());
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j)
      out[static_cast<size_t>(j * d + i)] = X[static_cast<size_t>(i * d + j)];
  return out;
}

// lse_k = logsumexp_l (rows[k][l] + x_l), k in [0, d), by the definition
// (its maximum first).
void directLogSums(const std::vector<double>& rows, const double* x, int64_t d, int threads, double* lse)
{
  parallelFor(d, threads, [&](int, int64_t k0, int64_t k1) {
    std::vector<double> terms(static_cast<size_t>(d));
    for (int64_t k = k0; k < k1; ++k)
    {
      for (int64_t l = 0; l < d; ++l)
        terms[static_cast<size_t>(l)] = rows[static_cast<size_t>(k * d + l)] + x[l];
      lse[k] = logSumExp(terms.data(), d, 1);
    }
  });
}

// The marginal check's residual by the definition: sum_i exp(MrT_ji + u_i +
// v_j) - b_j.
void directLogResidual(const std::vector<double>& MrT, const double* u, const double* v, const double* b, int64_t d,
  int threads, double* out)
{
  parallelFor(d, threads, [&](int, int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j)
    {
      double s = 0;
      for (int64_t i = 0; i < d; ++i)
        s += std::exp(MrT[static_cast<size_t>(j * d + i)] + u[i] + v[j]);
      out[j] = s - b[j];
    }
  });
}
}
}
