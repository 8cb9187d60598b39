// BinaryMorphology.cpp - binary erosion and everything built on it, as
// scipy.ndimage defines them (Morphology.h). One pass of erosion (or, with
// `invert`, of dilation by the reflected element) per iteration, voxels in
// rows of x shared among threads.
#include "topovox/Device.h"
#include "topovox/Morphology.h"

#include "ElementOffsets.h"
#include "MorphologyBackends.h"

#include "../common/Parallel.h"
#include "../common/ScalarDispatch.h"

#include <atomic>
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

// One pass: out = the erosion of `in` (0/1) by the element; with invert,
// the dilation (the caller reflects the element). `center` is whether the
// element holds its centre: then a voxel that is false (true, inverted)
// stays so without looking further. Returns whether any voxel changed.
bool erodeOnce(const BinaryImage& in, const int64_t dims[3], const morphology::ElementView& e, bool center,
  const uint8_t* mask, bool border, bool invert, BinaryImage& out, int threads)
{
  const uint8_t T = invert ? 0 : 1, F = invert ? 1 : 0;
  const bool bdr = invert ? !border : border;
  std::atomic<bool> changed{ false };
  parallelFor(dims[1] * dims[2], threads, [&](int, int64_t r0, int64_t r1) {
    bool any = false;
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t x = 0; x < dims[0]; ++x)
      {
        const int64_t at = x + dims[0] * r;
        const uint8_t o =
          morphology::erodeVoxel(in.data(), dims, e, mask, center, bdr, T, F, x, r % dims[1], r / dims[1], at);
        out[static_cast<size_t>(at)] = o;
        any = any || o != in[static_cast<size_t>(at)];
      }
    if (any)
      changed = true;
  });
  return changed;
}

using morphology::BinaryOperator;
using morphology::BinaryStage;
using morphology::stagesOf;
using morphology::threadsOf;

// Whether the element holds its centre (scipy's "center is true").
bool holdsCentre(const ElementOffsets& e)
{
  for (const auto& d : e.delta)
    if (d[0] == 0 && d[1] == 0 && d[2] == 0)
      return true;
  return false;
}

// One stage on the CPU threads: `iterations` passes, or until stable when < 1.
BinaryImage iterate(BinaryImage current, const int64_t dims[3], const BinaryStage& stage, const BinaryOptions& o)
{
  const int threads = threadsOf(o.threads);
  const int64_t strides[3] = { 1, dims[0], dims[0] * dims[1] };
  const morphology::FlatElement flat(stage.element, strides);
  const bool center = holdsCentre(stage.element);
  BinaryImage next(current.size());
  bool changed = erodeOnce(current, dims, flat.view, center, o.mask, o.borderValue, stage.invert, next, threads);
  for (int done = 1; done < o.iterations || (o.iterations < 1 && changed); ++done)
  {
    current.swap(next);
    changed = erodeOnce(current, dims, flat.view, center, o.mask, o.borderValue, stage.invert, next, threads);
  }
  return next;
}

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
  BinaryImage current = binarize(image, threadsOf(o.threads));
  for (const BinaryStage& stage : stages)
    current = iterate(std::move(current), image.dims, stage, o);
  return current;
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
  BinaryImage mask = binarize(image, threadsOf(threads));
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
  BinaryStage miss2;
  miss2.element = morphology::offsetsOf(s2);
  miss2.invert = true;
  const BinaryImage fit = runStages(image, stagesOf(BinaryOperator::Erosion, s1), o);
  const BinaryImage miss = runStages(image, { miss2 }, o);
  BinaryImage out(fit.size());
  for (size_t k = 0; k < out.size(); ++k)
    out[k] = fit[k] && !miss[k] ? 1 : 0;
  return out;
}

} // namespace topovox
