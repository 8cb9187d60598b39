// Sinkhorn.cpp - POT's Sinkhorn iterations (Sinkhorn.h), pairs of
// histograms on the CPU threads.
#include "topovox/Sinkhorn.h"

#include "topovox/Device.h"

#include "../common/Parallel.h"
#include "SinkhornBackends.h"
#include "SinkhornChecks.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace topovox
{
namespace
{
double norm2(const std::vector<double>& x)
{
  double s = 0;
  for (double v : x)
    s += v * v;
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

// The factored log-sum-exp, shared with the GPU (SinkhornCUDA.cu) and the
// grid solver: with m_k the row maximum of X (-M / reg) and c the maximum
// of x,
//   logsumexp_l (X_kl + x_l) = m_k + c + log sum_l E_kl exp(x_l - c),
// E = exp(X - m) made once: an exp per column instead of one per term, and
// the sums plain products. Exact as long as the largest term does not
// underflow; it is at least exp(-(max_l X_kl - min_l X_kl)), so it is used
// only where every row spans at most kFactorRange (terms that underflow are
// then below 1e-300 of it). false (E left empty) where a row does not
// qualify.
constexpr double kFactorRange = 600.0;
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

// threads: for this pair's own loops over groups of kLanes outputs (each
// output still one sum in order: the same results whatever the count; one
// thread below 2^18 terms, where starting threads costs more).
PairResult scaling(const double* a, const double* b, const std::vector<double>& M, const std::vector<double>& K,
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

// Pairs a tile of the batched solvers below (4 x 8 sums fit the registers).
constexpr int kBatchPairs = 4;

// A whole tile's column sums, s[t][q] += K[i][j0 + q] u_t[i] over i in
// order: the tile's sizes known to the compiler, its 4 x 8 sums stay in
// registers.
template <int Pairs>
void tileColumnSums(const double* K, const double* const* us, int64_t d, int64_t j0, double (&s)[kBatchPairs][kLanes])
{
  double acc[Pairs][kLanes] = {};
  for (int64_t i = 0; i < d; ++i)
  {
    const double* row = K + i * d + j0;
    for (int t = 0; t < Pairs; ++t)
    {
      const double ui = us[t][i];
      for (int q = 0; q < kLanes; ++q)
        acc[t][q] += row[q] * ui;
    }
  }
  for (int t = 0; t < Pairs; ++t)
    for (int q = 0; q < kLanes; ++q)
      s[t][q] = acc[t][q];
}

// A whole tile's row sums, s[t][q] += ((1 / a_t[i0 + q]) K[i0 + q][j])
// v_t[j] over j in order.
template <int Pairs>
void tileRowSums(const double* K, const double* const* vs, const double (&inverse)[kBatchPairs][kLanes], int64_t d,
  int64_t i0, double (&s)[kBatchPairs][kLanes])
{
  double acc[Pairs][kLanes] = {};
  const double* rows[kLanes];
  for (int q = 0; q < kLanes; ++q)
    rows[q] = K + (i0 + q) * d;
  for (int64_t j = 0; j < d; ++j)
  {
    double k[kLanes];
    for (int q = 0; q < kLanes; ++q)
      k[q] = rows[q][j];
    for (int t = 0; t < Pairs; ++t)
    {
      const double vj = vs[t][j];
      for (int q = 0; q < kLanes; ++q)
        acc[t][q] += (inverse[t][q] * k[q]) * vj;
    }
  }
  for (int t = 0; t < Pairs; ++t)
    for (int q = 0; q < kLanes; ++q)
      s[t][q] = acc[t][q];
}
// The loops of the batched solvers below: body(first output, pairs, count)
// for every group of kLanes outputs and every tile of up to kBatchPairs of
// the `active` pairs, the groups shared among the threads (one below 2^18
// terms, where starting threads costs more than the loop).
class PairTiles
{
public:
  PairTiles(int64_t d, int64_t n, int threads, const std::vector<int64_t>& active)
    : groups_((d + kLanes - 1) / kLanes)
    , workers_(d * d * n < (int64_t(1) << 18) ? 1 : threads)
    , active_(active)
  {
  }
  void run(const std::function<void(int64_t, const int64_t*, int)>& body) const
  {
    parallelFor(groups_, workers_, [&](int, int64_t g0, int64_t g1) {
      for (int64_t g = g0; g < g1; ++g)
        for (size_t t = 0; t < active_.size(); t += kBatchPairs)
          body(g * kLanes, active_.data() + t, static_cast<int>(std::min<size_t>(kBatchPairs, active_.size() - t)));
    });
  }

private:
  int64_t groups_;
  int workers_;
  const std::vector<int64_t>& active_;
};

// Column sums of a tile of pairs, s[t][q] = sum_i X[i][j0 + q] x_t[i] in
// order, by the tile kernels where the group is whole.
void tileColumnSumsOf(const std::vector<double>& X, const double* const* xs, int64_t d, int64_t j0, int m,
  double (&s)[kBatchPairs][kLanes])
{
  if (j0 + kLanes <= d) // the sums in registers
  {
    switch (m)
    {
      case 1: tileColumnSums<1>(X.data(), xs, d, j0, s); return;
      case 2: tileColumnSums<2>(X.data(), xs, d, j0, s); return;
      case 3: tileColumnSums<3>(X.data(), xs, d, j0, s); return;
      default: tileColumnSums<kBatchPairs>(X.data(), xs, d, j0, s); return;
    }
  }
  const int lanes = static_cast<int>(d - j0);
  for (int64_t i = 0; i < d; ++i)
  {
    const double* row = X.data() + i * d + j0;
    for (int t = 0; t < m; ++t)
      for (int q = 0; q < lanes; ++q)
        s[t][q] += row[q] * xs[t][i];
  }
}

// Row sums of a tile of pairs, s[t][q] = sum_l ((1 / a) X[i0 + q][l]) x_t[l]
// in order (inverse: 1 / a, or ones: the same products), by the tile
// kernels where the group is whole.
void tileRowSumsOf(const std::vector<double>& X, const double* const* xs, const double (&inverse)[kBatchPairs][kLanes],
  int64_t d, int64_t i0, int m, double (&s)[kBatchPairs][kLanes])
{
  const int lanes = static_cast<int>(std::min<int64_t>(kLanes, d - i0));
  if (lanes == kLanes)
  {
    switch (m)
    {
      case 1: tileRowSums<1>(X.data(), xs, inverse, d, i0, s); return;
      case 2: tileRowSums<2>(X.data(), xs, inverse, d, i0, s); return;
      case 3: tileRowSums<3>(X.data(), xs, inverse, d, i0, s); return;
      default: tileRowSums<kBatchPairs>(X.data(), xs, inverse, d, i0, s); return;
    }
  }
  for (int64_t j = 0; j < d; ++j)
    for (int t = 0; t < m; ++t)
      for (int q = 0; q < lanes; ++q)
        s[t][q] += (inverse[t][q] * X[static_cast<size_t>((i0 + q) * d + j)]) * xs[t][j];
}

// What the batched solvers keep per pair besides their vectors (running,
// converged, the results), and the steps they share.
struct BatchPairs
{
  std::vector<char> running, converged;
  std::vector<PairResult>& results;
  BatchPairs(int64_t n, std::vector<PairResult>& r)
    : running(static_cast<size_t>(n), 1)
    , converged(static_cast<size_t>(n), 0)
    , results(r)
  {
    r.assign(static_cast<size_t>(n), PairResult());
  }
  // The pairs still running, into `active`; false when there are none.
  bool activeInto(std::vector<int64_t>& active) const
  {
    active.clear();
    for (size_t p = 0; p < running.size(); ++p)
      if (running[p])
        active.push_back(static_cast<int64_t>(p));
    return !active.empty();
  }
  void stop(int64_t p, bool done)
  {
    converged[static_cast<size_t>(p)] = done;
    running[static_cast<size_t>(p)] = 0;
  }
  // The marginal check: each pair's error from its residual in tmp; below
  // stopThr it has converged.
  void check(const std::vector<int64_t>& pairs, const std::vector<double>& tmp, int64_t d, double stopThr)
  {
    for (int64_t p : pairs)
    {
      PairResult& r = results[static_cast<size_t>(p)];
      r.error = norm2(std::vector<double>(tmp.begin() + p * d, tmp.begin() + (p + 1) * d));
      if (r.error < stopThr)
        stop(p, true);
    }
  }
  // Each pair's cost (and plan), the plan's entries entry(p, i, j).
  template <typename Entry>
  void finishAll(int threads, const SinkhornOptions& o, int64_t d, const std::vector<double>& M, double* plans,
    Entry entry)
  {
    parallelFor(static_cast<int64_t>(running.size()), threads, [&](int, int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p)
        finish(results[static_cast<size_t>(p)], converged[static_cast<size_t>(p)] != 0, o, d, M,
          plans ? plans + p * d * d : nullptr, [&](int64_t i, int64_t j) { return entry(p, i, j); });
    });
  }
};

// The scaling method for n pairs at once (n >= 2, d >= 256): each pair's
// iterations exactly as scaling() runs them (every output the same sum in
// the same order, so the same numbers bit for bit, and each pair stops on
// its own), but each half-iteration reads K once for up to kBatchPairs
// pairs instead of once per pair. From d = 256 K outgrows the caches, and
// reading it is most of an iteration's time. The column and row groups are
// shared among the threads.
void scalingBatch(const double* a, const double* b, const std::vector<double>& M, const std::vector<double>& K,
  int64_t d, int64_t n, const SinkhornOptions& o, double* plans, int threads, std::vector<PairResult>& results)
{
  const size_t nd = static_cast<size_t>(n * d);
  std::vector<double> u(nd, 1.0 / d), v(u), uprev(nd), vprev(nd), ktu(nd), tmp(nd);
  BatchPairs batch(n, results);
  std::vector<int64_t> active;
  const PairTiles tiles(d, n, threads, active);
  auto byGroups = [&](const std::function<void(int64_t, const int64_t*, int)>& body) { tiles.run(body); };
  // K^T u for the tile's pairs, columns j0..: out(pair index in the tile,
  // column j, sum).
  auto columnSumsOf = [&](int64_t j0, const int64_t* pairs, int m, const std::function<void(int, int64_t, double)>& out) {
    double s[kBatchPairs][kLanes] = {};
    const double* us[kBatchPairs];
    for (int t = 0; t < m; ++t)
      us[t] = u.data() + pairs[t] * d;
    tileColumnSumsOf(K, us, d, j0, m, s);
    const int lanes = static_cast<int>(std::min<int64_t>(kLanes, d - j0));
    for (int t = 0; t < m; ++t)
      for (int q = 0; q < lanes; ++q)
        out(t, j0 + q, s[t][q]);
  };
  for (int ii = 0; ii < o.numItermax; ++ii)
  {
    if (!batch.activeInto(active))
      break;
    for (int64_t p : active)
    {
      std::copy_n(u.begin() + p * d, d, uprev.begin() + p * d);
      std::copy_n(v.begin() + p * d, d, vprev.begin() + p * d);
    }
    byGroups([&](int64_t j0, const int64_t* pairs, int m) {
      columnSumsOf(j0, pairs, m, [&](int t, int64_t j, double sum) {
        const size_t at = static_cast<size_t>(pairs[t] * d + j);
        ktu[at] = sum;
        v[at] = b[at] / sum;
      });
    });
    byGroups([&](int64_t i0, const int64_t* pairs, int m) {
      // Rows i0.. together: s_i = sum_j ((1 / a_i) K[i][j]) v_j.
      const int lanes = static_cast<int>(std::min<int64_t>(kLanes, d - i0));
      double s[kBatchPairs][kLanes] = {}, inverse[kBatchPairs][kLanes] = {};
      const double* vs[kBatchPairs];
      for (int t = 0; t < m; ++t)
      {
        vs[t] = v.data() + pairs[t] * d;
        for (int q = 0; q < lanes; ++q)
          inverse[t][q] = 1.0 / a[pairs[t] * d + i0 + q];
      }
      tileRowSumsOf(K, vs, inverse, d, i0, m, s);
      for (int t = 0; t < m; ++t)
        for (int q = 0; q < lanes; ++q)
          u[static_cast<size_t>(pairs[t] * d + i0 + q)] = 1.0 / s[t][q];
    });
    std::vector<int64_t> checked;
    for (int64_t p : active)
    {
      PairResult& r = results[static_cast<size_t>(p)];
      bool bad = false;
      for (int64_t k = p * d; k < (p + 1) * d; ++k)
        bad = bad || ktu[static_cast<size_t>(k)] == 0 || !std::isfinite(u[static_cast<size_t>(k)]) ||
          !std::isfinite(v[static_cast<size_t>(k)]);
      r.iterations = ii + 1;
      if (bad)
      {
        r.warning = "numerical errors at iteration " + std::to_string(ii);
        std::copy_n(uprev.begin() + p * d, d, u.begin() + p * d);
        std::copy_n(vprev.begin() + p * d, d, v.begin() + p * d);
        batch.stop(p, true);
      }
      else
        checked.push_back(p);
    }
    if (ii % 10 != 0 || checked.empty())
      continue;
    active = checked;
    byGroups([&](int64_t j0, const int64_t* pairs, int m) {
      columnSumsOf(j0, pairs, m, [&](int t, int64_t j, double sum) {
        const size_t at = static_cast<size_t>(pairs[t] * d + j);
        tmp[at] = sum * v[at] - b[at]; // u_i K_ij = K_ij u_i: the same products
      });
    });
    batch.check(checked, tmp, d, o.stopThr);
  }
  batch.finishAll(threads, o, d, M, plans, [&](int64_t p, int64_t i, int64_t j) {
    return u[static_cast<size_t>(p * d + i)] * K[static_cast<size_t>(i * d + j)] * v[static_cast<size_t>(p * d + j)];
  });
}

// The log domain's matrices, the same for every pair: -M / reg and its
// transpose, and their factored forms where they qualify (factorRows).
struct LogMatrices
{
  std::vector<double> Mr, MrT, E, ET, rowMax, rowMaxT;
  bool factored = false;
  LogMatrices(const std::vector<double>& M, int64_t d, double reg)
    : Mr(M.size())
    , MrT(M.size())
  {
    for (size_t k = 0; k < M.size(); ++k)
      Mr[k] = -M[k] / reg;
    // Its transpose too: the column sums below then read memory in order
    // (the same values in the same order: the same results).
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < d; ++j)
        MrT[static_cast<size_t>(j * d + i)] = Mr[static_cast<size_t>(i * d + j)];
    factored = factorRows(Mr, d, E, rowMax) && factorRows(MrT, d, ET, rowMaxT);
  }
};

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

// threads: for this pair's own loops (each output still one thread's sum in
// order: the same results whatever the count).
PairResult logDomain(const double* a, const double* b, const std::vector<double>& M, const LogMatrices& L,
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

// The log domain for n pairs at once (n >= 2, d >= 256, factored
// matrices): each pair's iterations exactly as logDomain() runs them (the
// same sums in the same order, bit for bit), E and ET read once per
// half-iteration for a tile of pairs instead of once per pair. A pair
// whose potentials' maximum is not finite is summed by the definition, on
// its own, as logDomain() sums it.
void logDomainBatch(const double* a, const double* b, const std::vector<double>& M, const LogMatrices& L, int64_t d,
  int64_t n, const SinkhornOptions& o, double* plans, int threads, std::vector<PairResult>& results)
{
  const size_t nd = static_cast<size_t>(n * d);
  std::vector<double> u(nd, 0.0), v(u), tmp(nd), shifted(nd), lse(nd), shift(static_cast<size_t>(n));
  BatchPairs batch(n, results);
  std::vector<int64_t> active, tiled;
  const PairTiles tiles(d, n, threads, tiled);
  // E and ET transposed: a tile's factored sums then read them along their
  // rows, eight outputs side by side as K^T u reads K (measured, 16 pairs of
  // d = 1024: 1.4x faster than eight rows at a time, which a single pair's
  // sums prefer: they are bound by reading E, not by the arithmetic).
  const std::vector<double> Ecolumns = transposed(L.E, d), ETcolumns = transposed(L.ET, d);
  // lse of every active pair from x (rows, and their factored exps and
  // tops); residual: the marginal check's instead, into tmp (the factored
  // pairs' from lse, the others by the definition).
  auto logSums = [&](const std::vector<double>& rows, const std::vector<double>& exps,
                   const std::vector<double>& tops, const std::vector<double>& x, bool residual) {
    tiled.clear();
    for (int64_t p : active)
    {
      const double c = maximumOf(x.data() + p * d, d);
      if (!std::isfinite(c))
      {
        if (residual)
          directLogResidual(L.MrT, u.data() + p * d, v.data() + p * d, b + p * d, d, threads, tmp.data() + p * d);
        else
          directLogSums(rows, x.data() + p * d, d, threads, lse.data() + p * d);
        continue;
      }
      shift[static_cast<size_t>(p)] = c;
      tiled.push_back(p);
    }
    // An exp per value of the factored pairs (on the threads where they are
    // many: each is tens of nanoseconds).
    const int64_t count = static_cast<int64_t>(tiled.size());
    parallelFor(count, count * d < 4096 ? 1 : threads, [&](int, int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t)
      {
        const int64_t p = tiled[static_cast<size_t>(t)];
        for (int64_t l = p * d; l < (p + 1) * d; ++l)
          shifted[static_cast<size_t>(l)] = std::exp(x[static_cast<size_t>(l)] - shift[static_cast<size_t>(p)]);
      }
    });
    tiles.run([&](int64_t k0, const int64_t* pairs, int m) {
      const double* xs[kBatchPairs];
      for (int t = 0; t < m; ++t)
        xs[t] = shifted.data() + pairs[t] * d;
      double sum[kBatchPairs][kLanes] = {};
      tileColumnSumsOf(exps, xs, d, k0, m, sum); // exps: E or ET transposed
      for (int t = 0; t < m; ++t)
        for (int q = 0; q < static_cast<int>(std::min<int64_t>(kLanes, d - k0)); ++q)
          lse[static_cast<size_t>(pairs[t] * d + k0 + q)] =
            factoredLse(sum[t][q], tops[static_cast<size_t>(k0 + q)], shift[static_cast<size_t>(pairs[t])]);
    });
    if (residual)
      for (int64_t p : tiled)
        for (int64_t j = p * d; j < (p + 1) * d; ++j)
          tmp[static_cast<size_t>(j)] = std::exp(lse[static_cast<size_t>(j)] + v[static_cast<size_t>(j)]) - b[j];
  };
  // out = log(mass) - lse for the active pairs (the logarithms of the
  // marginals once, not every iteration: the same values).
  std::vector<double> logA(nd), logB(nd);
  for (size_t k = 0; k < nd; ++k)
  {
    logA[k] = std::log(a[k]);
    logB[k] = std::log(b[k]);
  }
  auto update = [&](const std::vector<double>& logMass, std::vector<double>& out) {
    for (int64_t p : active)
      for (int64_t k = p * d; k < (p + 1) * d; ++k)
        out[static_cast<size_t>(k)] = logMass[static_cast<size_t>(k)] - lse[static_cast<size_t>(k)];
  };
  for (int ii = 0; ii < o.numItermax; ++ii)
  {
    if (!batch.activeInto(active))
      break;
    logSums(L.MrT, ETcolumns, L.rowMaxT, u, false);
    update(logB, v);
    logSums(L.Mr, Ecolumns, L.rowMax, v, false);
    update(logA, u);
    for (int64_t p : active)
      results[static_cast<size_t>(p)].iterations = ii + 1;
    if (ii % 10 != 0)
      continue;
    logSums(L.MrT, ETcolumns, L.rowMaxT, u, true);
    batch.check(active, tmp, d, o.stopThr);
  }
  batch.finishAll(threads, o, d, M, plans, [&](int64_t p, int64_t i, int64_t j) {
    return std::exp(L.Mr[static_cast<size_t>(i * d + j)] + u[static_cast<size_t>(p * d + i)] +
      v[static_cast<size_t>(p * d + j)]);
  });
}
} // namespace

SinkhornResult sinkhorn(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& M,
  int64_t pairs, int64_t d, const SinkhornOptions& o)
{
  if (pairs < 1 || d < 1)
    throw std::invalid_argument("at least one pair of histograms of dimension 1 is needed");
  if (static_cast<int64_t>(a.size()) != pairs * d || static_cast<int64_t>(b.size()) != pairs * d)
    throw std::invalid_argument("the histograms must be pairs x d values each");
  if (static_cast<int64_t>(M.size()) != d * d)
    throw std::invalid_argument("the cost matrix must be d x d (d = " + std::to_string(d) + ")");
  transport::checkSinkhornArguments(o, a, b, "histograms");
  for (double x : M)
    if (!std::isfinite(x))
      throw std::invalid_argument("the cost matrix must be finite");
#ifdef TOPOVOX_WITH_CUDA
  // Auto takes the GPU when there is one; a failure there (too little
  // device memory, say) falls back to the CPU with a warning.
  std::string warn;
  if (resolveDevice(o.device, &warn) == Device::GPU)
  {
    try
    {
      SinkhornResult g = transport::sinkhornGPU(a, b, M, pairs, d, o);
      g.device = Device::GPU;
      return g;
    }
    catch (const std::runtime_error& e)
    {
      warn += std::string(warn.empty() ? "" : "\n") + "GPU path failed (" + e.what() + "); running on the CPU";
    }
  }
#endif
  SinkhornResult out;
#ifdef TOPOVOX_WITH_CUDA
  out.warnings = warn;
#endif
  out.costs.assign(static_cast<size_t>(pairs), 0.0);
  out.iterations.assign(static_cast<size_t>(pairs), 0);
  out.errors.assign(static_cast<size_t>(pairs), 0.0);
  if (o.computePlans)
    out.plans.assign(static_cast<size_t>(pairs * d * d), 0.0);
  std::vector<double> K;
  std::unique_ptr<LogMatrices> logMatrices;
  if (o.method == SinkhornMethod::Sinkhorn)
  {
    K.resize(M.size());
    for (size_t k = 0; k < M.size(); ++k)
      K[k] = std::exp(M[k] / (-o.reg));
  }
  else
    logMatrices.reset(new LogMatrices(M, d, o.reg));
  const int threads = o.threads > 0 ? o.threads : defaultThreadCount();
  const bool scalingMethod = o.method == SinkhornMethod::Sinkhorn;
  if (pairs >= 2 && d >= 256 && (scalingMethod || logMatrices->factored))
  {
    // Pairs together, K (or E) read once per half-iteration for a tile.
    std::vector<PairResult> results;
    double* plans = o.computePlans ? out.plans.data() : nullptr;
    if (scalingMethod)
      scalingBatch(a.data(), b.data(), M, K, d, pairs, o, plans, threads, results);
    else
      logDomainBatch(a.data(), b.data(), M, *logMatrices, d, pairs, o, plans, threads, results);
    for (int64_t p = 0; p < pairs; ++p)
    {
      const PairResult& r = results[static_cast<size_t>(p)];
      out.costs[static_cast<size_t>(p)] = r.cost;
      out.iterations[static_cast<size_t>(p)] = r.iterations;
      out.errors[static_cast<size_t>(p)] = r.error;
      if (!r.warning.empty())
        out.warnings += (out.warnings.empty() ? "" : "\n") + std::string("pair ") + std::to_string(p) + ": " + r.warning;
    }
    return out;
  }
  std::mutex lock;
  // Pairs in parallel; fewer pairs than threads: a pair's own loops (its
  // groups of rows and columns) share the spare threads too.
  const int perPair = d >= 256 ? static_cast<int>(std::max<int64_t>(1, threads / std::max<int64_t>(1, pairs))) : 1;
  parallelFor(pairs, threads, [&](int, int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p)
    {
      double* plan = o.computePlans ? out.plans.data() + p * d * d : nullptr;
      const PairResult r = o.method == SinkhornMethod::Sinkhorn
        ? scaling(a.data() + p * d, b.data() + p * d, M, K, d, o, plan, perPair)
        : logDomain(a.data() + p * d, b.data() + p * d, M, *logMatrices, d, o, plan, perPair);
      out.costs[static_cast<size_t>(p)] = r.cost;
      out.iterations[static_cast<size_t>(p)] = r.iterations;
      out.errors[static_cast<size_t>(p)] = r.error;
      if (!r.warning.empty())
      {
        std::lock_guard<std::mutex> guard(lock);
        out.warnings += (out.warnings.empty() ? "" : "\n") + std::string("pair ") + std::to_string(p) + ": " + r.warning;
      }
    }
  });
  return out;
}
} // namespace topovox
