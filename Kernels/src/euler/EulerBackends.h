// EulerBackends.h - the two implementations behind EulerCurve.h. Both take
// thresholds already converted to the image's scalar type (see
// NativeThresholds.h) and fill the same non-cumulative histogram:
// hist[(bin) * 4 + dim] for bin in [0, skipped + count], the last bin holding
// the voxels beyond every threshold (dropped by the caller).
#pragma once

#include "topovox/EulerCurve.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace topovox
{
namespace euler
{
struct HistogramRequest
{
  GridView grid;
  Box owned;
  Construction construction = Construction::V;
  Filtration filtration = Filtration::Sublevel;
  const void* thresholds = nullptr; // native type of grid.type, `count` of them
  int count = 0;
  int skipped = 0; // thresholds no value can reach, before the native ones
  int threads = 1;
  ProgressCallback progress;
};

// Axes with more than one sample (bit a for axis a).
unsigned activeAxes(const GridView& grid);

void histogramCPU(const HistogramRequest& request, std::vector<int64_t>& hist);
// Sorted distinct non-NaN values; `native`, when given, receives them in the
// image's own type too (raw bytes), for 64-bit integers that doubles round.
void distinctCPU(const GridView& grid, const Box& owned, int threads, std::vector<double>& out,
  std::vector<unsigned char>* native = nullptr);
ValueSummary summarizeCPU(const GridView& grid, const Box& owned, int threads);

#ifdef TOPOVOX_WITH_CUDA
// A packed, contiguous copy of a host grid in GPU memory, described by
// `deviceView`; the memory lives as long as the returned handle.
std::shared_ptr<void> uploadGrid(const GridView& host, GridView& deviceView);

// Throw std::runtime_error on any CUDA failure (out of memory included) so
// that the caller can fall back to the CPU.
void histogramGPU(const HistogramRequest& request, std::vector<int64_t>& hist);
void distinctGPU(const GridView& grid, const Box& owned, std::vector<double>& out,
  std::vector<unsigned char>* native = nullptr);
ValueSummary summarizeGPU(const GridView& grid, const Box& owned);
#endif
}
}
