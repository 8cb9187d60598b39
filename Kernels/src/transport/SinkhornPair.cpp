// SinkhornPair.cpp - one pair of histograms on the CPU (SinkhornCPU.h):
// POT's iterations, the pair's groups of rows and columns shared among
// its threads.
#include "SinkhornCPU.h"

#include "../common/Parallel.h"

#include <functional>

namespace topovox
{
namespace transport
{
// threads: for this pair's own loops over groups of kLanes outputs (each
// output still one sum in order: the same results whatever the count; one
// thread below 2^18 terms, where starting threads costs more).
PairResult scalingPair(const double* a, const double* b, const std::vector<double>& M, const std::vector<double>& K,
  int64_t d, const SinkhornOptions& o, double* plan, int threads)
{
  const int64_t groups = (d + kLanes - 1) / kLanes;
  const int workers = d * d < (int64_t(1) << 18) ? 1 : threads;
  // body(first output) for every group of kLanes outputs.
  auto byGroups = [&](const std::function<void(int64_t)>& body) {
    parallelFor(groups, workers, [&](int, int64_t g0, int64_t g1) {
      for (int64_t g = g0; g < g1; ++g)
        body(g * kLanes);
    });
  };
  std::vector<double> u(static_cast<size_t>(d), 1.0 / d), v(u), uprev, vprev, ktu(static_cast<size_t>(d)),
    tmp(static_cast<size_t>(d));
  PairResult r;
  bool converged = false;
  for (int ii = 0; ii < o.numItermax; ++ii)
  {
    uprev = u;
    vprev = v;
    byGroups([&](int64_t j0) {
      double s[kLanes];
      columnSums(K, u.data(), d, j0, s);
      for (int64_t j = j0; j < std::min<int64_t>(d, j0 + kLanes); ++j)
      {
        ktu[static_cast<size_t>(j)] = s[j - j0];
        v[static_cast<size_t>(j)] = b[j] / s[j - j0];
      }
    });
    bool bad = false;
    byGroups([&](int64_t i0) {
      // Rows i0.. together: s_i = sum_j ((1 / a_i) K[i][j]) v_j.
      const int lanes = static_cast<int>(std::min<int64_t>(kLanes, d - i0));
      double s[kLanes] = {}, inverse[kLanes] = {};
      for (int q = 0; q < lanes; ++q)
        inverse[q] = 1.0 / a[i0 + q];
      for (int64_t j = 0; j < d; ++j)
      {
        const double vj = v[static_cast<size_t>(j)];
        for (int q = 0; q < lanes; ++q)
          s[q] += (inverse[q] * K[static_cast<size_t>((i0 + q) * d + j)]) * vj;
      }
      for (int q = 0; q < lanes; ++q)
        u[static_cast<size_t>(i0 + q)] = 1.0 / s[q];
    });
    for (int64_t k = 0; k < d; ++k)
      bad = bad || ktu[static_cast<size_t>(k)] == 0 || !std::isfinite(u[static_cast<size_t>(k)]) ||
        !std::isfinite(v[static_cast<size_t>(k)]);
    r.iterations = ii + 1;
    if (bad)
    {
      r.warning = "numerical errors at iteration " + std::to_string(ii);
      u = uprev;
      v = vprev;
      converged = true;
      break;
    }
    if (ii % 10 == 0)
    {
      byGroups([&](int64_t j0) {
        double s[kLanes];
        columnSums(K, u.data(), d, j0, s); // u_i K_ij = K_ij u_i: the same products
        for (int64_t j = j0; j < std::min<int64_t>(d, j0 + kLanes); ++j)
          tmp[static_cast<size_t>(j)] = s[j - j0] * v[static_cast<size_t>(j)] - b[j];
      });
      r.error = norm2(tmp);
      if (r.error < o.stopThr)
      {
        converged = true;
        break;
      }
    }
  }
  finish(r, converged, o, d, M, plan,
    [&](int64_t i, int64_t j) { return u[static_cast<size_t>(i)] * K[static_cast<size_t>(i * d + j)] * v[static_cast<size_t>(j)]; });
  return r;
}

// threads: for this pair's own loops (each output still one thread's sum in
// order: the same results whatever the count).
PairResult logDomainPair(const double* a, const double* b, const std::vector<double>& M, const LogMatrices& L,
  int64_t d, const SinkhornOptions& o, double* plan, int threads)
{
  const std::vector<double>&Mr = L.Mr, &MrT = L.MrT, &E = L.E, &ET = L.ET, &rowMax = L.rowMax,
                            &rowMaxT = L.rowMaxT;
  const bool factored = L.factored;
  std::vector<double> u(static_cast<size_t>(d), 0.0), v(u), tmp(static_cast<size_t>(d));
  PairResult r;
  bool converged = false;
  std::vector<double> shifted(static_cast<size_t>(d)), lse(static_cast<size_t>(d));
  // lse_k = logsumexp_l (rows[k][l] + x_l) for every k, factored (exps, tops:
  // E and m of rows); false where that is not exact (x's maximum not
  // finite: an all-zero marginal's -inf potentials), lse then untouched.
  auto factoredSums = [&](const std::vector<double>& exps, const std::vector<double>& tops,
                        const std::vector<double>& x) {
    const double c = maximumOf(x.data(), d);
    if (!factored || !std::isfinite(c))
      return false;
    for (int64_t l = 0; l < d; ++l)
      shifted[static_cast<size_t>(l)] = std::exp(x[static_cast<size_t>(l)] - c);
    // One thread below 2^18 terms: starting threads would cost more.
    parallelFor((d + kLanes - 1) / kLanes, d * d < (int64_t(1) << 18) ? 1 : threads, [&](int, int64_t g0, int64_t g1) {
      for (int64_t k0 = g0 * kLanes; k0 < std::min(d, g1 * kLanes); k0 += kLanes)
      {
        // kLanes rows at a time: independent sums, each in order, each row
        // read along (a pair's sums are bound by reading E).
        const int lanes = static_cast<int>(std::min<int64_t>(kLanes, d - k0));
        double sum[kLanes] = {};
        for (int64_t l = 0; l < d; ++l)
        {
          const double e = shifted[static_cast<size_t>(l)];
          for (int q = 0; q < lanes; ++q)
            sum[q] += exps[static_cast<size_t>((k0 + q) * d + l)] * e;
        }
        for (int q = 0; q < lanes; ++q)
          lse[static_cast<size_t>(k0 + q)] = factoredLse(sum[q], tops[static_cast<size_t>(k0 + q)], c);
      }
    });
    return true;
  };
  // out_k = log(mass_k) - logsumexp_l (rows[k][l] + x_l), k in [0, d):
  // v from MrT and u, then u from Mr and v.
  std::vector<double> logA(static_cast<size_t>(d)), logB(static_cast<size_t>(d)); // once, not every iteration
  for (int64_t k = 0; k < d; ++k)
  {
    logA[static_cast<size_t>(k)] = std::log(a[k]);
    logB[static_cast<size_t>(k)] = std::log(b[k]);
  }
  auto update = [&](const std::vector<double>& rows, const std::vector<double>& exps, const std::vector<double>& tops,
                  const std::vector<double>& x, const std::vector<double>& logMass, std::vector<double>& out) {
    if (!factoredSums(exps, tops, x))
      directLogSums(rows, x.data(), d, threads, lse.data());
    for (int64_t k = 0; k < d; ++k)
      out[static_cast<size_t>(k)] = logMass[static_cast<size_t>(k)] - lse[static_cast<size_t>(k)];
  };
  for (int ii = 0; ii < o.numItermax; ++ii)
  {
    update(MrT, ET, rowMaxT, u, logB, v);
    update(Mr, E, rowMax, v, logA, u);
    r.iterations = ii + 1;
    if (ii % 10 == 0)
    {
      // The plan's column sums, sum_i exp(Mr_ij + u_i + v_j) = exp(lse_j +
      // v_j) with lse from MrT and u, factored where it is exact.
      if (factoredSums(ET, rowMaxT, u))
        for (int64_t j = 0; j < d; ++j)
          tmp[static_cast<size_t>(j)] = std::exp(lse[static_cast<size_t>(j)] + v[static_cast<size_t>(j)]) - b[j];
      else
        directLogResidual(MrT, u.data(), v.data(), b, d, threads, tmp.data());
      r.error = norm2(tmp);
      if (r.error < o.stopThr)
      {
        converged = true;
        break;
      }
    }
  }
  finish(r, converged, o, d, M, plan, [&](int64_t i, int64_t j) {
    return std::exp(Mr[static_cast<size_t>(i * d + j)] + u[static_cast<size_t>(i)] + v[static_cast<size_t>(j)]);
  });
  return r;
}
}
}
