// SinkhornBatch.cpp - several pairs of histograms together on the CPU
// (SinkhornCPU.h): each half-iteration reads K (or the log domain's
// factored E) once for a tile of pairs instead of once per pair; each pair's
// numbers bit for bit those of the pair alone.
#include "SinkhornCPU.h"

#include "../common/Parallel.h"

#include <functional>

namespace topovox
{
namespace transport
{
namespace
{
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
      r.error = norm2(tmp.data() + p * d, d);
      if (r.error < stopThr)
        stop(p, true);
    }
  }
  // Progress at a check after iteration ii: the share of numItermax done
  // (pairs that converge early make the rest quicker); an abort throws.
  static void report(const SinkhornOptions& o, int ii)
  {
    if (o.progress && !o.progress(static_cast<double>(ii + 1) / static_cast<double>(o.numItermax)))
      throw Aborted{};
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
} // namespace

// The scaling method for n pairs at once (n >= 2, d >= 256): each pair's
// iterations exactly as scalingPair() runs them (every output the same sum in
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
    tiles.run([&](int64_t j0, const int64_t* pairs, int m) {
      columnSumsOf(j0, pairs, m, [&](int t, int64_t j, double sum) {
        const size_t at = static_cast<size_t>(pairs[t] * d + j);
        ktu[at] = sum;
        v[at] = b[at] / sum;
      });
    });
    tiles.run([&](int64_t i0, const int64_t* pairs, int m) {
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
    tiles.run([&](int64_t j0, const int64_t* pairs, int m) {
      columnSumsOf(j0, pairs, m, [&](int t, int64_t j, double sum) {
        const size_t at = static_cast<size_t>(pairs[t] * d + j);
        tmp[at] = sum * v[at] - b[at]; // u_i K_ij = K_ij u_i: the same products
      });
    });
    batch.check(checked, tmp, d, o.stopThr);
    batch.report(o, ii);
  }
  batch.finishAll(threads, o, d, M, plans, [&](int64_t p, int64_t i, int64_t j) {
    return u[static_cast<size_t>(p * d + i)] * K[static_cast<size_t>(i * d + j)] * v[static_cast<size_t>(p * d + j)];
  });
}

// The log domain for n pairs at once (n >= 2, d >= 256, factored
// matrices): each pair's iterations exactly as logDomainPair() runs them (the
// same sums in the same order, bit for bit), E and ET read once per
// half-iteration for a tile of pairs instead of once per pair. A pair
// whose potentials' maximum is not finite is summed by the definition, on
// its own, as logDomainPair() sums it.
void logDomainBatch(const double* a, const double* b, const std::vector<double>& M, const LogMatrices& L, int64_t d,
  int64_t n, const SinkhornOptions& o, double* plans, int threads, std::vector<PairResult>& results)
{
  const size_t nd = static_cast<size_t>(n * d);
  std::vector<double> u(nd, 0.0), v(u), tmp(nd), shifted(nd), lse(nd), shift(static_cast<size_t>(n));
  BatchPairs batch(n, results);
  std::vector<int64_t> active, tiled;
  const PairTiles tiles(d, n, threads, tiled);
  // L.E and L.ET transposed (L.columns): a tile's factored sums read them
  // along their rows (measured, 16 pairs of d = 1024: 1.4x faster than
  // eight rows at a time, which a single pair's sums prefer).
  const std::vector<double>&Ecolumns = L.E, &ETcolumns = L.ET;
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
    batch.report(o, ii);
  }
  batch.finishAll(threads, o, d, M, plans, [&](int64_t p, int64_t i, int64_t j) {
    return std::exp(L.Mr[static_cast<size_t>(i * d + j)] + u[static_cast<size_t>(p * d + i)] +
      v[static_cast<size_t>(p * d + j)]);
  });
}
}
}
