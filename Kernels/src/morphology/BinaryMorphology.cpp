// BinaryMorphology.cpp - binary erosion and everything built on it, as
// scipy.ndimage defines them (Morphology.h): each operator is a list of
// stages (MorphologyBackends.h), run on bits by the GPU
// (BinaryMorphologyCUDA.cu) or the CPU threads (BinaryBits.h).
#include "topovox/Device.h"
#include "topovox/Morphology.h"

#include "BinaryBits.h"
#include "ElementOffsets.h"
#include "MorphologyBackends.h"

#include "../common/Parallel.h"
#include "../common/ScalarDispatch.h"

#include <stdexcept>

namespace topovox
{
namespace
{
using morphology::ElementOffsets;

using morphology::checkImage;

// Nonzero voxels (NaN included) as 1.
BinaryImage binarize(const GridView& g, int threads)
{
  BinaryImage out(static_cast<size_t>(g.voxelCount()));
  dispatchScalarType(g.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* d = static_cast<const T*>(g.data);
    parallelFor(g.dims[1] * g.dims[2], threads, [&](int, int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
      {
        const T* row = d + (r % g.dims[1]) * g.strides[1] + (r / g.dims[1]) * g.strides[2];
        for (int64_t x = 0; x < g.dims[0]; ++x)
          out[static_cast<size_t>(x + g.dims[0] * r)] = row[x * g.strides[0]] != T(0) ? 1 : 0;
      }
    });
  });
  return out;
}

using morphology::BinaryOperator;
using morphology::BinaryStage;
using morphology::stagesOf;

// The stages in turn from the binarised image: on the GPU when it is asked
// for (the whole sequence on the device, one copy each way), else on the
// CPU threads.
BinaryImage runStages(const GridView& image, const std::vector<BinaryStage>& stages, const BinaryOptions& o)
{
#ifdef TOPOVOX_WITH_CUDA
  if (resolveDevice(o.device, nullptr) == Device::GPU)
  {
    try
    {
      BinaryImage out(static_cast<size_t>(image.voxelCount()));
      morphology::binaryGPU(image, stages, o, MemorySpace::Host, out.data(), MemorySpace::Host);
      return out;
    }
    catch (const std::runtime_error&)
    {
      // No GPU memory or a driver error: the CPU gives the same result.
    }
  }
#endif
  const int threads = threadCount(o.threads);
  morphology::BitImage bits = morphology::packBits(image, threads);
  morphology::BitImage mask;
  if (o.mask)
    mask = morphology::packBits(
      GridView::contiguous(o.mask, ScalarType::UInt8, image.dims[0], image.dims[1], image.dims[2]), threads);
  morphology::runStagesOnBits(bits, stages, o, o.mask ? &mask : nullptr, threads);
  BinaryImage out(static_cast<size_t>(image.voxelCount()));
  morphology::unpackBits(bits, out.data(), threads);
  return out;
}

GridView viewOf(const BinaryImage& b, const int64_t dims[3])
{
  return GridView::contiguous(b.data(), ScalarType::UInt8, dims[0], dims[1], dims[2]);
}
} // namespace

BinaryImage binaryErosion(const GridView& image, const StructuringElement& s, const BinaryOptions& o)
{
  checkImage(image);
  return runStages(image, stagesOf(BinaryOperator::Erosion, s), o);
}

BinaryImage binaryDilation(const GridView& image, const StructuringElement& s, const BinaryOptions& o)
{
  checkImage(image);
  return runStages(image, stagesOf(BinaryOperator::Dilation, s), o);
}

BinaryImage binaryOpening(const GridView& image, const StructuringElement& s, const BinaryOptions& o)
{
  checkImage(image);
  return runStages(image, stagesOf(BinaryOperator::Opening, s), o);
}

BinaryImage binaryClosing(const GridView& image, const StructuringElement& s, const BinaryOptions& o)
{
  checkImage(image);
  return runStages(image, stagesOf(BinaryOperator::Closing, s), o);
}

BinaryImage binaryPropagation(const GridView& image, const StructuringElement& s, const BinaryOptions& o)
{
  BinaryOptions p = o;
  p.iterations = -1;
  return binaryDilation(image, s, p);
}

BinaryImage binaryFillHoles(const GridView& image, const StructuringElement& s, int threads)
{
  checkImage(image);
  // The background reachable from the border: a propagation from nothing,
  // inside the background, with the outside true; the holes are the rest.
  BinaryImage mask = binarize(image, threadCount(threads));
  for (auto& v : mask)
    v = v ? 0 : 1;
  const BinaryImage empty(mask.size(), 0);
  BinaryOptions o;
  o.iterations = -1;
  o.mask = mask.data();
  o.borderValue = true;
  o.threads = threads;
  BinaryImage out = binaryDilation(viewOf(empty, image.dims), s, o);
  for (auto& v : out)
    v = v ? 0 : 1;
  return out;
}

BinaryImage binaryHitOrMiss(
  const GridView& image, const StructuringElement& s1, const StructuringElement& s2, int threads)
{
  checkImage(image);
  BinaryOptions o;
  o.threads = threads;
  // s1 fits the foreground: an erosion; s2 fits the background: an erosion
  // of the complement, which is one pass with `invert` and the element as
  // given (not reflected), border false.
  const BinaryImage fit = runStages(image, { morphology::stage(s1, false) }, o);
  const BinaryImage miss = runStages(image, { morphology::stage(s2, true) }, o);
  BinaryImage out(fit.size());
  for (size_t k = 0; k < out.size(); ++k)
    out[k] = fit[k] && !miss[k] ? 1 : 0;
  return out;
}

} // namespace topovox
