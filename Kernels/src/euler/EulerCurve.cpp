// EulerCurve.cpp - the public entry points: option checks, thresholds,
// device choice (with CPU fallback), and the prefix sum.
#include "topovox/EulerCurve.h"

#include "EulerBackends.h"
#include "NativeThresholds.h"

#include "../common/ScalarDispatch.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

namespace topovox
{
namespace
{
std::string lower(const std::string& s)
{
  std::string r;
  for (char c : s)
    r += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

Box ownedBox(const GridView& grid, const Box& requested)
{
  if (requested.count() == 0 && requested.hi[0] == 0 && requested.hi[1] == 0 &&
    requested.hi[2] == 0)
    return grid.wholeBox();
  for (int a = 0; a < 3; ++a)
    if (requested.lo[a] < 0 || requested.hi[a] > grid.dims[a] || requested.lo[a] > requested.hi[a])
      throw std::invalid_argument("the owned box lies outside the image");
  return requested;
}

void checkGrid(const GridView& grid)
{
  const std::string why = validateGrid(grid);
  if (!why.empty())
    throw std::invalid_argument(why);
}

// Called in a catch block of the GPU path: bad input and failures on an
// image that only the GPU can read propagate; anything else (no memory, a
// driver error) becomes a warning, and the caller runs the CPU path.
void fallBackToCpu(const std::exception& e, const GridView& grid, std::string& warn)
{
  if (dynamic_cast<const std::invalid_argument*>(&e) || grid.memory == MemorySpace::Device)
    throw;
  warn += (warn.empty() ? "" : "\n") + std::string("GPU path failed (") + e.what() +
    "); running on the CPU";
}

// A GridView the CPU can read: device-resident images are not.
void requireHost(const GridView& grid)
{
  if (grid.memory != MemorySpace::Host)
    throw std::invalid_argument("the CPU path needs the image in host memory");
}
}

const char* constructionName(Construction c)
{
  return c == Construction::V ? "V" : "T";
}
const char* filtrationName(Filtration f)
{
  return f == Filtration::Sublevel ? "sublevel" : "superlevel";
}
const char* thresholdModeName(ThresholdMode m)
{
  switch (m)
  {
    case ThresholdMode::Auto: return "auto";
    case ThresholdMode::Exact: return "exact";
    case ThresholdMode::Bins: return "bins";
    case ThresholdMode::List: return "list";
  }
  return "unknown";
}
bool parseConstruction(const std::string& s, Construction& out)
{
  const std::string l = lower(s);
  if (l == "v")
    out = Construction::V;
  else if (l == "t")
    out = Construction::T;
  else
    return false;
  return true;
}
bool parseFiltration(const std::string& s, Filtration& out)
{
  const std::string l = lower(s);
  if (l == "sublevel" || l == "sub")
    out = Filtration::Sublevel;
  else if (l == "superlevel" || l == "super")
    out = Filtration::Superlevel;
  else
    return false;
  return true;
}
bool parseThresholdMode(const std::string& s, ThresholdMode& out)
{
  const std::string l = lower(s);
  for (ThresholdMode m :
    { ThresholdMode::Auto, ThresholdMode::Exact, ThresholdMode::Bins, ThresholdMode::List })
    if (l == thresholdModeName(m))
    {
      out = m;
      return true;
    }
  return false;
}

ValueSummary summarizeValues(const GridView& grid, const Box& owned, int threads)
{
  checkGrid(grid);
  requireHost(grid);
  return euler::summarizeCPU(grid, ownedBox(grid, owned), threadCount(threads));
}

std::vector<double> distinctValues(const GridView& grid, const Box& owned, int threads)
{
  checkGrid(grid);
  requireHost(grid);
  std::vector<double> out;
  euler::distinctCPU(grid, ownedBox(grid, owned), threadCount(threads), out);
  return out;
}

std::vector<double> resolveThresholds(const EulerCurveOptions& options, ScalarType type,
  const ValueSummary& summary, const std::vector<double>& distinct)
{
  const bool super = options.filtration == Filtration::Superlevel;
  ThresholdMode mode = options.thresholdMode;
  if (mode == ThresholdMode::Auto)
    mode = scalarTypeIsFloating(type) ? ThresholdMode::Bins : ThresholdMode::Exact;
  std::vector<double> t;
  switch (mode)
  {
    case ThresholdMode::Exact:
      t = distinct;
      if (super)
        std::reverse(t.begin(), t.end());
      break;
    case ThresholdMode::Bins:
    {
      if (options.binCount < 1)
        throw std::invalid_argument(
          "the number of bins must be at least 1 (got " + std::to_string(options.binCount) + ")");
      if (summary.finite == 0)
        break; // nothing finite to span: no thresholds
      const int n = options.binCount;
      const double lo = summary.finiteMin, hi = summary.finiteMax;
      for (int j = 0; j < n; ++j)
      {
        // Ends are exact: the first/last threshold is the min/max itself.
        const double f = n == 1 ? 1.0 : static_cast<double>(j) / (n - 1);
        // lo (1 - f) + hi f: no overflow for huge ranges, exact at both ends.
        double v = j == n - 1 ? hi : lo * (1.0 - f) + hi * f;
        // Rounding must not break monotonicity or leave [lo, hi].
        v = std::min(hi, std::max(v, t.empty() ? lo : t.back()));
        t.push_back(v);
      }
      t.erase(std::unique(t.begin(), t.end()), t.end()); // a constant image: one
      if (super)
        std::reverse(t.begin(), t.end());
      break;
    }
    case ThresholdMode::List:
      t = options.thresholds;
      if (t.empty())
        throw std::invalid_argument("the threshold list is empty");
      for (size_t i = 0; i < t.size(); ++i)
      {
        if (std::isnan(t[i]))
          throw std::invalid_argument("a threshold is NaN");
        if (i > 0 && (super ? !(t[i] < t[i - 1]) : !(t[i] > t[i - 1])))
          throw std::invalid_argument(std::string("the thresholds must be strictly ") +
            (super ? "decreasing for a superlevel" : "increasing for a sublevel") +
            " filtration (entry " + std::to_string(i) + ")");
      }
      break;
    case ThresholdMode::Auto: break;
  }
  return t;
}

namespace
{
// eulerHistogram, optionally with the thresholds already in the image's type
// (`native`, raw bytes in ascending order: Exact mode), which doubles could
// round for 64-bit integers.
EulerHistogram histogramImpl(const GridView& grid, const EulerCurveOptions& options,
  const std::vector<double>& thresholds, const std::vector<unsigned char>* native,
  Device* usedDevice, std::string* warnings)
{
  checkGrid(grid);
  const Box owned = ownedBox(grid, options.owned);
  std::string warn;
  Device device = resolveDevice(options.device, &warn);
  if (grid.memory == MemorySpace::Device && device != Device::GPU)
    throw std::invalid_argument("the image is in GPU memory but the GPU cannot be used: " + warn);

  euler::HistogramRequest rq;
  rq.grid = grid;
  rq.owned = owned;
  rq.construction = options.construction;
  rq.filtration = options.filtration;
  rq.threads = threadCount(options.threads);
  rq.progress = options.progress;
  std::vector<int64_t> hist;

  dispatchScalarType(grid.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const bool super = options.filtration == Filtration::Superlevel;
    euler::NativeThresholds<T> converted;
    if (native && !native->empty())
    {
      const T* first = reinterpret_cast<const T*>(native->data());
      converted.values.assign(first, first + native->size() / sizeof(T));
      if (super)
        std::reverse(converted.values.begin(), converted.values.end());
    }
    else
      converted = euler::toNative<T>(thresholds, super);
    rq.thresholds = converted.values.data();
    rq.count = static_cast<int>(converted.values.size());
    rq.skipped = converted.skipped;
#ifdef TOPOVOX_WITH_CUDA
    if (device == Device::GPU)
    {
      try
      {
        euler::histogramGPU(rq, hist);
        return;
      }
      catch (const std::exception& e)
      {
        fallBackToCpu(e, grid, warn);
      }
    }
#endif
    device = Device::CPU;
    euler::histogramCPU(rq, hist);
  });

  EulerHistogram out;
  out.thresholds = thresholds;
  out.cells.resize(thresholds.size());
  for (size_t j = 0; j < thresholds.size(); ++j)
    for (int k = 0; k < 4; ++k)
      out.cells[j][k] = hist[j * 4 + k];
  if (usedDevice)
    *usedDevice = device;
  if (warnings && !warn.empty())
    *warnings += (warnings->empty() ? "" : "\n") + warn;
  return out;
}

} // namespace

EulerHistogram eulerHistogram(const GridView& grid, const EulerCurveOptions& options,
  const std::vector<double>& thresholds, Device* usedDevice, std::string* warnings)
{
  return histogramImpl(grid, options, thresholds, nullptr, usedDevice, warnings);
}

EulerCurve accumulateHistogram(const EulerHistogram& h, int dimension)
{
  EulerCurve c;
  c.dimension = dimension;
  c.thresholds = h.thresholds;
  c.cells.resize(h.cells.size());
  c.euler.resize(h.cells.size());
  std::array<int64_t, 4> run{ 0, 0, 0, 0 };
  for (size_t j = 0; j < h.cells.size(); ++j)
  {
    for (int k = 0; k < 4; ++k)
      run[k] += h.cells[j][k];
    c.cells[j] = run;
    c.euler[j] = run[0] - run[1] + run[2] - run[3];
  }
  return c;
}

EulerCurve computeEulerCurve(const GridView& grid, const EulerCurveOptions& options)
{
  checkGrid(grid);
  const Box owned = ownedBox(grid, options.owned);
  std::string warn;
  [[maybe_unused]] const Device device = resolveDevice(options.device, &warn);
  const int threads = threadCount(options.threads);
  ThresholdMode mode = options.thresholdMode;
  if (mode == ThresholdMode::Auto)
    mode = scalarTypeIsFloating(grid.type) ? ThresholdMode::Bins : ThresholdMode::Exact;
  EulerCurveOptions resolved = options;
  resolved.thresholdMode = mode;

  // Each step is a pass over the image; only what the mode needs is done.
  auto run = [&](const GridView& g, Device d, std::string& notes) {
    ValueSummary summary;
    std::vector<double> distinct;
    std::vector<unsigned char> native; // Exact mode: the values in their own type
    if (d == Device::CPU)
    {
      requireHost(g);
      if (mode == ThresholdMode::Bins)
        summary = euler::summarizeCPU(g, owned, threads);
      else if (mode == ThresholdMode::Exact)
        euler::distinctCPU(g, owned, threads, distinct, &native);
    }
#ifdef TOPOVOX_WITH_CUDA
    else
    {
      if (mode == ThresholdMode::Bins)
        summary = euler::summarizeGPU(g, owned);
      else if (mode == ThresholdMode::Exact)
        euler::distinctGPU(g, owned, distinct, &native);
    }
#endif
    resolved.device = d;
    const std::vector<double> thresholds = resolveThresholds(resolved, g.type, summary, distinct);
    Device used = Device::CPU;
    const EulerHistogram h = histogramImpl(
      g, resolved, thresholds, mode == ThresholdMode::Exact ? &native : nullptr, &used, &notes);
    EulerCurve c = accumulateHistogram(h, g.dimension());
    c.device = used;
    return c;
  };

#ifdef TOPOVOX_WITH_CUDA
  if (device == Device::GPU)
  {
    try
    {
      // A host image goes to the GPU once, for every pass.
      GridView onDevice = grid;
      std::shared_ptr<void> upload;
      if (grid.memory == MemorySpace::Host)
        upload = euler::uploadGrid(grid, onDevice);
      EulerCurve c = run(onDevice, Device::GPU, warn);
      c.warnings = warn;
      return c;
    }
    catch (const std::exception& e)
    {
      fallBackToCpu(e, grid, warn);
    }
  }
#endif
  EulerCurve c = run(grid, Device::CPU, warn);
  c.warnings = warn;
  return c;
}
}
