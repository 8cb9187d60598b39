// test_persistence_gpu.cpp - the GPU gradient against the CPU gradient, bit
// for bit (state, step and owner of every cell); the GPU's whole-image
// summary (critical cells, path ends) against the CPU piece's, entry for
// entry; and the GPU engine's diagrams against the CPU engine's, single and
// batched (batches in several launches, strided views, NaN in some images,
// mixed sizes), on random images with many ties, NaN, every scalar type, 1D
// to 3D, V and T, sublevel and superlevel, with and without cut planes (odd
// sizes, cuts every 1 to 3 voxels); plus every image and volume shipped in
// the data directory when one is given. The CPU engine is itself tested
// against the reference engine, cripser and GUDHI.
//
//   topovox_persistence_gpu_tests [--data DIR] [--quick]   exit 77 when no GPU answers
//
// --quick runs the random cases on small images only (the squeezed
// boundaries on a 26x22x11 volume instead of 70x66x33; no slabs, batches or
// data): the size at which compute-sanitizer's racecheck, which checks every
// shared-memory access of the boundaries' kernel, finishes in minutes.
#include "topovox/Persistence.h"
#include "topovox/PersistencePieces.h"

#include "../src/common/ScalarDispatch.h"
#include "../src/persistence/MorseGradient.h"

#include "CriticalCellLimitRun.h"
#include "KernelCheck.h"
#include "RandomValues.h"
#include "SummaryComparison.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>
#include <zlib.h>

using namespace topovox;

namespace
{
using kernel_check::expect;

using kernel_check::sameDiagram;

// Calls run(options, words) for each construction and filtration; words
// name them for the messages.
template <typename Run>
void forEachFiltration(Run run)
{
  for (Construction c : { Construction::V, Construction::T })
    for (Filtration f : { Filtration::Sublevel, Filtration::Superlevel })
    {
      PersistenceOptions po;
      po.construction = c;
      po.filtration = f;
      run(po, std::string(" ") + constructionName(c) + " " + filtrationName(f));
    }
}

// Whether every pair's voxels hold its birth and (finite) death, in the
// filtration's own values.
bool voxelsHoldValues(const PersistenceDiagram& d, const GridView& g)
{
  return dispatchScalarType(g.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto at = [&](const int64_t* v) {
      return static_cast<double>(static_cast<const T*>(g.data)[v[0] * g.strides[0] + v[1] * g.strides[1] +
        v[2] * g.strides[2]]);
    };
    for (const PersistencePair& p : d.pairs)
      if (at(p.birthVoxel) != p.birth || (!p.essential && at(p.deathVoxel) != p.death))
        return false;
    return true;
  });
}

// The GPU engine's diagrams of g against the CPU engine's. `said`: what
// the GPU's warning must say (a fallback, the slabs); `cut`: the GPU cut
// the image, so pairs are compared by value and their voxels checked to
// hold their values; the stages of the sublevel runs printed when asked.
void compareDiagrams(const std::string& name, const GridView& g, const std::string& said = "", bool cut = false,
  bool printStages = false)
{
  forEachFiltration([&](PersistenceOptions po, const std::string& words) {
    po.device = Device::CPU;
    const PersistenceDiagram cpu = computePersistence(g, po);
    po.device = Device::GPU;
    const PersistenceDiagram gpu = computePersistence(g, po);
    expect(gpu.device == Device::GPU, name + words + ": the GPU built the diagram's complex (" + gpu.warnings + ")");
    if (!said.empty())
      expect(gpu.warnings.find(said) != std::string::npos,
        name + words + ": the warning says \"" + said + "\" (it says \"" + gpu.warnings + "\")");
    expect(sameDiagram(cpu, gpu, !cut), name + words + ": GPU diagram equals the CPU diagram");
    if (cut)
      expect(voxelsHoldValues(gpu, g), name + words + ": the GPU pairs' voxels hold their values");
    if (printStages && po.filtration == Filtration::Sublevel)
      std::printf("%s%s: %zu pairs; CPU stages:\n%sGPU stages:\n%s", name.c_str(), words.c_str(), cpu.pairs.size(),
        cpu.timings.c_str(), gpu.timings.c_str());
  });
}

using kernel_check::CanonicalSummary;

// Whether a summary lists its cells in the filtration order (value,
// dimension, cell) or, where `filtration` is false, in index order.
bool listedInOrder(const MorsePieceSummary& s, bool filtration)
{
  auto byIndex = [](const MorseCriticalCell& a, const MorseCriticalCell& b) { return a.cell < b.cell; };
  auto byFiltration = [](const MorseCriticalCell& a, const MorseCriticalCell& b) {
    return std::tie(a.value, a.dimension, a.cell) < std::tie(b.value, b.dimension, b.cell);
  };
  return filtration ? std::is_sorted(s.critical.begin(), s.critical.end(), byFiltration)
                    : std::is_sorted(s.critical.begin(), s.critical.end(), byIndex);
}

// Whether the GPU sorts a whole image's cells itself (values of up to 32
// bits, unless TOPOVOX_GPU_SORT_CRITICAL=0; MorseSummaryCUDA.cu).
bool gpuSortsCells(const GridView& g)
{
  const char* env = std::getenv("TOPOVOX_GPU_SORT_CRITICAL");
  return scalarTypeSize(g.type) <= 4 && !(env && std::string(env) == "0");
}

// Whether the GPU numbers the path ends of the cells it sorts (unless
// TOPOVOX_GPU_NUMBER_ENDS=0; MorseSummaryCUDA.cu).
bool gpuNumbersEnds(const GridView& g)
{
  const char* env = std::getenv("TOPOVOX_GPU_NUMBER_ENDS");
  return gpuSortsCells(g) && !(env && std::string(env) == "0");
}

// The GPU's summary of the whole image against the CPU piece's (numbered
// ends written out as cells first).
void compareSummaries(const std::string& name, const GridView& g)
{
  int top = 0;
  for (int a = 0; a < 3; ++a)
    top += g.dims[a] > 1 ? 1 : 0;
  forEachFiltration([&](PersistenceOptions po, const std::string& words) {
    const PieceRegion whole = PieceRegion::whole(g.dims, po.construction);
    po.device = Device::CPU;
    const MorsePiece cpu(g, whole, po);
    po.device = Device::GPU;
    const MorsePiece gpu(g, whole, po);
    expect(gpu.gradientDevice() == Device::GPU, name + words + ": the GPU built the summary (" + gpu.warnings() + ")");
    const bool sorted = gpuSortsCells(g) && gpu.summary().critical.size() >= 2;
    const bool numbered = sorted && gpuNumbersEnds(g);
    expect(gpu.summary().numberedEnds == numbered,
      name + words + (numbered ? ": the GPU numbers the path ends" : ": the GPU gives the path ends as cells"));
    MorsePieceSummary written = gpu.summary();
    written.expandNumberedEnds(top, 4);
    expect(CanonicalSummary(cpu.summary()) == CanonicalSummary(written),
      name + words + ": GPU summary equals the CPU summary");
    expect(listedInOrder(gpu.summary(), sorted),
      name + words + (sorted ? ": the GPU lists the cells in the filtration order" : ": the GPU lists the cells by index"));
  });
}

// A batch on the GPU against the same batch on the CPU, image by image.
void compareBatch(const std::string& name, const std::vector<GridView>& images, bool expectGPU = true)
{
  forEachFiltration([&](PersistenceOptions po, const std::string& words) {
    po.device = Device::CPU;
    const std::vector<PersistenceDiagram> cpu = computePersistenceBatch(images, po);
    po.device = Device::GPU;
    const std::vector<PersistenceDiagram> gpu = computePersistenceBatch(images, po);
    const std::string what = name + words;
    bool same = cpu.size() == gpu.size();
    for (size_t k = 0; same && k < cpu.size(); ++k)
      same = sameDiagram(cpu[k], gpu[k]);
    expect(same, what + ": GPU batch diagrams equal the CPU batch's");
    expect(!gpu.empty() && (gpu[0].device == Device::GPU) == expectGPU,
      what + (expectGPU ? ": the GPU ran the batch" : ": the CPU ran the batch, and said so"));
    if (!expectGPU)
      expect(gpu[0].warnings.find("different sizes") != std::string::npos, what + ": warning given");
  });
}

// Every combination on one image. Returns false when no GPU was used.
bool compare(const std::string& name, const GridView& g)
{
  bool gpuSeen = false;
  for (Construction c : { Construction::V, Construction::T })
    for (Filtration f : { Filtration::Sublevel, Filtration::Superlevel })
      for (int cutEvery : { 0, 1, 2, 3 })
      {
        const std::string what = name + " " + constructionName(c) + " " + filtrationName(f) +
          " cuts every " + std::to_string(cutEvery);
        const cubical::CellGrid cg(g, c);
        std::vector<int64_t> cuts[3];
        for (int a = 0; a < 3 && cutEvery; ++a)
          for (int64_t x = 2 * cutEvery; x < cg.dims[a] - 2; x += 2 * cutEvery)
            cuts[a].push_back(x);
        std::string warnings;
        Device used = Device::CPU;
        const morse::Gradient cpu = morse::buildGradient(g, cg, f, cuts, 4, Device::CPU);
        const morse::Gradient gpu = morse::buildGradient(g, cg, f, cuts, 4, Device::GPU, &warnings, &used);
        if (used != Device::GPU)
        {
          std::printf("no GPU gradient: %s\n", warnings.c_str());
          return false;
        }
        gpuSeen = true;
        expect(cpu.state == gpu.state && cpu.step == gpu.step && cpu.ownerCode == gpu.ownerCode,
          what + ": GPU gradient equals the CPU gradient");
      }
  compareDiagrams(name, g);
  compareSummaries(name, g);
  return gpuSeen;
}

using kernel_check::randomValues;

// A shipped volume: its .json sidecar names a gzip-compressed raw file.
bool loadVolume(const std::string& dir, const std::string& name, std::vector<unsigned char>& bytes,
  int64_t dims[3], std::string& dtype)
{
  std::ifstream json(dir + "/" + name + ".json");
  if (!json)
    return false;
  const std::string text((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
  auto field = [&](const std::string& key) {
    const size_t at = text.find("\"" + key + "\"");
    return at == std::string::npos ? std::string() : text.substr(text.find(':', at) + 1);
  };
  const std::string d = field("dims");
  dims[2] = 1; // images list two
  if (std::sscanf(d.c_str(), " [ %ld , %ld , %ld", &dims[0], &dims[1], &dims[2]) < 2)
    return false;
  const std::string t = field("dtype"), f = field("file");
  dtype = t.substr(t.find('"') + 1, t.find('"', t.find('"') + 1) - t.find('"') - 1);
  const std::string file = f.substr(f.find('"') + 1, f.find('"', f.find('"') + 1) - f.find('"') - 1);
  gzFile gz = gzopen((dir + "/" + file).c_str(), "rb");
  if (!gz)
    return false;
  unsigned char buffer[1 << 16];
  int got;
  while ((got = gzread(gz, buffer, sizeof buffer)) > 0)
    bytes.insert(bytes.end(), buffer, buffer + got);
  gzclose(gz);
  return true;
}
void batches(std::mt19937_64& rng)
{
  // 2D, with a NaN in one image: 37 images, and again in launches of 5
  // (the last one partial).
  std::vector<float> stack = randomValues<float>(rng, 37 * 33 * 29, 60);
  stack[5 * 33 * 29 + 100] = std::numeric_limits<float>::quiet_NaN();
  std::vector<GridView> images;
  for (int b = 0; b < 37; ++b)
    images.push_back(GridView::contiguous(stack.data() + b * 33 * 29, ScalarType::Float32, 33, 29, 1));
  compareBatch("batch 37 x 33x29 float", images);
  setenv("TOPOVOX_GPU_BATCH_IMAGES", "5", 1);
  compareBatch("batch 37 x 33x29 float, 5 a launch", images);
  unsetenv("TOPOVOX_GPU_BATCH_IMAGES");
  // Progress within one launch (400 images, the 37 again and again): after
  // the images the calling thread pairs, rising; a cancel at the first
  // report stops the batch.
  {
    std::vector<GridView> many;
    for (int b = 0; b < 400; ++b)
      many.push_back(images[static_cast<size_t>(b % 37)]);
    PersistenceOptions po;
    po.device = Device::GPU;
    std::vector<double> seen;
    po.progress = [&](double f) {
      seen.push_back(f);
      return true;
    };
    computePersistenceBatch(many, po);
    bool rising = !seen.empty();
    for (size_t k = 1; k < seen.size(); ++k)
      rising = rising && seen[k] >= seen[k - 1];
    expect(seen.size() >= 3 && rising && seen.front() < 1.0,
      "GPU batch progress: reported as images are paired (" + std::to_string(seen.size()) + " reports)");
    po.progress = [](double) { return false; };
    bool aborted = false;
    try
    {
      computePersistenceBatch(many, po);
    }
    catch (const Aborted&)
    {
      aborted = true;
    }
    expect(aborted, "GPU batch: a cancel from the progress callback stops it");
  }
  // 3D uint8 with plateaus: the gradients come back for the boundaries.
  std::vector<uint8_t> volumes = randomValues<uint8_t>(rng, 9 * 11 * 10 * 9, 4);
  images.clear();
  for (int b = 0; b < 9; ++b)
    images.push_back(GridView::contiguous(volumes.data() + b * 990, ScalarType::UInt8, 11, 10, 9));
  compareBatch("batch 9 x 11x10x9 uint8", images);
  // Strided views: the even columns of 12 images of 40x17 int16.
  std::vector<int16_t> wide = randomValues<int16_t>(rng, 12 * 40 * 17, 9);
  images.clear();
  for (int b = 0; b < 12; ++b)
  {
    GridView g = GridView::contiguous(wide.data() + b * 40 * 17, ScalarType::Int16, 20, 17, 1);
    g.strides[0] = 2;
    g.strides[1] = 40;
    images.push_back(g);
  }
  compareBatch("batch 12 x 20x17 int16 strided", images);
  // Mixed sizes: the CPU, with a warning.
  images.push_back(GridView::contiguous(wide.data(), ScalarType::Int16, 19, 17, 1));
  compareBatch("batch of mixed sizes", images, false);
}

// Every image and volume of the data directory, single, on the GPU against
// the CPU; the 2D images also as a batch of their four quadrants.
void shippedData(const std::string& data)
{
  for (const char* name : { "camera_512", "ascent_512", "ct_head_512", "fullhead15_ct_256", "fundus_retina_green",
         "neghip_66", "headsq_64x64x93", "tooth_103x94x161", "volpack_brainsmall_128x128x84", "colin27_t1",
         "engine_256x256x128", "bonsai_256" })
  {
    std::vector<unsigned char> bytes;
    int64_t dims[3];
    std::string dtype;
    if (!loadVolume(data, name, bytes, dims, dtype))
    {
      expect(false, std::string("read ") + name);
      continue;
    }
    const ScalarType type = dtype == "uint8" ? ScalarType::UInt8
      : dtype == "int16"                      ? ScalarType::Int16
                                              : ScalarType::UInt16;
    expect(dtype == "uint8" || dtype == "int16" || dtype == "uint16", std::string(name) + ": a known dtype");
    const GridView g = GridView::contiguous(bytes.data(), type, dims[0], dims[1], dims[2]);
    compareDiagrams(name, g, "", false, true);
    if (dims[2] == 1)
    {
      std::vector<GridView> quadrants;
      const int64_t hx = dims[0] / 2, hy = dims[1] / 2;
      for (int q = 0; q < 4; ++q)
      {
        GridView v = g;
        v.dims[0] = hx;
        v.dims[1] = hy;
        v.data = static_cast<const char*>(g.data) +
          ((q & 1) * hx + (q >> 1) * hy * g.strides[1]) * static_cast<int64_t>(scalarTypeSize(type));
        quadrants.push_back(v);
      }
      compareBatch(std::string(name) + " quadrants", quadrants);
    }
  }
}
} // namespace

int main(int argc, char** argv)
{
  std::string data;
  bool quick = false;
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--data") && i + 1 < argc)
      data = argv[++i];
    else if (!std::strcmp(argv[i], "--quick"))
      quick = true;
  std::mt19937_64 rng(7);
  const int64_t shapes[][3] = { { 17, 1, 1 }, { 9, 7, 1 }, { 1, 6, 5 }, { 8, 7, 6 }, { 5, 9, 4 }, { 3, 2, 2 } };
  for (const auto& s : shapes)
  {
    const size_t n = static_cast<size_t>(s[0] * s[1] * s[2]);
    const std::string shape = std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]);
    auto u8 = randomValues<uint8_t>(rng, n, 3);
    if (!compare("uint8 3 levels " + shape, GridView::contiguous(u8.data(), ScalarType::UInt8, s[0], s[1], s[2])))
    {
      std::printf("SKIP: no GPU\n");
      return 77;
    }
    auto i16 = randomValues<int16_t>(rng, n, 40);
    compare("int16 " + shape, GridView::contiguous(i16.data(), ScalarType::Int16, s[0], s[1], s[2]));
    auto f32 = randomValues<float>(rng, n, 1000);
    compare("float " + shape, GridView::contiguous(f32.data(), ScalarType::Float32, s[0], s[1], s[2]));
    auto f64 = randomValues<double>(rng, n, 5);
    for (size_t k = 0; k < n; k += 7)
      f64[k] = std::numeric_limits<double>::quiet_NaN();
    compare("double with NaN " + shape, GridView::contiguous(f64.data(), ScalarType::Float64, s[0], s[1], s[2]));
  }
  // A strided view (every other voxel along x of a larger array).
  std::vector<int32_t> wide = randomValues<int32_t>(rng, 16 * 6 * 5, 10);
  GridView strided = GridView::contiguous(wide.data(), ScalarType::Int32, 8, 6, 5);
  strided.strides[0] = 2;
  strided.strides[1] = 16;
  strided.strides[2] = 96;
  compare("int32 strided", strided);
  // Signed zeros: -0.0 and 0.0 are one value (ties by index), also to the
  // GPU boundaries' ranks.
  std::vector<float> zeros = randomValues<float>(rng, 12 * 11 * 10, 3);
  for (size_t k = 0; k < zeros.size(); ++k)
    if (zeros[k] == 0 && (k % 3) == 0)
      zeros[k] = -0.0f;
  compare("float with signed zeros", GridView::contiguous(zeros.data(), ScalarType::Float32, 12, 11, 10));
  // Negative and positive integers: the boundaries' ranks sort them by keys
  // of their own width, the sign bit flipped (complemented for superlevel).
  {
    std::vector<int8_t> i8(14 * 13 * 12);
    std::vector<int16_t> i16(i8.size());
    std::vector<int32_t> i32(i8.size());
    std::uniform_int_distribution<int> pick(-6, 5);
    for (size_t k = 0; k < i8.size(); ++k)
    {
      const int v = pick(rng);
      i8[k] = static_cast<int8_t>(v * 20);
      i16[k] = static_cast<int16_t>(v * 5000);
      i32[k] = v * 300000000;
    }
    compare("int8 of both signs", GridView::contiguous(i8.data(), ScalarType::Int8, 14, 13, 12));
    compare("int16 of both signs", GridView::contiguous(i16.data(), ScalarType::Int16, 14, 13, 12));
    compare("int32 of both signs", GridView::contiguous(i32.data(), ScalarType::Int32, 14, 13, 12));
  }
  // Larger: many thread blocks.
  const int64_t bx = quick ? 26 : 70, by = quick ? 22 : 66, bz = quick ? 11 : 33;
  const std::string bigName = "float " + std::to_string(bx) + "x" + std::to_string(by) + "x" + std::to_string(bz);
  std::vector<float> big = randomValues<float>(rng, static_cast<size_t>(bx * by * bz), 50);
  const GridView bigView = GridView::contiguous(big.data(), ScalarType::Float32, bx, by, bz);
  compare(bigName, bigView);
  // maxCriticalCells on the GPU path: one under the count stops it with
  // CriticalCellLimit and that count, before the pairing.
  {
    const GridView& g = bigView;
    PersistenceOptions po;
    po.device = Device::GPU;
    const PersistenceDiagram free = computePersistence(g, po);
    po.maxCriticalCells = free.criticalCells - 1;
    const int64_t reported = reportedCriticalCells(g, po);
    expect(free.device == Device::GPU && reported == free.criticalCells,
      "GPU: maxCriticalCells one under the count stops the engine, reporting " + std::to_string(reported) + " of " +
        std::to_string(free.criticalCells));
  }
  // The boundaries' passes squeezed (MorseBoundaryCUDA.cu): each case sets
  // its variables, compares with the CPU, and unsets them.
  //  - device scratch too small for most traversals (heaps of 6, records of
  //    3), little output room (one entry a boundary), traversals stopped
  //    after 3 steps: the second pass (a warp a cell) finishes what the first
  //    hands on, or, without it (RETRY=0), the CPU;
  //  - without the cells' keys (batches of more than 2^27 voxels): each
  //    face's key from its owner's rank.
  struct Squeeze
  {
    const char* what;
    std::vector<std::pair<const char*, const char*>> env;
  };
  const Squeeze squeezes[] = {
    { "small device scratch", { { "TOPOVOX_GPU_BOUNDARY_HEAP", "6" }, { "TOPOVOX_GPU_BOUNDARY_OUT", "3" } } },
    { "small device scratch, no second pass",
      { { "TOPOVOX_GPU_BOUNDARY_HEAP", "6" }, { "TOPOVOX_GPU_BOUNDARY_OUT", "3" },
        { "TOPOVOX_GPU_BOUNDARY_RETRY", "0" } } },
    { "little output room, no second pass",
      { { "TOPOVOX_GPU_BOUNDARY_ROOM", "1" }, { "TOPOVOX_GPU_BOUNDARY_RETRY", "0" } } },
    { "little output room", { { "TOPOVOX_GPU_BOUNDARY_ROOM", "1" } } },
    { "traversals stopped early", { { "TOPOVOX_GPU_BOUNDARY_STEPS", "3" } } },
    { "traversals stopped early, no second pass",
      { { "TOPOVOX_GPU_BOUNDARY_STEPS", "3" }, { "TOPOVOX_GPU_BOUNDARY_RETRY", "0" } } },
    { "keys from ranks", { { "TOPOVOX_GPU_CELL_KEYS", "0" } } },
    { "keys from ranks, traversals stopped early",
      { { "TOPOVOX_GPU_CELL_KEYS", "0" }, { "TOPOVOX_GPU_BOUNDARY_STEPS", "3" } } },
  };
  for (const Squeeze& q : squeezes)
  {
    for (const auto& e : q.env)
      setenv(e.first, e.second, 1);
    compare(bigName + ", " + q.what, bigView);
    for (const auto& e : q.env)
      unsetenv(e.first);
  }
  std::vector<uint8_t> thin = randomValues<uint8_t>(rng, 40 * 30 * 3, 4);
  // The device out of memory in the boundaries (a scratch of 16 TB asked
  // for): the gradient rebuilt on the CPU, which computes them all.
  setenv("TOPOVOX_GPU_BOUNDARY_ROOM", "2000000000", 1);
  compareDiagrams(bigName + ", boundaries out of device memory", bigView, "GPU boundaries failed");
  std::vector<double> nan2d = randomValues<double>(rng, 90 * 70, 20);
  for (size_t k = 0; k < nan2d.size(); k += 11)
    nan2d[k] = std::numeric_limits<double>::quiet_NaN();
  compareDiagrams("2D double with NaN, boundaries out of device memory",
    GridView::contiguous(nan2d.data(), ScalarType::Float64, 90, 70, 1), "GPU boundaries failed");
  unsetenv("TOPOVOX_GPU_BOUNDARY_ROOM");
  // The records the device holds until the rows are known: their rows read
  // on the host (no device room for them), and the device failing before
  // it gives them (the CPU computes those boundaries).
  setenv("TOPOVOX_GPU_HELD_ROWS", "host", 1);
  compareDiagrams(bigName + ", held boundaries' rows read on the host", bigView);
  // (Records are held only where the summary is numbered and its
  // boundaries come as rows: not where the suite runs with either off.)
  auto off = [](const char* name) {
    const char* v = std::getenv(name);
    return v && std::atoi(v) == 0;
  };
  const bool held = !off("TOPOVOX_GPU_BOUNDARY_ROWS") && !off("TOPOVOX_GPU_NUMBER_ENDS");
  setenv("TOPOVOX_GPU_HELD_ROWS", "fail", 1);
  compareDiagrams(bigName + ", held boundaries lost", bigView, held ? "GPU boundaries failed" : "");
  unsetenv("TOPOVOX_GPU_HELD_ROWS");
  if (quick)
    return kernel_check::finish();
  // Streamed through slabs: a device memory limit the whole image exceeds,
  // from two slabs down to slabs of a voxel's span (the volume's whole
  // summary needs about 12 MB, a plane of it 128 kB; the 2D image's 0.35 MB
  // and 1.8 kB; the thin volume's 0.23 to 0.33 MB and 25 to 36 kB, V to T).
  struct Streamed
  {
    std::string name;
    GridView grid;
    std::vector<const char*> limits;
  };
  const Streamed streamed[] = {
    { bigName, bigView, { "3000000", "600000", "400000" } },
    { "2D double with NaN", GridView::contiguous(nan2d.data(), ScalarType::Float64, 90, 70, 1),
      { "300000", "20000", "6000" } },
    { "uint8 40x30x3", GridView::contiguous(thin.data(), ScalarType::UInt8, 40, 30, 3), { "120000" } },
  };
  for (const Streamed& s : streamed)
    for (const char* limit : s.limits)
    {
      setenv("TOPOVOX_GPU_MEMORY_LIMIT", limit, 1);
      compareDiagrams(s.name + ", device memory limit " + limit, s.grid, "slabs of", true);
    }
  // A limit under the whole image's peak if one cell in six were critical
  // (11.85 MB V, 12.55 MB T, the cell keys off so that the summary's share
  // decides) but over it with the cells it has (about one in eleven:
  // 10.80 and 11.16 MB): the gradient is built once to count them, and the
  // image goes whole, not through slabs.
  setenv("TOPOVOX_GPU_CELL_KEYS", "0", 1);
  setenv("TOPOVOX_GPU_MEMORY_LIMIT", "11500000", 1);
  {
    const GridView& g = bigView;
    forEachFiltration([&](PersistenceOptions po, const std::string& words) {
      po.device = Device::CPU;
      const PersistenceDiagram cpu = computePersistence(g, po);
      po.device = Device::GPU;
      const PersistenceDiagram gpu = computePersistence(g, po);
      const std::string name = "float 70x66x33, critical cells counted on the device" + words;
      expect(gpu.device == Device::GPU && gpu.warnings.find("slabs of") == std::string::npos,
        name + ": whole on the GPU (" + gpu.warnings + ")");
      expect(sameDiagram(cpu, gpu, true), name + ": GPU diagram equals the CPU diagram");
    });
  }
  unsetenv("TOPOVOX_GPU_CELL_KEYS");
  unsetenv("TOPOVOX_GPU_MEMORY_LIMIT");
  batches(rng);
  if (!data.empty())
    shippedData(data);
  return kernel_check::finish();
}
