// EulerTransformBackends.h - the GPU path of EulerTransform.cpp.
#pragma once

#include "topovox/EulerTransform.h"

#include <array>
#include <vector>

namespace topovox
{
namespace euler
{
#ifdef TOPOVOX_WITH_CUDA
// Every direction in one launch; the histograms eulerHistogram would give
// for each direction's height image. Throws std::runtime_error on a CUDA
// failure (the caller falls back to the CPU).
std::vector<EulerHistogram> transformHistogramsGPU(const GridView& grid, const EulerTransformOptions& options,
  const std::vector<std::array<double, 3>>& directions, const std::vector<double>& thresholds, const Box& owned);

// A batch of images of one shape and type, whole: every direction of every
// image in one launch; [image][direction].
std::vector<std::vector<EulerHistogram>> transformHistogramsBatchGPU(const std::vector<GridView>& images,
  const EulerTransformOptions& options, const std::vector<std::array<double, 3>>& directions,
  const std::vector<double>& thresholds);
#endif
}
}
