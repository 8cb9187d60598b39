// SinkhornCPU.h - what the CPU's Sinkhorn solvers share (Sinkhorn.cpp
// chooses among them): one pair at a time (SinkhornPair.cpp), several
// pairs together (SinkhornBatch.cpp), and the sums, factored log-sum-exps
// and results they have in common (SinkhornCPU.cpp).
#pragma once

#include "topovox/Sinkhorn.h"

#include "FactoredLogSumExp.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace topovox
{
namespace transport
{
// ||x||_2 of n values (of all of x).
double norm2(const double* x, int64_t n);
inline double norm2(const std::vector<double>& x)
{
  return norm2(x.data(), static_cast<int64_t>(x.size()));
}

// log(sum(exp(x))) over n values with a stride, -inf when all are -inf.
double logSumExp(const double* x, int64_t n, int64_t stride);

struct PairResult
{
  double cost = 0, error = 1;
  int iterations = 0;
  std::string warning;
};

// The plan entry by entry (entry(i, j)), its cost <P, M>, and the warning
// when the iterations ran out.
template <typename Entry>
void finish(PairResult& r, bool converged, const SinkhornOptions& o, int64_t d, const std::vector<double>& M,
  double* plan, Entry entry)
{
  if (!converged)
    r.warning = "did not converge in " + std::to_string(o.numItermax) + " iterations (marginal error " +
      std::to_string(r.error) + ")";
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j)
    {
      const size_t k = static_cast<size_t>(i * d + j);
      const double p = entry(i, j);
      r.cost += p * M[k];
      if (plan)
        plan[k] = p;
    }
}

// Eight sums at a time, each over its index in order (the same roundings
// as one at a time): independent sums fill the floating-point pipelines,
// and K is read along its rows. kLanes outputs k0 .. k0 + kLanes - 1
// (fewer at the end): out[q] = sum over t of term(t, k0 + q).
constexpr int kLanes = 8;

// K^T u (times nothing else): s_j = sum_i K[i][j] u[i], columns j0.. .
void columnSums(const std::vector<double>& K, const double* u, int64_t d, int64_t j0, double out[kLanes]);

// X transposed (d x d, row-major).
std::vector<double> transposed(const std::vector<double>& X, int64_t d);

// The log domain's matrices, the same for every pair: -M / reg and its
// transpose, and their factored forms where they qualify (factorRows). E and
// ET are row-major for one pair at a time (its sums read eight rows side by
// side, bound by reading E), transposed (E[l * d + k] = E_kl) with
// `columns`, for pairs together (a tile's sums read eight outputs of a row,
// as K^T u reads K).
struct LogMatrices
{
  std::vector<double> Mr, MrT, E, ET, rowMax, rowMaxT;
  bool factored = false, columns = false;
  LogMatrices(const std::vector<double>& M, int64_t d, double reg, bool columnsLayout)
    : Mr(M.size())
    , columns(columnsLayout)
  {
    for (size_t k = 0; k < M.size(); ++k)
      Mr[k] = -M[k] / reg;
    // Its transpose too: the column sums below then read memory in order
    // (the same values in the same order: the same results).
    MrT = transposed(Mr, d);
    factored = factorRows(Mr, d, E, rowMax) && factorRows(MrT, d, ET, rowMaxT);
    if (factored && columns)
    {
      E = transposed(E, d);
      ET = transposed(ET, d);
    }
  }
};

// lse_k = logsumexp_l (rows[k][l] + x_l), k in [0, d), by the definition
// (its maximum first).
void directLogSums(const std::vector<double>& rows, const double* x, int64_t d, int threads, double* lse);

// The marginal check's residual by the definition: sum_i exp(MrT_ji + u_i +
// v_j) - b_j.
void directLogResidual(const std::vector<double>& MrT, const double* u, const double* v, const double* b, int64_t d,
  int threads, double* out);

// One pair (a, b: its d values; plan: d x d, or null), the scaling method
// and the log domain; threads: for the pair's own loops (the same results
// whatever the count).
PairResult scalingPair(const double* a, const double* b, const std::vector<double>& M, const std::vector<double>& K,
  int64_t d, const SinkhornOptions& o, double* plan, int threads);
PairResult logDomainPair(const double* a, const double* b, const std::vector<double>& M, const LogMatrices& L,
  int64_t d, const SinkhornOptions& o, double* plan, int threads);

// n pairs together (a, b: n x d; plans: n x d x d, or null), each pair's
// numbers bit for bit those of scalingPair / logDomainPair; the log domain
// only with L.factored and L.columns.
void scalingBatch(const double* a, const double* b, const std::vector<double>& M, const std::vector<double>& K,
  int64_t d, int64_t n, const SinkhornOptions& o, double* plans, int threads, std::vector<PairResult>& results);
void logDomainBatch(const double* a, const double* b, const std::vector<double>& M, const LogMatrices& L, int64_t d,
  int64_t n, const SinkhornOptions& o, double* plans, int threads, std::vector<PairResult>& results);
}
}
