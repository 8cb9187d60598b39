// test_persistence_gpu.cpp - the GPU gradient against the CPU gradient, bit
// for bit (state, step and owner of every cell), and the GPU engine's
// diagrams against the CPU engine's, on random images with many ties, NaN,
// every scalar type, 1D to 3D, V and T, sublevel and superlevel, with and
// without cut planes (odd sizes, cuts every 1 to 3 voxels); plus the
// shipped volumes when a data directory is given. The CPU engine is itself
// tested against the reference engine, cripser and GUDHI.
//
//   topovox_persistence_gpu_tests [--data DIR]   exit 77 when no GPU answers
#include "topovox/Persistence.h"

#include "../src/persistence/MorseGradient.h"

#include "KernelCheck.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>
#include <zlib.h>

using namespace topovox;

namespace
{
using kernel_check::expect;

bool sameDiagram(const PersistenceDiagram& a, const PersistenceDiagram& b)
{
  if (a.pairs.size() != b.pairs.size())
    return false;
  for (size_t k = 0; k < a.pairs.size(); ++k)
  {
    const auto &p = a.pairs[k], &q = b.pairs[k];
    if (p.dimension != q.dimension || p.birth != q.birth || p.death != q.death || p.essential != q.essential)
      return false;
    for (int c = 0; c < 3; ++c)
      if (p.birthVoxel[c] != q.birthVoxel[c] || p.deathVoxel[c] != q.deathVoxel[c])
        return false;
  }
  return true;
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
  for (Construction c : { Construction::V, Construction::T })
    for (Filtration f : { Filtration::Sublevel, Filtration::Superlevel })
    {
      PersistenceOptions po;
      po.construction = c;
      po.filtration = f;
      po.device = Device::CPU;
      const PersistenceDiagram cpu = computePersistence(g, po);
      po.device = Device::GPU;
      const PersistenceDiagram gpu = computePersistence(g, po);
      expect(gpu.device == Device::GPU, name + ": the GPU built the gradient");
      expect(sameDiagram(cpu, gpu), name + " " + constructionName(c) + " " + filtrationName(f) +
          ": GPU diagram equals the CPU diagram");
    }
  return gpuSeen;
}

template <typename T>
std::vector<T> randomValues(std::mt19937_64& rng, size_t n, int levels)
{
  std::uniform_int_distribution<int> u(0, levels - 1);
  std::vector<T> v(n);
  for (auto& x : v)
    x = static_cast<T>(u(rng));
  return v;
}

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
  if (std::sscanf(d.c_str(), " [ %ld , %ld , %ld", &dims[0], &dims[1], &dims[2]) != 3)
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
} // namespace

int main(int argc, char** argv)
{
  std::string data;
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--data"))
      data = argv[i + 1];
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
  // Larger: many thread blocks.
  std::vector<float> big = randomValues<float>(rng, 70 * 66 * 33, 50);
  compare("float 70x66x33", GridView::contiguous(big.data(), ScalarType::Float32, 70, 66, 33));
  if (!data.empty())
    for (const char* name : { "engine_256x256x128", "bonsai_256" })
    {
      std::vector<unsigned char> bytes;
      int64_t dims[3];
      std::string dtype;
      if (!loadVolume(data, name, bytes, dims, dtype) || dtype != "uint8")
      {
        expect(false, std::string("read ") + name);
        continue;
      }
      const GridView g = GridView::contiguous(bytes.data(), ScalarType::UInt8, dims[0], dims[1], dims[2]);
      for (Construction c : { Construction::V, Construction::T })
      {
        PersistenceOptions po;
        po.construction = c;
        po.device = Device::CPU;
        const PersistenceDiagram cpu = computePersistence(g, po);
        po.device = Device::GPU;
        const PersistenceDiagram gpu = computePersistence(g, po);
        expect(gpu.device == Device::GPU && sameDiagram(cpu, gpu),
          std::string(name) + " " + constructionName(c) + ": GPU diagram equals the CPU diagram");
        std::printf("%s %s: %zu pairs; CPU stages:\n%sGPU stages:\n%s", name, constructionName(c),
          cpu.pairs.size(), cpu.timings.c_str(), gpu.timings.c_str());
      }
    }
  return kernel_check::finish();
}
