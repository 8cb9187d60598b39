// bench_persistence_inprocess.cpp - the persistence engine timed inside one
// process, for bench/bench_persistence.py --inprocess: what a ParaView
// session or a script computing many diagrams sees, once the CUDA context
// exists and the libraries are loaded (the whole-process times of the
// driver include both).
//
//   bench_persistence_inprocess FILE DTYPE NX NY NZ DEVICE REPEAT [batch | batch3d DEPTH]
//
// FILE: raw, x fastest; DTYPE uint8, int16, uint16 or float32; DEVICE cpu
// or gpu (all CPU threads either way). One warm-up call, then the best of
// REPEAT calls of computePersistence (V construction, sublevel sets;
// BenchRaw.h's bestOfMs). Prints one JSON object: the best time in ms, the
// stages of the last call, the number of pairs. With "batch": the NZ planes are NZ images of NX x NY, one
// computePersistenceBatch call (no stages; the time per image as well);
// with "batch3d DEPTH": NZ / DEPTH volumes of NX x NY x DEPTH, the same way.
#include "BenchRaw.h"
#include "topovox/Persistence.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace topovox;

int main(int argc, char** argv)
{
  const bool batch2d = argc == 9 && std::string(argv[8]) == "batch";
  const bool batch3d = argc == 10 && std::string(argv[8]) == "batch3d";
  if (argc != 8 && !batch2d && !batch3d)
  {
    std::fprintf(stderr, "usage: %s FILE DTYPE NX NY NZ DEVICE REPEAT [batch | batch3d DEPTH]\n", argv[0]);
    return 2;
  }
  const std::string dtype = argv[2];
  const ScalarType type = dtype == "uint8" ? ScalarType::UInt8
    : dtype == "int16"                     ? ScalarType::Int16
    : dtype == "uint16"                    ? ScalarType::UInt16
    : dtype == "float32"                   ? ScalarType::Float32
                                           : ScalarType::Float64;
  if (type == ScalarType::Float64 && dtype != "float64")
  {
    std::fprintf(stderr, "unknown dtype %s\n", dtype.c_str());
    return 2;
  }
  const int64_t nx = std::atoll(argv[3]), ny = std::atoll(argv[4]), nz = std::atoll(argv[5]);
  const size_t bytes = static_cast<size_t>(nx * ny * nz) * scalarTypeSize(type);
  std::vector<char> data(bytes);
  std::ifstream in(argv[1], std::ios::binary);
  if (!in.read(data.data(), static_cast<std::streamsize>(bytes)))
  {
    std::fprintf(stderr, "cannot read %zu bytes from %s\n", bytes, argv[1]);
    return 1;
  }
#ifndef TOPOVOX_WITH_PHAT
  std::fprintf(stderr, "this build has no persistence engine (PHAT was not found)\n");
  return 1;
#endif
  PersistenceOptions options;
  options.device = std::string(argv[6]) == "gpu" ? Device::GPU : Device::CPU;
  const int repeat = std::max(1, std::atoi(argv[7]));
  if (batch2d || batch3d)
  {
    // Images of `depth` planes each, one after the other.
    const int64_t depth = batch3d ? std::atoll(argv[9]) : 1;
    if (depth < 1 || nz % depth != 0)
    {
      std::fprintf(stderr, "DEPTH must divide NZ\n");
      return 2;
    }
    std::vector<GridView> images;
    for (int64_t k = 0; k < nz / depth; ++k)
      images.push_back(
        GridView::contiguous(data.data() + k * nx * ny * depth * scalarTypeSize(type), type, nx, ny, depth));
    std::vector<PersistenceDiagram> d;
    const double ms = bestOfMs([&] { d = computePersistenceBatch(images, options); }, repeat);
    size_t pairs = 0;
    for (const PersistenceDiagram& one : d)
      pairs += one.pairs.size();
    std::printf("{\"ms\": %.3f, \"us_per_image\": %.1f, \"device\": \"%s\", \"pairs\": %zu}\n", ms,
      1e3 * ms / static_cast<double>(images.size()), !d.empty() && d[0].device == Device::GPU ? "gpu" : "cpu",
      pairs);
    return 0;
  }
  const GridView grid = GridView::contiguous(data.data(), type, nx, ny, nz);
  PersistenceDiagram last;
  const double bestMs = bestOfMs([&] { last = computePersistence(grid, options); }, repeat);
  const PersistenceDiagram& best = last; // its stages: the last call's
  // "stage: seconds" lines as a JSON object.
  std::ostringstream stages;
  std::istringstream lines(best.timings);
  std::string line;
  bool firstStage = true;
  while (std::getline(lines, line))
  {
    const size_t colon = line.rfind(':');
    if (colon == std::string::npos)
      continue;
    stages << (firstStage ? "" : ", ") << "\"" << line.substr(0, colon) << "\": " << line.substr(colon + 1);
    firstStage = false;
  }
  std::printf("{\"ms\": %.3f, \"device\": \"%s\", \"pairs\": %zu, \"stages\": {%s}}\n", bestMs,
    best.device == Device::GPU ? "gpu" : "cpu", best.pairs.size(), stages.str().c_str());
  if (!best.warnings.empty())
    std::fprintf(stderr, "%s\n", best.warnings.c_str());
  return 0;
}
