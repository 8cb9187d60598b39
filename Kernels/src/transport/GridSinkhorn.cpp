// GridSinkhorn.cpp - convolutional Sinkhorn (GridSinkhorn.h): the kernel as
// one small matrix per axis, applied along the lines of each axis on the CPU
// threads, in the scaling domain (sums, eight lines at a time) or the log
// domain (log-sum-exps: factored into the scaling method's sums where that
// is exact, a line at a time by their definition elsewhere).
#include "topovox/GridSinkhorn.h"

#include "GridResultVoxel.h"
#include "FactoredLogSumExp.h"
#include "GridSinkhornSolver.h"
#include "SinkhornChecks.h"

#include "../common/Parallel.h"

#include <algorithm>
#include <array>
#include <atomic>
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
  void apply(const std::vector<double>* const (&F)[3], const std::vector<double>& in, std::vector<double>& out) const
  {
    out = in;
    const int64_t stride[3] = { 1, n_[0], n_[0] * n_[1] };
    for (int a = 0; a < 3; ++a)
    {
      const int64_t n = n_[a];
      if (n == 1 && (*F[a])[0] == (log_ ? 0.0 : 1.0))
        continue; // the identity
      const int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
      const int64_t lines = n_[b] * n_[c];
      if (!log_)
      {
        applyScalingAxis(*F[a], out, a, b, c, lines, stride);
        continue;
      }
      if (factored_[a] && F[a] == kernel_[a])
      {
        applyFactoredAxis(*F[a], out, a, b, c, lines, stride);
        continue;
      }
      parallelFor(lines, threadsFor(lines * n * n), [&](int, int64_t l0, int64_t l1) {
        std::vector<double> line(static_cast<size_t>(n)), term(static_cast<size_t>(n));
        for (int64_t l = l0; l < l1; ++l)
        {
          const int64_t first = (l % n_[b]) * stride[b] + (l / n_[b]) * stride[c];
          for (int64_t j = 0; j < n; ++j)
            line[static_cast<size_t>(j)] = out[static_cast<size_t>(first + j * stride[a])];
          directLine(*F[a], line, term, out, first, stride[a]);
        }
      });
    }
  }

  // The log domain's kernel factors (-C / reg per axis), factored where
  // that is exact (transport::factorRows; see applyFactoredAxis). apply()
  // recognises them by address.
  void factorKernel(const std::vector<double>* const (&kernel)[3])
  {
    for (int a = 0; a < 3 && log_; ++a)
      if (n_[a] > 1 && transport::factorRows(*kernel[a], n_[a], exps_[a], rowMax_[a]))
      {
        kernel_[a] = kernel[a];
        factored_[a] = true;
      }
  }

private:
  // One line's log-sum-exps by their definition: out_i = logsumexp_j
  // (F_ij + line_j), the maximum first.
  void directLine(const std::vector<double>& F, const std::vector<double>& line, std::vector<double>& term,
    std::vector<double>& out, int64_t first, int64_t step) const
  {
    const int64_t n = static_cast<int64_t>(line.size());
    for (int64_t i = 0; i < n; ++i)
    {
      const double* row = F.data() + i * n;
      double m = kNegInf;
      for (int64_t j = 0; j < n; ++j)
      {
        term[static_cast<size_t>(j)] = row[j] + line[static_cast<size_t>(j)];
        m = std::max(m, term[static_cast<size_t>(j)]);
      }
      double r = kNegInf;
      if (m != kNegInf)
      {
        double s = 0;
        for (int64_t j = 0; j < n; ++j)
          s += std::exp(term[static_cast<size_t>(j)] - m);
        r = m + std::log(s);
      }
      out[static_cast<size_t>(first + i * step)] = r;
    }
  }

  // The log domain's axis a as the scaling method's product (as the GPU's
  // applyFactored, GridSinkhornCUDA.cu; FactoredLogSumExp.h): with m_i the
  // row maximum of F, c the line's maximum and E = exp(F - m),
  //   logsumexp_j (F_ij + x_j) = m_i + c + log sum_j E_ij exp(x_j - c):
  // an exp per voxel and a log per output instead of an exp per term. A
  // line whose maximum is not finite (all -inf, +inf) is summed by its
  // definition.
  void applyFactoredAxis(const std::vector<double>& F, std::vector<double>& out, int a, int b, int c, int64_t lines,
    const int64_t stride[3]) const
  {
    const int64_t n = n_[a];
    const int workers = threadsFor(lines * n * n);
    auto firstOf = [&](int64_t l) { return (l % n_[b]) * stride[b] + (l / n_[b]) * stride[c]; };
    // Each line's maximum, and its values turned into exp(x - c) where the
    // maximum is finite (the other lines keep their own values).
    std::vector<double> top(static_cast<size_t>(lines));
    parallelFor(lines, workers, [&](int, int64_t l0, int64_t l1) {
      for (int64_t l = l0; l < l1; ++l)
      {
        double* x = out.data() + firstOf(l);
        double m = kNegInf;
        for (int64_t j = 0; j < n; ++j)
          m = std::max(m, x[j * stride[a]]); // NaN left out, as the direct maximum leaves it
        top[static_cast<size_t>(l)] = m;
        if (std::isfinite(m))
          for (int64_t j = 0; j < n; ++j)
            x[j * stride[a]] = std::exp(x[j * stride[a]] - m);
      }
    });
    std::vector<double> raw;
    if (std::any_of(top.begin(), top.end(), [](double m) { return !std::isfinite(m); }))
      raw = out; // the lines left as they were, for their direct sums
    applyScalingAxis(exps_[a], out, a, b, c, lines, stride);
    const std::vector<double>& rowMax = rowMax_[a];
    parallelFor(lines, workers, [&](int, int64_t l0, int64_t l1) {
      std::vector<double> line, term;
      for (int64_t l = l0; l < l1; ++l)
      {
        const int64_t first = firstOf(l);
        const double m = top[static_cast<size_t>(l)];
        if (!std::isfinite(m))
        {
          line.resize(static_cast<size_t>(n));
          term.resize(static_cast<size_t>(n));
          for (int64_t j = 0; j < n; ++j)
            line[static_cast<size_t>(j)] = raw[static_cast<size_t>(first + j * stride[a])];
          directLine(F, line, term, out, first, stride[a]);
          continue;
        }
        for (int64_t i = 0; i < n; ++i)
        {
          double& x = out[static_cast<size_t>(first + i * stride[a])];
          x = transport::factoredLse(x, rowMax[static_cast<size_t>(i)], m);
        }
      }
    });
  }

  // The scaling method along axis a, kLines lines at a time: each output is
  // still the sum over j in order (the same roundings as one line at a
  // time), but the kLines sums are independent, so they fill the floating
  // point pipelines (and vector lanes) that one dependent chain of
  // additions leaves idle, and each factor entry is read once per kLines
  // lines.
  void applyScalingAxis(const std::vector<double>& F, std::vector<double>& out, int a, int b, int c, int64_t lines,
    const int64_t stride[3]) const
  {
    if (a > 0)
    {
      applyScalingStrided(F, out, a, stride[a]);
      return;
    }
    constexpr int kLines = 8;
    const int64_t n = n_[a], groups = (lines + kLines - 1) / kLines;
    parallelFor(groups, threadsFor(lines * n * n), [&](int, int64_t g0, int64_t g1) {
      std::vector<double> block(static_cast<size_t>(n * kLines));
      int64_t first[kLines];
      for (int64_t g = g0; g < g1; ++g)
      {
        const int64_t l0 = g * kLines, count = std::min<int64_t>(kLines, lines - l0);
        for (int q = 0; q < kLines; ++q)
        {
          const int64_t l = l0 + std::min<int64_t>(q, count - 1); // spare lanes repeat the last line
          first[q] = (l % n_[b]) * stride[b] + (l / n_[b]) * stride[c];
          for (int64_t j = 0; j < n; ++j)
            block[static_cast<size_t>(j * kLines + q)] = out[static_cast<size_t>(first[q] + j * stride[a])];
        }
        for (int64_t i = 0; i < n; ++i)
        {
          const double* row = F.data() + i * n;
          double r[kLines] = {};
          for (int64_t j = 0; j < n; ++j)
          {
            const double f = row[j];
            const double* x = block.data() + j * kLines;
            for (int q = 0; q < kLines; ++q)
              r[q] += f * x[q];
          }
          for (int q = 0; q < count; ++q)
            out[static_cast<size_t>(first[q] + i * stride[a])] = r[q];
        }
      }
    });
  }

  // The scaling method along y or z, whose lines lie `step` (nx, nx ny)
  // apart: the voxels with the same index along the axis form contiguous
  // runs of `step` values, so output run i is sum_j F_ij (input run j), each
  // output element still summed over j in order (the same roundings as
  // applyScalingAxis's lines), with contiguous loads instead of gathering
  // lines: tiles of up to kMaxTile values of a run, a thread each, over a
  // copy of the input. On this repository's 2 cores, 100 iterations of
  // 64^3 at reg 50: 2.43 -> 1.3 to 1.4 s (scaling), 4.56 -> 2.8 to 3.0 s
  // (log domain, whose factored axes come here too); results bit for bit
  // the same (bench/README.md).
  void applyScalingStrided(const std::vector<double>& F, std::vector<double>& out, int a, int64_t step) const
  {
    constexpr int64_t kMaxTile = 256;
    const int64_t n = n_[a], blocks = static_cast<int64_t>(out.size()) / (step * n);
    const int workers = threadsFor(static_cast<int64_t>(out.size()) * n);
    // Narrower tiles where the runs are few (a 2D grid's y pass is one
    // block): a tile for each thread at least, 16 values at the least.
    const int64_t perRun = (workers + blocks - 1) / blocks;
    const int64_t kTile = std::min(kMaxTile, std::max<int64_t>(16, (step + perRun - 1) / perRun));
    const int64_t tilesPerRun = (step + kTile - 1) / kTile, tiles = blocks * tilesPerRun;
    scratch_.assign(out.begin(), out.end()); // kept: a fresh vector a pass would fault its pages in again
    const std::vector<double>& in = scratch_;
    parallelFor(tiles, workers, [&](int, int64_t t0, int64_t t1) {
      double acc[kMaxTile];
      for (int64_t t = t0; t < t1; ++t)
      {
        const int64_t block = t / tilesPerRun, c0 = (t % tilesPerRun) * kTile, width = std::min(kTile, step - c0);
        const double* source = in.data() + block * step * n + c0;
        double* target = out.data() + block * step * n + c0;
        for (int64_t i = 0; i < n; ++i)
        {
          const double* row = F.data() + i * n;
          std::fill(acc, acc + width, 0.0);
          for (int64_t j = 0; j < n; ++j)
          {
            const double f = row[j];
            const double* x = source + j * step;
            for (int64_t k = 0; k < width; ++k)
              acc[k] += f * x[k];
          }
          std::copy(acc, acc + width, target + i * step);
        }
      }
    });
  }

  // Threads for an axis pass of `work` terms: one below kSerialWork, where
  // handing the pass to the threads costs more than the pass; small grids
  // run thousands of iterations of a dozen passes each.
  static constexpr int64_t kSerialWork = int64_t(1) << 18;
  int threadsFor(int64_t work) const { return work < kSerialWork ? 1 : threads_; }
  int64_t n_[3];
  int threads_;
  bool log_;
  bool factored_[3] = { false, false, false };
  const std::vector<double>* kernel_[3] = { nullptr, nullptr, nullptr };
  mutable std::vector<double> scratch_; // applyScalingStrided's copy of its input
  std::vector<double> rowMax_[3], exps_[3];
};

// The CPU threads' backend of solveGrid (GridSinkhornSolver.h).
class HostBackend
{
public:
  HostBackend(const std::vector<double>& a, const std::vector<double>& b, const int64_t dims[3],
    const transport::GridFactors& factors, bool logDomain, int threads)
    : a_(a)
    , b_(b)
    , factors_(factors)
    , log_(logDomain)
    , threads_(threads)
    , op_(dims, threads, logDomain)
  {
    for (int k = 0; k < 3; ++k)
      dims_[k] = dims[k];
    const size_t n = a.size();
    for (transport::Buffer t : { transport::Buffer::KTU, transport::Buffer::KV, transport::Buffer::Scratch })
      buffers_[transport::workIndex(t)].assign(n, 0.0);
    for (auto* pair : { u_, v_ })
    {
      pair[0].assign(n, logDomain ? 0.0 : 1.0 / static_cast<double>(n));
      pair[1].assign(n, 0.0);
    }
    const std::vector<double>* kernel[3] = { &factors_.kernel[0], &factors_.kernel[1], &factors_.kernel[2] };
    op_.factorKernel(kernel);
    if (logDomain)
    {
      logA_.resize(n);
      logB_.resize(n);
      for (size_t k = 0; k < n; ++k)
      {
        logA_[k] = std::log(a[k]);
        logB_[k] = std::log(b[k]);
      }
    }
  }

  void apply(transport::FactorSet set, transport::Buffer in, transport::Buffer out)
  {
    const std::vector<double>* F[3] = { &factors_.of(set, 0), &factors_.of(set, 1), &factors_.of(set, 2) };
    op_.apply(F, buf(in), buf(out)); // the factors themselves, not copies

  }
  void stepV()
  {
    apply(transport::FactorSet::Kernel, transport::Buffer::U, transport::Buffer::KTU);
    vSlot_ ^= 1; // the spare copy becomes v; the one before stays for restore()
    std::vector<double>&v = buf(transport::Buffer::V), &ktu = buf(transport::Buffer::KTU);
    parallelFor(static_cast<int64_t>(v.size()), elementThreads(), [&](int, int64_t k0, int64_t k1) {
      for (size_t k = static_cast<size_t>(k0); k < static_cast<size_t>(k1); ++k)
        v[k] = transport::updatedV(log_ ? logB_[k] : b_[k], ktu[k], log_);
    });
  }
  bool stepU(int)
  {
    apply(transport::FactorSet::Kernel, transport::Buffer::V, transport::Buffer::KV);
    uSlot_ ^= 1;
    std::vector<double>&u = buf(transport::Buffer::U), &kv = buf(transport::Buffer::KV);
    const std::vector<double>&v = buf(transport::Buffer::V), &ktu = buf(transport::Buffer::KTU);
    std::atomic<bool> bad(false);
    parallelFor(static_cast<int64_t>(u.size()), elementThreads(), [&](int, int64_t k0, int64_t k1) {
      bool any = false;
      for (size_t k = static_cast<size_t>(k0); k < static_cast<size_t>(k1); ++k)
      {
        u[k] = transport::updatedU(log_ ? logA_[k] : a_[k], kv[k], log_);
        any = any || (!log_ && transport::updateWentBad(ktu[k], u[k], v[k]));
      }
      if (any)
        bad = true;
    });
    return bad;
  }
  // Threads for a pass over the voxels: one below 2^16 (a 256^2 grid), where
  // waking the threads costs more than the pass.
  int elementThreads() const { return a_.size() < (size_t(1) << 16) ? 1 : threads_; }
  int failedIteration() const { return -1; } // stepU says at once
  void restore(int iteration) { uSlot_ = vSlot_ = iteration % 2; }
  bool iterate(int, int) { return false; } // the steps cost more than their calls here
  double marginalError()
  {
    const std::vector<double>&v = buf(transport::Buffer::V), &ktu = buf(transport::Buffer::KTU);
    double s = 0;
    for (size_t k = 0; k < v.size(); ++k)
    {
      const double t = log_ ? std::exp(ktu[k] + v[k]) - b_[k] : ktu[k] * v[k] - b_[k];
      s += t * t;
    }
    return std::sqrt(s);
  }
  void potentials(double reg, GridField& source, GridField& target)
  {
    const std::vector<double>&u = buf(transport::Buffer::U), &v = buf(transport::Buffer::V);
    source.resize(u.size());
    target.resize(u.size());
    parallelFor(static_cast<int64_t>(u.size()), threads_, [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k)
      {
        source[static_cast<size_t>(k)] = transport::potentialOf(u[static_cast<size_t>(k)], reg, log_);
        target[static_cast<size_t>(k)] = transport::potentialOf(v[static_cast<size_t>(k)], reg, log_);
      }
    });
  }
  double costAlong(transport::Buffer term)
  {
    const std::vector<double>&u = buf(transport::Buffer::U), &t = buf(term);
    double s = 0; // in voxel order, whatever the threads
    for (size_t k = 0; k < u.size(); ++k)
      s += transport::costTermOf(u[k], t[k], log_);
    return s;
  }
  void displaceAlong(int axis, transport::Buffer moved, transport::Buffer rowSum, const double spacing[3])
  {
    const std::vector<double>&m = buf(moved), &rs = buf(rowSum);
    displacement_.resize(3 * m.size());
    const int64_t stride = axis == 0 ? 1 : axis == 1 ? dims_[0] : dims_[0] * dims_[1];
    parallelFor(static_cast<int64_t>(m.size()), threads_, [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k)
      {
        const double here = spacing[axis] * static_cast<double>((k / stride) % dims_[axis]);
        const size_t i = static_cast<size_t>(k);
        displacement_[3 * i + static_cast<size_t>(axis)] =
          transport::displacementOf(a_[i], m[i], rs[i], here, log_);
      }
    });
  }
  GridField displacement() { return std::move(displacement_); }

private:
  std::vector<double>& buf(transport::Buffer b)
  {
    return b == transport::Buffer::U ? u_[uSlot_] : b == transport::Buffer::V ? v_[vSlot_] : buffers_[transport::workIndex(b)];
  }

  const std::vector<double>&a_, &b_;
  const transport::GridFactors& factors_;
  bool log_;
  int threads_;
  int64_t dims_[3];
  SeparableOperator op_;
  std::vector<double> buffers_[transport::kWorkBuffers], logA_, logB_; // KTU, KV, Scratch (workIndex)
  std::vector<double> u_[2], v_[2];               // two copies each: GridSinkhornSolver.h
  int uSlot_ = 0, vSlot_ = 0;
  GridField displacement_;
};
} // namespace

namespace transport
{
GridDiagonals gridDiagonals(const int64_t dims[3], const double spacing[3], double reg, bool logDomain)
{
  GridDiagonals g;
  for (int a = 0; a < 3; ++a)
  {
    const int64_t n = dims[a];
    std::vector<double> kd(static_cast<size_t>(2 * n - 1)), cd(kd.size()), x(static_cast<size_t>(n));
    for (int64_t t = 0; t < 2 * n - 1; ++t)
    {
      const double d = spacing[a] * static_cast<double>(t - (n - 1)), m = d * d;
      // exp(M / -reg), as the dense solver computes K.
      kd[static_cast<size_t>(t)] = logDomain ? m / -reg : std::exp(m / -reg);
      cd[static_cast<size_t>(t)] = logDomain ? kd[static_cast<size_t>(t)] + std::log(m) : kd[static_cast<size_t>(t)] * m;
    }
    for (int64_t j = 0; j < n; ++j)
    {
      const double position = spacing[a] * static_cast<double>(j);
      x[static_cast<size_t>(j)] = logDomain ? std::log(position) : position;
    }
    g.kernel[a] = std::move(kd);
    g.cost[a] = std::move(cd);
    g.position[a] = std::move(x);
  }
  return g;
}

GridFactors gridFactors(const GridDiagonals& g, bool logDomain)
{
  GridFactors f;
  for (int a = 0; a < 3; ++a)
  {
    const int64_t n = static_cast<int64_t>(g.position[a].size());
    std::vector<double> k(static_cast<size_t>(n * n)), c(k.size()), p(k.size());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
      {
        const size_t at = static_cast<size_t>(i * n + j), t = static_cast<size_t>(i - j + n - 1);
        k[at] = g.kernel[a][t];
        c[at] = g.cost[a][t];
        const double x = g.position[a][static_cast<size_t>(j)];
        p[at] = logDomain ? k[at] + x : k[at] * x;
      }
    f.kernel[a] = std::move(k);
    f.cost[a] = std::move(c);
    f.position[a] = std::move(p);
  }
  return f;
}

GridField centredOverMass(const GridField& potential, const std::vector<double>& mass, int threads)
{
  const int64_t n = static_cast<int64_t>(potential.size());
  constexpr int64_t kChunk = int64_t(1) << 16;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<double> sums(static_cast<size_t>(chunks));
  std::vector<int64_t> counts(static_cast<size_t>(chunks));
  auto counted = [&](int64_t k) { return mass[static_cast<size_t>(k)] > 0 && std::isfinite(potential[static_cast<size_t>(k)]); };
  parallelFor(chunks, threads, [&](int, int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
    {
      double sum = 0;
      int64_t count = 0;
      for (int64_t k = c * kChunk; k < std::min(n, (c + 1) * kChunk); ++k)
        if (counted(k))
        {
          sum += potential[static_cast<size_t>(k)];
          ++count;
        }
      sums[static_cast<size_t>(c)] = sum;
      counts[static_cast<size_t>(c)] = count;
    }
  });
  double sum = 0;
  int64_t count = 0;
  for (int64_t c = 0; c < chunks; ++c)
  {
    sum += sums[static_cast<size_t>(c)];
    count += counts[static_cast<size_t>(c)];
  }
  const double mean = count ? sum / static_cast<double>(count) : 0.0;
  GridField out(static_cast<size_t>(n));
  parallelFor(n, threads, [&](int, int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k)
      out[static_cast<size_t>(k)] = counted(k) ? potential[static_cast<size_t>(k)] - mean : 0.0;
  });
  return out;
}
} // namespace transport

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
  const int threads = threadCount(o.threads);
  transport::checkSinkhornArguments(o, a, b, "densities", threads);

  const bool logDomain = o.method == SinkhornMethod::SinkhornLog;
  const transport::GridDiagonals diagonals = transport::gridDiagonals(dims, spacing, o.reg, logDomain);
  std::string warn;
#ifdef TOPOVOX_WITH_CUDA
  if (resolveDevice(o.device, &warn) == Device::GPU)
  {
    try
    {
      GridSinkhornResult g = transport::sinkhornGridGPU(a, b, dims, spacing, o, diagonals);
      g.device = Device::GPU;
      return g;
    }
    catch (const std::runtime_error& e)
    {
      warn += std::string(warn.empty() ? "" : "\n") + "GPU path failed (" + e.what() + "); running on the CPU";
    }
  }
#else
  resolveDevice(o.device, &warn);
#endif
  const transport::GridFactors factors = transport::gridFactors(diagonals, logDomain);
  HostBackend be(a, b, dims, factors, logDomain, threads);
  GridSinkhornResult r = transport::solveGrid(be, a, b, spacing, o);
  if (!warn.empty())
    r.warnings = warn + (r.warnings.empty() ? "" : "\n" + r.warnings);
  return r;
}

void normalizeDensity(std::vector<double>& values, const std::string& which)
{
  double total = 0;
  for (size_t k = 0; k < values.size(); ++k)
  {
    const double v = values[k];
    if (!(v >= 0) || !std::isfinite(v))
      throw std::invalid_argument(which + " density has a negative, NaN or infinite value (" + std::to_string(v) +
        " at sample " + std::to_string(k) + "); densities must be nonnegative and finite");
    total += v;
  }
  if (!(total > 0))
    throw std::invalid_argument(which + " density is zero everywhere");
  for (double& v : values)
    v /= total;
}

} // namespace topovox
