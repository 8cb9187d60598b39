// Sinkhorn.cpp - POT's Sinkhorn iterations (Sinkhorn.h): the arguments
// checked, the GPU when there is one, else the CPU's solvers
// (SinkhornCPU.h): several pairs together where K outgrows the caches,
// otherwise pairs in parallel.
#include "topovox/Sinkhorn.h"

#include "topovox/Device.h"

#include "../common/Parallel.h"
#include "SinkhornBackends.h"
#include "SinkhornCPU.h"
#include "SinkhornChecks.h"

#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace topovox
{
SinkhornResult sinkhorn(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& M,
  int64_t pairs, int64_t d, const SinkhornOptions& o)
{
  if (pairs < 1 || d < 1)
    throw std::invalid_argument("at least one pair of histograms of dimension 1 is needed");
  if (static_cast<int64_t>(a.size()) != pairs * d || static_cast<int64_t>(b.size()) != pairs * d)
    throw std::invalid_argument("the histograms must be pairs x d values each");
  if (static_cast<int64_t>(M.size()) != d * d)
    throw std::invalid_argument("the cost matrix must be d x d (d = " + std::to_string(d) + ")");
  const int threads = threadCount(o.threads);
  transport::checkSinkhornArguments(o, a, b, "histograms", threads);
#ifdef TOPOVOX_WITH_CUDA
  // Auto takes the GPU when there is one; a failure there (too little
  // device memory, say) falls back to the CPU with a warning. The GPU path
  // checks the cost matrix on the device.
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
  transport::checkCostMatrix(M, threads);
  SinkhornResult out;
#ifdef TOPOVOX_WITH_CUDA
  out.warnings = warn;
#endif
  out.costs.assign(static_cast<size_t>(pairs), 0.0);
  out.iterations.assign(static_cast<size_t>(pairs), 0);
  out.errors.assign(static_cast<size_t>(pairs), 0.0);
  if (o.computePlans)
    out.plans.assign(static_cast<size_t>(pairs * d * d), 0.0);
  // Several pairs of d >= 256 run together: K (or the factored E) is then
  // larger than the caches, and reading it once per tile of pairs instead
  // of once per pair is most of the time saved.
  const bool together = pairs >= 2 && d >= 256;
  const bool scalingMethod = o.method == SinkhornMethod::Sinkhorn;
  std::vector<double> K;
  std::unique_ptr<transport::LogMatrices> logMatrices;
  if (scalingMethod)
  {
    K.resize(M.size());
    for (size_t k = 0; k < M.size(); ++k)
      K[k] = std::exp(M[k] / (-o.reg));
  }
  else
    logMatrices.reset(new transport::LogMatrices(M, d, o.reg, together));
  if (together && (scalingMethod || logMatrices->factored))
  {
    // Pairs together, K (or E) read once per half-iteration for a tile.
    std::vector<transport::PairResult> results;
    double* plans = o.computePlans ? out.plans.data() : nullptr;
    if (scalingMethod)
      transport::scalingBatch(a.data(), b.data(), M, K, d, pairs, o, plans, threads, results);
    else
      transport::logDomainBatch(a.data(), b.data(), M, *logMatrices, d, pairs, o, plans, threads, results);
    for (int64_t p = 0; p < pairs; ++p)
    {
      const transport::PairResult& r = results[static_cast<size_t>(p)];
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
  // groups of rows and columns) share the spare threads too. Worker 0 runs
  // on the calling thread: it reports progress (pairs done) and passes on
  // an abort, which every worker sees before its next pair.
  const int perPair = d >= 256 ? static_cast<int>(std::max<int64_t>(1, threads / std::max<int64_t>(1, pairs))) : 1;
  std::atomic<int64_t> done{ 0 };
  std::atomic<bool> aborted{ false };
  parallelFor(pairs, threads, [&](int worker, int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1 && !aborted; ++p)
    {
      double* plan = o.computePlans ? out.plans.data() + p * d * d : nullptr;
      const transport::PairResult r = o.method == SinkhornMethod::Sinkhorn
        ? transport::scalingPair(a.data() + p * d, b.data() + p * d, M, K, d, o, plan, perPair)
        : transport::logDomainPair(a.data() + p * d, b.data() + p * d, M, *logMatrices, d, o, plan, perPair);
      out.costs[static_cast<size_t>(p)] = r.cost;
      out.iterations[static_cast<size_t>(p)] = r.iterations;
      out.errors[static_cast<size_t>(p)] = r.error;
      if (!r.warning.empty())
      {
        std::lock_guard<std::mutex> guard(lock);
        out.warnings += (out.warnings.empty() ? "" : "\n") + std::string("pair ") + std::to_string(p) + ": " + r.warning;
      }
      const int64_t finished = ++done;
      if (worker == 0 && o.progress && !o.progress(static_cast<double>(finished) / static_cast<double>(pairs)))
        aborted = true;
    }
  });
  if (aborted)
    throw Aborted{};
  return out;
}
} // namespace topovox
