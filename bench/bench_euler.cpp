// bench_euler.cpp - timing of the Euler characteristic curve (V construction,
// sublevel filtration) on the GPU and the CPU, on one image per input.
//
// For each input and each threshold mode (list, bins, and exact for integer
// types) it measures, through the public API (topovox::computeEulerCurve):
//   gpu   the image already in GPU memory (GridView with MemorySpace::Device):
//         median over several calls after warm-up calls; each call is
//         synchronous (it returns the curve on the host), timed with
//         steady_clock, followed by cudaDeviceSynchronize;
//   e2e   the image in ordinary (pageable) host memory, device GPU: the call
//         allocates, copies to the GPU, computes and frees;
//   cpu   the image in host memory, device CPU, all threads
//         (topovox::defaultThreadCount(), TOPOVOX_NUM_THREADS overrides);
//   copy  a cudaMemcpy device-to-device of as many bytes as the image, timed
//         with cudaEvents; its bandwidth is counted as bytes read / time, the
//         same accounting as the curve's (image bytes / gpu time).
// Every GPU curve is compared with the CPU curve at the same thresholds
// (thresholds, cell counts per dimension and Euler numbers, bit for bit); the
// CPU curve is computed even when its time is not (large inputs).
//
// Input: --input file.npy (C or Fortran order, 1 to 3 axes, native
// little-endian), repeatable; or a generated image (--shape, --dtype, --gen).
// Output: a readable table on stdout, progress on stderr, and with --json FILE
// one JSON object per line (appended) for bench/run_bench.py.
#include "topovox/Device.h"
#include "topovox/EulerCurve.h"
#include "topovox/Grid.h"

#ifdef BENCH_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace topovox;
using Clock = std::chrono::steady_clock;

namespace
{
// ---------------------------------------------------------------- utilities

void progress(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void progress(const char* fmt, ...)
{
  static const Clock::time_point start = Clock::now();
  const double s = std::chrono::duration<double>(Clock::now() - start).count();
  std::fprintf(stderr, "[bench_euler %7.1fs] ", s);
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

double msSince(Clock::time_point t0)
{
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v)
{
  if (v.empty())
    return std::nan("");
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string jsonEscape(const std::string& s)
{
  std::string r;
  for (char c : s)
  {
    if (c == '"' || c == '\\')
      r += '\\', r += c;
    else if (static_cast<unsigned char>(c) < 0x20)
    {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      r += buf;
    }
    else
      r += c;
  }
  return r;
}

std::string jsonNumber(double v)
{
  if (!std::isfinite(v))
    return "null";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

#ifdef BENCH_WITH_CUDA
void cudaCheck(cudaError_t e, const char* what)
{
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
#endif

// An aligned host buffer (new[] of a 64-byte type).
struct HostBuffer
{
  struct alignas(64) Line
  {
    unsigned char b[64];
  };
  std::unique_ptr<Line[]> lines;
  size_t bytes = 0;
  void allocate(size_t n)
  {
    bytes = n;
    lines.reset(new Line[(n + 63) / 64 + 1]);
  }
  void* data() { return lines.get(); }
  const void* data() const { return lines.get(); }
};

struct Image
{
  std::string name;
  ScalarType type = ScalarType::Float32;
  int64_t dims[3] = { 1, 1, 1 }; // x fastest
  HostBuffer buffer;
  size_t bytes() const { return buffer.bytes; }
  int64_t voxels() const { return dims[0] * dims[1] * dims[2]; }
  GridView view() const
  {
    return GridView::contiguous(buffer.data(), type, dims[0], dims[1], dims[2]);
  }
  std::string shapeString() const
  {
    // As numpy writes it: slowest axis first, only the axes that exist.
    std::string s;
    int d = dims[2] > 1 ? 3 : dims[1] > 1 ? 2 : 1;
    for (int a = d - 1; a >= 0; --a)
      s += std::to_string(dims[a]) + (a ? "x" : "");
    return s;
  }
};

// ---------------------------------------------------------------- .npy input

Image loadNpy(const std::string& path)
{
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f)
    throw std::runtime_error("cannot open " + path);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> hold(f, std::fclose);
  unsigned char magic[8];
  if (std::fread(magic, 1, 8, f) != 8 || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    throw std::runtime_error(path + ": not a .npy file");
  size_t headerLen = 0;
  if (magic[6] == 1)
  {
    unsigned char l[2];
    if (std::fread(l, 1, 2, f) != 2)
      throw std::runtime_error(path + ": truncated header");
    headerLen = l[0] | (size_t(l[1]) << 8);
  }
  else
  {
    unsigned char l[4];
    if (std::fread(l, 1, 4, f) != 4)
      throw std::runtime_error(path + ": truncated header");
    headerLen = l[0] | (size_t(l[1]) << 8) | (size_t(l[2]) << 16) | (size_t(l[3]) << 24);
  }
  std::string header(headerLen, '\0');
  if (std::fread(&header[0], 1, headerLen, f) != headerLen)
    throw std::runtime_error(path + ": truncated header");

  auto valueOf = [&](const std::string& key) {
    const size_t k = header.find("'" + key + "'");
    if (k == std::string::npos)
      throw std::runtime_error(path + ": header lacks " + key);
    size_t p = header.find(':', k) + 1;
    while (p < header.size() && header[p] == ' ')
      ++p;
    return p;
  };
  size_t p = valueOf("descr");
  const char quote = header[p];
  const size_t q = header.find(quote, p + 1);
  const std::string descr = header.substr(p + 1, q - p - 1);
  p = valueOf("fortran_order");
  const bool fortran = header.compare(p, 4, "True") == 0;
  p = valueOf("shape");
  const size_t close = header.find(')', p);
  std::vector<int64_t> shape;
  {
    std::string s = header.substr(p + 1, close - p - 1);
    std::stringstream ss(s);
    std::string tok;
    while (std::getline(ss, tok, ','))
    {
      if (tok.find_first_not_of(" ") == std::string::npos)
        continue;
      shape.push_back(std::stoll(tok));
    }
  }
  if (!descr.empty() && descr[0] == '>' && descr != ">u1" && descr != ">i1")
    throw std::runtime_error(path + ": big-endian data (" + descr + ") is not supported");
  Image img;
  if (!parseScalarType(descr, img.type))
    throw std::runtime_error(path + ": unsupported dtype " + descr);
  if (shape.empty() || shape.size() > 3)
    throw std::runtime_error(path + ": need 1 to 3 axes");
  // C order: the last numpy axis varies fastest and is our x.
  for (size_t i = 0; i < shape.size(); ++i)
    img.dims[i] = fortran ? shape[i] : shape[shape.size() - 1 - i];
  const size_t bytes = size_t(img.voxels()) * scalarTypeSize(img.type);
  img.buffer.allocate(bytes);
  if (std::fread(img.buffer.data(), 1, bytes, f) != bytes)
    throw std::runtime_error(path + ": truncated data");
  std::string base = path.substr(path.find_last_of('/') + 1);
  if (base.size() > 4 && base.compare(base.size() - 4, 4, ".npy") == 0)
    base.resize(base.size() - 4);
  img.name = base;
  return img;
}

// ---------------------------------------------------------------- generated input

// Uniform noise in [0, 1), or that noise smoothed by two passes of a 5-wide
// box filter along each axis (about a Gaussian of sigma 2 voxels), then
// rescaled to [0, 1] exactly (min -> 0, max -> 1). uint8 is round(255 v).
Image generate(const std::vector<int64_t>& shapeSlowFirst, ScalarType type, const std::string& gen,
  uint64_t seed, int threads)
{
  Image img;
  img.type = type;
  for (size_t i = 0; i < shapeSlowFirst.size(); ++i)
    img.dims[i] = shapeSlowFirst[shapeSlowFirst.size() - 1 - i];
  const int64_t n = img.voxels();
  std::vector<float> v(static_cast<size_t>(n));
  const int64_t chunk = 1 << 20;
  const int64_t chunks = (n + chunk - 1) / chunk;
  auto parallel = [&](int64_t count, const std::function<void(int64_t, int64_t)>& body) {
    std::vector<std::thread> pool;
    const int w = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, count)));
    for (int t = 0; t < w; ++t)
      pool.emplace_back([&, t] { body(count * t / w, count * (t + 1) / w); });
    for (auto& th : pool)
      th.join();
  };
  parallel(chunks, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
    {
      std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(c));
      std::uniform_real_distribution<float> u(0.0f, 1.0f);
      for (int64_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i)
        v[i] = u(rng);
    }
  });
  if (gen == "smooth")
  {
    const int64_t stride[3] = { 1, img.dims[0], img.dims[0] * img.dims[1] };
    for (int axis = 0; axis < 3; ++axis)
    {
      const int64_t len = img.dims[axis];
      if (len < 2)
        continue;
      const int64_t lines = n / len;
      parallel(lines, [&](int64_t l0, int64_t l1) {
        std::vector<float> a(len), b(len);
        for (int64_t l = l0; l < l1; ++l)
        {
          // Line l: its first voxel has index 0 along `axis`.
          int64_t rest = l, base = 0;
          for (int ax = 0; ax < 3; ++ax)
          {
            if (ax == axis)
              continue;
            base += (rest % img.dims[ax]) * stride[ax];
            rest /= img.dims[ax];
          }
          for (int64_t i = 0; i < len; ++i)
            a[i] = v[base + i * stride[axis]];
          for (int pass = 0; pass < 2; ++pass)
          {
            for (int64_t i = 0; i < len; ++i)
            {
              float s = 0;
              int cnt = 0;
              for (int64_t k = std::max<int64_t>(0, i - 2); k <= std::min(len - 1, i + 2); ++k)
                s += a[k], ++cnt;
              b[i] = s / cnt;
            }
            a.swap(b);
          }
          for (int64_t i = 0; i < len; ++i)
            v[base + i * stride[axis]] = a[i];
        }
      });
    }
  }
  else if (gen != "uniform")
    throw std::runtime_error("--gen must be uniform or smooth");
  const auto mm = std::minmax_element(v.begin(), v.end());
  const float lo = *mm.first, hi = *mm.second;
  const float scale = hi > lo ? 1.0f / (hi - lo) : 0.0f;
  img.buffer.allocate(size_t(n) * scalarTypeSize(type));
  if (type == ScalarType::UInt8)
  {
    auto* out = static_cast<uint8_t*>(img.buffer.data());
    for (int64_t i = 0; i < n; ++i)
      out[i] = static_cast<uint8_t>(std::lround(std::min(1.0f, (v[i] - lo) * scale) * 255.0f));
  }
  else if (type == ScalarType::Float32)
  {
    auto* out = static_cast<float*>(img.buffer.data());
    for (int64_t i = 0; i < n; ++i)
      out[i] = std::min(1.0f, std::max(0.0f, (v[i] - lo) * scale));
  }
  else
    throw std::runtime_error("generated images are uint8 or float32");
  std::string shape;
  for (size_t i = 0; i < shapeSlowFirst.size(); ++i)
    shape += (i ? "x" : "") + std::to_string(shapeSlowFirst[i]);
  img.name = gen + "_" + shape + "_" + scalarTypeName(type);
  return img;
}

// ---------------------------------------------------------------- thresholds

// "uniform": t_j = min + j (max - min) / (N - 1) over the image's finite range.
// "pyect": for floating point data in [0, 1], t_j = the largest value v of the
// image's type with fl(v * (N - 1)) <= j: exactly the sublevel sets that
// pyect's Image_ECF (bin = ceil(v * (N - 1)) in float32) puts in bin <= j, and
// within one ulp of j / (N - 1). For integer data "pyect" is "uniform".
template <typename F>
double pyectThreshold(int j, int n)
{
  const F m = static_cast<F>(n - 1), jj = static_cast<F>(j);
  volatile F v = static_cast<F>(static_cast<double>(j) / (n - 1));
  auto product = [&](F x) {
    volatile F p = x * m; // one rounding, in F (no contraction, no excess precision)
    return static_cast<F>(p);
  };
  while (product(v) > jj)
    v = std::nextafter(static_cast<F>(v), -std::numeric_limits<F>::infinity());
  while (true)
  {
    const F up = std::nextafter(static_cast<F>(v), std::numeric_limits<F>::infinity());
    if (product(up) > jj)
      break;
    v = up;
  }
  return static_cast<double>(v);
}

std::vector<double> listThresholds(const Image& img, const std::string& kind, int n, int threads)
{
  std::vector<double> t;
  if (kind == "pyect" && scalarTypeIsFloating(img.type))
  {
    const ValueSummary s = summarizeValues(img.view(), Box(), threads);
    if (s.min < 0 || s.max > 1)
      throw std::runtime_error(img.name + ": --list pyect needs values in [0, 1]");
    for (int j = 0; j < n; ++j)
      t.push_back(img.type == ScalarType::Float32 ? pyectThreshold<float>(j, n)
                                                  : pyectThreshold<double>(j, n));
    return t;
  }
  if (kind != "uniform" && kind != "pyect")
    throw std::runtime_error("--list must be uniform or pyect");
  const ValueSummary s = summarizeValues(img.view(), Box(), threads);
  for (int j = 0; j < n; ++j)
  {
    const double f = n == 1 ? 1.0 : static_cast<double>(j) / (n - 1);
    double v = j == n - 1 ? s.finiteMax : s.finiteMin * (1.0 - f) + s.finiteMax * f;
    if (!t.empty() && !(v > t.back()))
      continue; // a narrow integer range: keep the list strictly increasing
    t.push_back(v);
  }
  return t;
}

// ---------------------------------------------------------------- settings

struct Settings
{
  std::vector<std::string> inputs;
  std::vector<int64_t> shape;
  std::string dtype = "float32";
  std::string gen = "smooth";
  uint64_t seed = 1;
  int thresholds = 256;
  std::string list = "pyect";
  std::vector<std::string> modes = { "list", "bins", "exact" };
  bool exactFloat = false;
  int gpuReps = 0;            // 0: automatic
  double gpuSeconds = 0.5;    // automatic: repeat until this much time...
  int gpuMaxReps = 50;        // ... or this many calls
  int gpuMinReps = 5;
  int e2eReps = 3;
  int cpuReps = 0;            // 0: 3 when one call takes < 2 s, else 1
  int64_t cpuTimeAllModesMaxVoxels = int64_t(1) << 28; // above: CPU time for list only
  int64_t cpuMaxVoxels = std::numeric_limits<int64_t>::max(); // above: no CPU at all
  bool check = true;
  bool checkUntimed = true; // CPU curves for the check where the CPU is not timed
  bool gpu = true;
  std::string json;
  std::string label;
  int threads = 0;
};

void usage()
{
  std::printf(
    "bench_euler: time the Euler characteristic curve (V, sublevel) on GPU and CPU\n"
    "  --input FILE.npy         image to time (repeatable); or generate one:\n"
    "  --shape NZxNYxNX         numpy order, e.g. 256x256x256 or 1024x1024\n"
    "  --dtype uint8|float32    (generated image; default float32)\n"
    "  --gen smooth|uniform     smoothed noise (default) or uniform noise, in [0,1]\n"
    "  --seed S                 (default 1)\n"
    "  --thresholds N           number of thresholds for list and bins (default 256)\n"
    "  --list pyect|uniform     list thresholds (default pyect; see the source)\n"
    "  --modes list,bins,exact  modes to time (exact: integer types only unless --exact-float)\n"
    "  --gpu-reps N             timed GPU calls (default: until 0.5 s, 5..50 calls)\n"
    "  --e2e-reps N             timed end-to-end calls (default 3)\n"
    "  --cpu-reps N             timed CPU calls (default 3, or 1 when a call takes > 2 s)\n"
    "  --cpu-all-modes-max-voxels V  above V voxels time the CPU in list mode only (default 2^28)\n"
    "  --cpu-max-voxels V       above V voxels skip the CPU entirely, checks included\n"
    "  --no-check               do not compute CPU curves for the checks\n"
    "  --no-check-untimed       ... except those of the timed CPU runs\n"
    "  --no-gpu                 CPU only\n"
    "  --threads N              CPU threads (default: all)\n"
    "  --json FILE              append one JSON object per line\n"
    "  --label TEXT             name of the input in the output\n");
}

Settings parse(int argc, char** argv)
{
  Settings s;
  auto need = [&](int& i) -> std::string {
    if (i + 1 >= argc)
      throw std::runtime_error(std::string(argv[i]) + " needs a value");
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i)
  {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h")
    {
      usage();
      std::exit(0);
    }
    else if (a == "--input")
      s.inputs.push_back(need(i));
    else if (a == "--shape")
    {
      s.shape.clear();
      std::stringstream ss(need(i));
      std::string tok;
      while (std::getline(ss, tok, 'x'))
        s.shape.push_back(std::stoll(tok));
    }
    else if (a == "--dtype")
      s.dtype = need(i);
    else if (a == "--gen")
      s.gen = need(i);
    else if (a == "--seed")
      s.seed = std::stoull(need(i));
    else if (a == "--thresholds")
      s.thresholds = std::stoi(need(i));
    else if (a == "--list")
      s.list = need(i);
    else if (a == "--modes")
    {
      s.modes.clear();
      std::stringstream ss(need(i));
      std::string tok;
      while (std::getline(ss, tok, ','))
        s.modes.push_back(tok);
    }
    else if (a == "--exact-float")
      s.exactFloat = true;
    else if (a == "--gpu-reps")
      s.gpuReps = std::stoi(need(i));
    else if (a == "--e2e-reps")
      s.e2eReps = std::stoi(need(i));
    else if (a == "--cpu-reps")
      s.cpuReps = std::stoi(need(i));
    else if (a == "--cpu-all-modes-max-voxels")
      s.cpuTimeAllModesMaxVoxels = std::stoll(need(i));
    else if (a == "--cpu-max-voxels")
      s.cpuMaxVoxels = std::stoll(need(i));
    else if (a == "--no-check")
      s.check = false;
    else if (a == "--no-check-untimed")
      s.checkUntimed = false;
    else if (a == "--no-gpu")
      s.gpu = false;
    else if (a == "--threads")
      s.threads = std::stoi(need(i));
    else if (a == "--json")
      s.json = need(i);
    else if (a == "--label")
      s.label = need(i);
    else
      throw std::runtime_error("unknown argument " + a + " (see --help)");
  }
  if (s.inputs.empty() && s.shape.empty())
    throw std::runtime_error("give --input FILE.npy or --shape (see --help)");
  for (const auto& m : s.modes)
    if (m != "list" && m != "bins" && m != "exact")
      throw std::runtime_error("unknown mode " + m);
  return s;
}

// ---------------------------------------------------------------- results

struct Row
{
  std::string mode;
  int thresholdCount = 0;
  double gpuMs = NAN, gpuMinMs = NAN;
  int gpuReps = 0;
  double overheadMs = NAN; // the same call on a 4^d image: fixed cost per call
  double e2eMs = NAN;
  int e2eReps = 0;
  double cpuMs = NAN;
  int cpuReps = 0;
  std::string check = "skipped"; // identical | MISMATCH: ... | skipped
  std::string note;
  EulerCurve curve; // GPU curve (CPU curve when there is no GPU)
};

bool sameCurve(const EulerCurve& a, const EulerCurve& b, std::string* why)
{
  if (a.thresholds.size() != b.thresholds.size())
  {
    *why = "threshold counts " + std::to_string(a.thresholds.size()) + " vs " +
      std::to_string(b.thresholds.size());
    return false;
  }
  for (size_t j = 0; j < a.thresholds.size(); ++j)
  {
    if (a.thresholds[j] != b.thresholds[j])
    {
      *why = "threshold " + std::to_string(j) + " differs";
      return false;
    }
    if (a.cells[j] != b.cells[j] || a.euler[j] != b.euler[j])
    {
      *why = "curve differs first at threshold " + std::to_string(j) + " (euler " +
        std::to_string(a.euler[j]) + " vs " + std::to_string(b.euler[j]) + ")";
      return false;
    }
  }
  if (a.dimension != b.dimension)
  {
    *why = "dimension differs";
    return false;
  }
  return true;
}

ThresholdMode modeOf(const std::string& m)
{
  ThresholdMode out = ThresholdMode::List;
  parseThresholdMode(m, out);
  return out;
}

// ---------------------------------------------------------------- one input

struct CopyTiming
{
  double ms = NAN;
  int reps = 0;
};

void writeJson(std::ofstream& out, const Settings& st, const Image& img, const Row& r,
  const CopyTiming& copy, int threads, const std::string& gpuName)
{
  if (!out)
    return;
  const double bytes = static_cast<double>(img.bytes());
  std::ostringstream o;
  o << "{\"type\":\"result\",\"input\":\"" << jsonEscape(img.name) << "\",\"shape\":\""
    << img.shapeString() << "\",\"dims_xyz\":[" << img.dims[0] << "," << img.dims[1] << ","
    << img.dims[2] << "],\"dimension\":" << img.view().dimension() << ",\"dtype\":\""
    << scalarTypeName(img.type) << "\",\"voxels\":" << img.voxels()
    << ",\"bytes\":" << img.bytes() << ",\"mode\":\"" << r.mode
    << "\",\"list_kind\":\"" << (r.mode == "list" ? st.list : "") << "\",\"thresholds_count\":"
    << r.thresholdCount << ",\"gpu_ms\":" << jsonNumber(r.gpuMs)
    << ",\"gpu_ms_min\":" << jsonNumber(r.gpuMinMs) << ",\"gpu_reps\":" << r.gpuReps
    << ",\"gpu_call_overhead_ms\":" << jsonNumber(r.overheadMs)
    << ",\"e2e_ms\":" << jsonNumber(r.e2eMs) << ",\"e2e_reps\":" << r.e2eReps
    << ",\"cpu_ms\":" << jsonNumber(r.cpuMs) << ",\"cpu_reps\":" << r.cpuReps
    << ",\"cpu_threads\":" << threads << ",\"copy_ms\":" << jsonNumber(copy.ms)
    << ",\"copy_reps\":" << copy.reps
    << ",\"gpu_read_GBps\":" << jsonNumber(bytes / (r.gpuMs * 1e6))
    << ",\"copy_read_GBps\":" << jsonNumber(bytes / (copy.ms * 1e6))
    << ",\"fraction_of_copy\":" << jsonNumber(copy.ms / r.gpuMs) << ",\"check\":\""
    << jsonEscape(r.check) << "\",\"note\":\"" << jsonEscape(r.note) << "\",\"device\":\""
    << jsonEscape(gpuName) << "\",\"curve_device\":\"" << deviceName(r.curve.device)
    << "\",\"thresholds\":[";
  for (size_t j = 0; j < r.curve.thresholds.size(); ++j)
    o << (j ? "," : "") << jsonNumber(r.curve.thresholds[j]);
  o << "],\"euler\":[";
  for (size_t j = 0; j < r.curve.euler.size(); ++j)
    o << (j ? "," : "") << r.curve.euler[j];
  o << "]}\n";
  out << o.str();
  out.flush();
}

void runInput(const Settings& st, Image& img, bool haveGpu, const std::string& gpuName,
  std::ofstream& json, std::vector<std::string>& tableLines)
{
  const int threads = st.threads > 0 ? st.threads : defaultThreadCount();
  const GridView host = img.view();
  const size_t bytes = img.bytes();
  progress("%s: %s %s, %.1f MiB", img.name.c_str(), img.shapeString().c_str(),
    scalarTypeName(img.type), bytes / 1048576.0);

  EulerCurveOptions base;
  base.construction = Construction::V;
  base.filtration = Filtration::Sublevel;
  base.binCount = st.thresholds;
  base.threads = threads;
  base.thresholds = listThresholds(img, st.list, st.thresholds, threads);

  // CPU curves by threshold list, so that one CPU pass checks every mode
  // that resolves to the same thresholds.
  std::map<std::vector<double>, EulerCurve> cpuCurves;
  const bool cpuAllowed = img.voxels() <= st.cpuMaxVoxels;

  CopyTiming copy;
  void* dData = nullptr;
  (void)dData;
  GridView dev;
#ifdef BENCH_WITH_CUDA
  void* dCopy = nullptr;
  if (haveGpu)
  {
    cudaCheck(cudaMalloc(&dData, bytes), "cudaMalloc image");
    cudaCheck(cudaMemcpy(dData, host.data, bytes, cudaMemcpyHostToDevice), "upload image");
    dev = GridView::contiguous(dData, img.type, img.dims[0], img.dims[1], img.dims[2],
      MemorySpace::Device);
    // The copy reference: same bytes, device to device, median over calls.
    cudaCheck(cudaMalloc(&dCopy, bytes), "cudaMalloc copy");
    cudaEvent_t e0, e1;
    cudaCheck(cudaEventCreate(&e0), "event");
    cudaCheck(cudaEventCreate(&e1), "event");
    std::vector<double> times;
    const Clock::time_point t0 = Clock::now();
    for (int i = 0; i < 3; ++i) // warm-up
      cudaCheck(cudaMemcpy(dCopy, dData, bytes, cudaMemcpyDeviceToDevice), "copy warm-up");
    cudaCheck(cudaDeviceSynchronize(), "sync");
    while (times.size() < 10 || (msSince(t0) < 300 && times.size() < 200))
    {
      cudaCheck(cudaEventRecord(e0), "event");
      cudaCheck(cudaMemcpy(dCopy, dData, bytes, cudaMemcpyDeviceToDevice), "copy");
      cudaCheck(cudaEventRecord(e1), "event");
      cudaCheck(cudaEventSynchronize(e1), "event sync");
      float ms = 0;
      cudaCheck(cudaEventElapsedTime(&ms, e0, e1), "event time");
      times.push_back(ms);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(dCopy);
    copy.ms = median(times);
    copy.reps = static_cast<int>(times.size());
    progress("  copy D2D: %.3f ms median of %d -> %.1f GB/s read", copy.ms, copy.reps,
      bytes / (copy.ms * 1e6));
  }
#endif

  for (const std::string& modeName : st.modes)
  {
    const ThresholdMode mode = modeOf(modeName);
    if (mode == ThresholdMode::Exact && scalarTypeIsFloating(img.type) && !st.exactFloat)
      continue;
    Row r;
    r.mode = modeName;
    EulerCurveOptions opt = base;
    opt.thresholdMode = mode;

    std::string gpuError;
    if (haveGpu)
    {
      try
      {
        opt.device = Device::GPU;
        auto call = [&](const GridView& g) {
          EulerCurve c = computeEulerCurve(g, opt);
#ifdef BENCH_WITH_CUDA
          cudaCheck(cudaDeviceSynchronize(), "sync");
#endif
          if (c.device != Device::GPU)
            throw std::runtime_error("the GPU call ran on the CPU: " + c.warnings);
          return c;
        };
        // Warm-up: module loading, first-touch allocations.
        Clock::time_point t0 = Clock::now();
        r.curve = call(dev);
        const double firstMs = msSince(t0);
        call(dev);
        std::vector<double> times;
        const Clock::time_point start = Clock::now();
        while (true)
        {
          const int n = static_cast<int>(times.size());
          if (st.gpuReps > 0 ? n >= st.gpuReps
                             : (n >= st.gpuMaxReps ||
                                 (n >= st.gpuMinReps && msSince(start) > 1000 * st.gpuSeconds)))
            break;
          t0 = Clock::now();
          EulerCurve c = call(dev);
          times.push_back(msSince(t0));
          std::string why;
          if (!sameCurve(c, r.curve, &why))
            throw std::runtime_error("GPU curves differ between calls: " + why);
        }
        r.gpuMs = median(times);
        r.gpuMinMs = *std::min_element(times.begin(), times.end());
        r.gpuReps = static_cast<int>(times.size());
        progress("  %-5s gpu: %.3f ms median of %d (first call %.1f ms)", modeName.c_str(), r.gpuMs,
          r.gpuReps, firstMs);

        // The fixed cost of a call (allocations, small copies, launches): the
        // same call on a 4x4(x4) image of the same type, on the device.
        {
          Image tiny;
          tiny.type = img.type;
          for (int a = 0; a < 3; ++a)
            tiny.dims[a] = std::min<int64_t>(4, img.dims[a]);
          const size_t tb = size_t(tiny.voxels()) * scalarTypeSize(img.type);
          void* dTiny = nullptr;
          (void)tb;
#ifdef BENCH_WITH_CUDA
          cudaCheck(cudaMalloc(&dTiny, tb), "cudaMalloc tiny");
          cudaCheck(cudaMemcpy(dTiny, host.data, tb, cudaMemcpyHostToDevice), "upload tiny");
#endif
          const GridView tinyDev = GridView::contiguous(dTiny, img.type, tiny.dims[0], tiny.dims[1],
            tiny.dims[2], MemorySpace::Device);
          std::vector<double> ot;
          for (int i = 0; i < 23; ++i)
          {
            t0 = Clock::now();
            call(tinyDev);
            if (i >= 3)
              ot.push_back(msSince(t0));
          }
          r.overheadMs = median(ot);
#ifdef BENCH_WITH_CUDA
          cudaFree(dTiny);
#endif
          progress("  %-5s gpu call overhead (4^%d image): %.3f ms", modeName.c_str(),
            img.view().dimension(), r.overheadMs);
        }

        // End to end from host memory.
        call(host); // warm-up
        times.clear();
        for (int i = 0; i < st.e2eReps; ++i)
        {
          t0 = Clock::now();
          EulerCurve c = call(host);
          times.push_back(msSince(t0));
          std::string why;
          if (!sameCurve(c, r.curve, &why))
            throw std::runtime_error("GPU curves differ between host and device input: " + why);
        }
        r.e2eMs = median(times);
        r.e2eReps = static_cast<int>(times.size());
        progress("  %-5s e2e: %.3f ms median of %d", modeName.c_str(), r.e2eMs, r.e2eReps);
      }
      catch (const std::exception& e)
      {
        gpuError = std::string("GPU ERROR: ") + e.what();
        progress("  %-5s %s", modeName.c_str(), gpuError.c_str());
      }
    }

    // CPU: timed (all modes up to a size, list mode always), else only the
    // curve for the check, at the same thresholds.
    const bool timeCpu = cpuAllowed &&
      (mode == ThresholdMode::List || img.voxels() <= st.cpuTimeAllModesMaxVoxels || !haveGpu);
    EulerCurve cpuCurve;
    bool haveCpuCurve = false;
    if (timeCpu)
    {
      opt.device = Device::CPU;
      std::vector<double> times;
      int reps = st.cpuReps;
      for (int i = 0; reps == 0 || i < reps; ++i)
      {
        const Clock::time_point t0 = Clock::now();
        EulerCurve c = computeEulerCurve(host, opt);
        times.push_back(msSince(t0));
        if (reps == 0)
          reps = times.back() < 2000 ? 3 : 1;
        if (!haveCpuCurve)
          cpuCurve = c, haveCpuCurve = true;
      }
      r.cpuMs = median(times);
      r.cpuReps = static_cast<int>(times.size());
      cpuCurves[cpuCurve.thresholds] = cpuCurve;
      progress("  %-5s cpu: %.1f ms median of %d (%d threads)", modeName.c_str(), r.cpuMs,
        r.cpuReps, threads);
    }
    else if (cpuAllowed && st.check && st.checkUntimed && haveGpu)
    {
      // The CPU's own thresholds for this mode (its own min/max or distinct
      // values), then the CPU histogram unless an earlier mode had them.
      opt.device = Device::CPU;
      const Clock::time_point t0 = Clock::now();
      ValueSummary summary;
      std::vector<double> distinct;
      if (mode == ThresholdMode::Bins)
        summary = summarizeValues(host, Box(), threads);
      else if (mode == ThresholdMode::Exact)
        distinct = distinctValues(host, Box(), threads);
      const std::vector<double> t = resolveThresholds(opt, img.type, summary, distinct);
      auto it = cpuCurves.find(t);
      if (it == cpuCurves.end())
      {
        const EulerHistogram h = eulerHistogram(host, opt, t);
        EulerCurve c = accumulateHistogram(h, host.dimension());
        c.device = Device::CPU;
        it = cpuCurves.emplace(t, c).first;
        progress("  %-5s cpu curve for the check (untimed): %.1f ms", modeName.c_str(),
          msSince(t0));
      }
      else
        progress("  %-5s cpu curve for the check: same thresholds as an earlier mode, reused",
          modeName.c_str());
      cpuCurve = it->second;
      haveCpuCurve = true;
      r.note = "cpu untimed (size)";
    }
    else if (haveGpu && st.check)
      r.note = cpuAllowed ? "no CPU check (--no-check-untimed)" : "no CPU run (--cpu-max-voxels)";
    if (!haveGpu)
      r.curve = cpuCurve;
    r.thresholdCount = static_cast<int>(r.curve.thresholds.size());
    if (!gpuError.empty())
      r.check = gpuError;
    else if (haveGpu && haveCpuCurve && st.check)
    {
      std::string why;
      r.check = sameCurve(r.curve, cpuCurve, &why) ? "identical" : "MISMATCH: " + why;
      progress("  %-5s GPU vs CPU: %s", modeName.c_str(), r.check.c_str());
    }
    else if (!haveGpu)
      r.check = "no gpu";

    writeJson(json, st, img, r, copy, threads, gpuName);
    char line[512];
    const double gbps = bytes / (r.gpuMs * 1e6);
    std::snprintf(line, sizeof line,
      "%-28s %-9s %-7s %-5s %5d %10.3f %9.3f %10.2f %10.1f %8.1f %8.1f %6.1f%%  %s%s%s",
      img.name.c_str(), img.shapeString().c_str(), scalarTypeName(img.type), modeName.c_str(),
      r.thresholdCount, r.gpuMs, r.overheadMs, r.e2eMs, r.cpuMs, gbps, bytes / (copy.ms * 1e6),
      100.0 * copy.ms / r.gpuMs, r.check.c_str(), r.note.empty() ? "" : "; ", r.note.c_str());
    tableLines.push_back(line);
  }
#ifdef BENCH_WITH_CUDA
  if (dData)
    cudaFree(dData);
#endif
}
} // namespace

int main(int argc, char** argv)
{
  try
  {
    Settings st = parse(argc, argv);
    const int threads = st.threads > 0 ? st.threads : defaultThreadCount();
    bool haveGpu = false;
    std::string gpuName = "none";
#ifdef BENCH_WITH_CUDA
    haveGpu = st.gpu && gpuAvailable();
    gpuName = gpuDescription();
    if (haveGpu)
      cudaCheck(cudaFree(nullptr), "CUDA init");
#endif
    if (!st.gpu)
      gpuName = "not used (--no-gpu)";
    progress("GPU: %s; CPU threads: %d", gpuName.c_str(), threads);
    std::ofstream json;
    if (!st.json.empty())
    {
      json.open(st.json, std::ios::app);
      if (!json)
        throw std::runtime_error("cannot write " + st.json);
      json << "{\"type\":\"machine\",\"gpu\":\"" << jsonEscape(gpuName)
           << "\",\"gpu_used\":" << (haveGpu ? "true" : "false")
           << ",\"cpu_threads\":" << threads << "}\n";
    }
    std::vector<std::string> table;
    auto runOne = [&](Image& img) {
      if (!st.label.empty())
        img.name = st.label;
      runInput(st, img, haveGpu, gpuName, json, table);
    };
    if (st.inputs.empty())
    {
      ScalarType t;
      if (!parseScalarType(st.dtype, t))
        throw std::runtime_error("unknown dtype " + st.dtype);
      progress("generating %s image", st.gen.c_str());
      Image img = generate(st.shape, t, st.gen, st.seed, threads);
      runOne(img);
    }
    for (const auto& path : st.inputs)
    {
      progress("loading %s", path.c_str());
      Image img = loadNpy(path);
      runOne(img);
    }

    std::printf(
      "\nEuler characteristic curve, V construction, sublevel; GPU: %s; CPU: %d threads\n",
      gpuName.c_str(), threads);
    std::printf("gpu = data on the device (median); ovh = the same call on a 4^d image (fixed "
                "cost per call);\n");
    std::printf("e2e = from host memory; GB/s = image bytes / gpu time;\n");
    std::printf("copy = cudaMemcpy D2D of the same bytes (bytes read / time); %%copy = GB/s over "
                "copy GB/s\n");
    std::printf("%-28s %-9s %-7s %-5s %5s %10s %9s %10s %10s %8s %8s %7s  %s\n", "input", "shape",
      "dtype", "mode", "thr", "gpu ms", "ovh ms", "e2e ms", "cpu ms", "GB/s", "copyGB/s", "%copy",
      "GPU==CPU");
    for (const auto& l : table)
      std::printf("%s\n", l.c_str());
    std::fflush(stdout);
    for (const auto& l : table)
      if (l.find("MISMATCH") != std::string::npos || l.find("GPU ERROR") != std::string::npos)
        return 2;
    return 0;
  }
  catch (const std::exception& e)
  {
    std::fprintf(stderr, "bench_euler: %s\n", e.what());
    return 1;
  }
}
