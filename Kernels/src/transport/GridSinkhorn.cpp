// GridSinkhorn.cpp - convolutional Sinkhorn (GridSinkhorn.h): the kernel as
// one small matrix per axis, applied line by line on the CPU threads, in the
// scaling domain (sums) or the log domain (log-sum-exps).
#include "topovox/GridSinkhorn.h"

#include "../common/Parallel.h"

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace topovox
{
namespace
{
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// A linear operator that is a product of one n_a x n_a matrix per axis
// (row-major, F[a][i * n + j]); `logDomain`: the matrices hold logarithms
// and applying means log-sum-exp instead of sum of products.
class SeparableOperator
{
public:
  SeparableOperator(const int64_t dims[3], int threads, bool logDomain)
    : threads_(threads)
    , log_(logDomain)
  {
    for (int a = 0; a < 3; ++a)
      n_[a] = dims[a];
  }

  // out = (F[0] x F[1] x F[2]) in, axis by axis; in and out may alias.
  void apply(const std::array<std::vector<double>, 3>& F, const std::vector<double>& in, std::vector<double>& out) const
  {
    out = in;
    const int64_t stride[3] = { 1, n_[0], n_[0] * n_[1] };
    for (int a = 0; a < 3; ++a)
    {
      const int64_t n = n_[a];
      if (n == 1 && F[a][0] == (log_ ? 0.0 : 1.0))
        continue; // the identity
      const int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
      const int64_t lines = n_[b] * n_[c];
      parallelFor(lines, threads_, [&](int, int64_t l0, int64_t l1) {
        std::vector<double> line(static_cast<size_t>(n)), term(static_cast<size_t>(n));
        for (int64_t l = l0; l < l1; ++l)
        {
          const int64_t first = (l % n_[b]) * stride[b] + (l / n_[b]) * stride[c];
          for (int64_t j = 0; j < n; ++j)
            line[static_cast<size_t>(j)] = out[static_cast<size_t>(first + j * stride[a])];
          for (int64_t i = 0; i < n; ++i)
          {
            const double* row = F[a].data() + i * n;
            double r;
            if (!log_)
            {
              r = 0;
              for (int64_t j = 0; j < n; ++j)
                r += row[j] * line[static_cast<size_t>(j)];
            }
            else
            {
              double m = kNegInf;
              for (int64_t j = 0; j < n; ++j)
              {
                term[static_cast<size_t>(j)] = row[j] + line[static_cast<size_t>(j)];
                m = std::max(m, term[static_cast<size_t>(j)]);
              }
              if (m == kNegInf)
                r = kNegInf;
              else
              {
                double s = 0;
                for (int64_t j = 0; j < n; ++j)
                  s += std::exp(term[static_cast<size_t>(j)] - m);
                r = m + std::log(s);
              }
            }
            out[static_cast<size_t>(first + i * stride[a])] = r;
          }
        }
      });
    }
  }

private:
  int64_t n_[3];
  int threads_;
  bool log_;
};

double norm2(const std::vector<double>& x)
{
  double s = 0;
  for (double v : x)
    s += v * v;
  return std::sqrt(s);
}

// Per axis: the kernel's factor exp(-(s (i - j))^2 / reg) (or its log), the
// same times the cost term (s (i - j))^2, and times the position s j.
struct Factors
{
  std::array<std::vector<double>, 3> kernel, cost[3], position[3];
};

Factors factorsOf(const int64_t dims[3], const double spacing[3], double reg, bool logDomain)
{
  Factors f;
  for (int a = 0; a < 3; ++a)
  {
    const int64_t n = dims[a];
    std::vector<double> k(static_cast<size_t>(n * n)), c(k.size()), p(k.size());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
      {
        const double d = spacing[a] * static_cast<double>(i - j), m = d * d;
        const size_t at = static_cast<size_t>(i * n + j);
        // exp(M / -reg), as the dense solver computes K.
        k[at] = logDomain ? m / -reg : std::exp(m / -reg);
        c[at] = logDomain ? k[at] + std::log(m) : k[at] * m;
        const double x = spacing[a] * static_cast<double>(j);
        p[at] = logDomain ? k[at] + std::log(x) : k[at] * x;
      }
    f.kernel[a] = k;
    for (int b = 0; b < 3; ++b)
    {
      // The operator for axis b's term: axis b's factor replaced.
      f.cost[b][a] = a == b ? c : k;
      f.position[b][a] = a == b ? p : k;
    }
  }
  return f;
}
} // namespace

GridSinkhornResult sinkhornGrid(const std::vector<double>& a, const std::vector<double>& b, const int64_t dims[3],
  const double spacing[3], const SinkhornOptions& o)
{
  for (int k = 0; k < 3; ++k)
  {
    if (dims[k] < 1)
      throw std::invalid_argument("the grid needs at least one voxel per axis");
    if (!(spacing[k] > 0) || !std::isfinite(spacing[k]))
      throw std::invalid_argument("the spacing must be positive and finite");
  }
  const int64_t d = dims[0] * dims[1] * dims[2];
  if (static_cast<int64_t>(a.size()) != d || static_cast<int64_t>(b.size()) != d)
    throw std::invalid_argument("the densities must have one value per voxel (" + std::to_string(d) + ")");
  if (!(o.reg > 0) || !std::isfinite(o.reg))
    throw std::invalid_argument("reg must be positive and finite");
  if (o.numItermax < 1)
    throw std::invalid_argument("numItermax must be at least 1");
  for (const auto* v : { &a, &b })
    for (double x : *v)
      if (!(x >= 0) || !std::isfinite(x))
        throw std::invalid_argument("densities must be nonnegative and finite");

  const int threads = o.threads > 0 ? o.threads : defaultThreadCount();
  const bool logDomain = o.method == SinkhornMethod::SinkhornLog;
  const SeparableOperator K(dims, threads, logDomain);
  const Factors F = factorsOf(dims, spacing, o.reg, logDomain);
  const size_t n = static_cast<size_t>(d);
  GridSinkhornResult r;
  bool converged = false;
  // Scaling: u, v; log domain: the log potentials (POT's names for both).
  std::vector<double> u(n, logDomain ? 0.0 : 1.0 / static_cast<double>(d)), v(u), uprev, vprev, ktu, kv, tmp(n);
  std::vector<double> logA(n), logB(n);
  for (size_t k = 0; k < n; ++k)
  {
    logA[k] = std::log(a[k]);
    logB[k] = std::log(b[k]);
  }
  for (int ii = 0; ii < o.numItermax; ++ii)
  {
    if (!logDomain)
    {
      uprev = u;
      vprev = v;
      K.apply(F.kernel, u, ktu); // K is symmetric: K^T u
      for (size_t k = 0; k < n; ++k)
        v[k] = b[k] / ktu[k];
      K.apply(F.kernel, v, kv);
      bool bad = false;
      for (size_t k = 0; k < n; ++k)
      {
        u[k] = 1.0 / ((1.0 / a[k]) * kv[k]);
        bad = bad || ktu[k] == 0 || !std::isfinite(u[k]) || !std::isfinite(v[k]);
      }
      r.iterations = ii + 1;
      if (bad)
      {
        r.warnings = "numerical errors at iteration " + std::to_string(ii);
        u = uprev;
        v = vprev;
        converged = true;
        break;
      }
      if (ii % 10 == 0)
      {
        K.apply(F.kernel, u, ktu);
        for (size_t k = 0; k < n; ++k)
          tmp[k] = ktu[k] * v[k] - b[k];
        r.error = norm2(tmp);
      }
    }
    else
    {
      K.apply(F.kernel, u, ktu);
      for (size_t k = 0; k < n; ++k)
        v[k] = logB[k] - ktu[k];
      K.apply(F.kernel, v, kv);
      for (size_t k = 0; k < n; ++k)
        u[k] = logA[k] - kv[k];
      r.iterations = ii + 1;
      if (ii % 10 == 0)
      {
        K.apply(F.kernel, u, ktu);
        for (size_t k = 0; k < n; ++k)
          tmp[k] = std::exp(ktu[k] + v[k]) - b[k];
        r.error = norm2(tmp);
      }
    }
    if (ii % 10 == 0 && r.error < o.stopThr)
    {
      converged = true;
      break;
    }
  }
  if (!converged)
    r.warnings = "did not converge in " + std::to_string(o.numItermax) + " iterations (marginal error " +
      std::to_string(r.error) + ")";

  // The dual potentials.
  r.sourcePotential.resize(n);
  r.targetPotential.resize(n);
  for (size_t k = 0; k < n; ++k)
  {
    r.sourcePotential[k] = o.reg * (logDomain ? u[k] : std::log(u[k]));
    r.targetPotential[k] = o.reg * (logDomain ? v[k] : std::log(v[k]));
  }
  // The cost, axis term by axis term, and the barycentric displacement.
  std::vector<double> rowSum, moved;
  K.apply(F.kernel, v, rowSum);
  r.displacement.assign(3 * n, 0.0);
  for (int axis = 0; axis < 3; ++axis)
  {
    std::vector<double> term;
    K.apply(F.cost[axis], v, term);
    for (size_t k = 0; k < n; ++k)
      r.cost += logDomain ? std::exp(u[k] + term[k]) : u[k] * term[k];
    K.apply(F.position[axis], v, moved);
    const int64_t stride = axis == 0 ? 1 : axis == 1 ? dims[0] : dims[0] * dims[1];
    for (size_t k = 0; k < n; ++k)
    {
      if (!(a[k] > 0))
        continue;
      const double mean = logDomain ? std::exp(moved[k] - rowSum[k]) : moved[k] / rowSum[k];
      const double here = spacing[axis] * static_cast<double>((static_cast<int64_t>(k) / stride) % dims[axis]);
      r.displacement[3 * k + static_cast<size_t>(axis)] = std::isfinite(mean) ? mean - here : 0.0;
    }
  }
  return r;
}

} // namespace topovox
