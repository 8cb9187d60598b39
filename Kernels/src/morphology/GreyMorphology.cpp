// GreyMorphology.cpp - grey-scale erosion and dilation (minimum and maximum
// over a structuring element) with scipy.ndimage's border modes and order of
// evaluation (Morphology.h), and the operators built on them.
#include "topovox/Device.h"
#include "topovox/Morphology.h"

#include "ElementOffsets.h"
#include "MorphologyBackends.h"
#include "SeparableMinMax.h"

#include "../common/GridValues.h"
#include "../common/Parallel.h"
#include "../common/ScalarDispatch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace topovox
{
namespace
{
using morphology::ElementOffsets;

using morphology::checkImage;

using morphology::threadsOf;

// The minimum (or maximum) over the element at every voxel (MorphologyVoxel.h).
template <typename T>
void minOrMax(const GridView& g, const ElementOffsets& e, bool minimum, const GreyOptions& o, T* out)
{
  const T* data = static_cast<const T*>(g.data);
  const T cv = static_cast<T>(o.cval);
  const morphology::FlatElement flat(e, g.strides);
  morphology::GreyGrid grid;
  for (int a = 0; a < 3; ++a)
  {
    grid.dims[a] = g.dims[a];
    grid.strides[a] = g.strides[a];
  }
  grid.mode = static_cast<int>(o.mode);
  parallelFor(g.dims[1] * g.dims[2], threadsOf(o.threads), [&](int, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t x = 0; x < g.dims[0]; ++x)
        out[x + g.dims[0] * r] =
          morphology::greyVoxel(data, grid, flat.view, minimum, cv, x, r % g.dims[1], r / g.dims[1]);
  });
}

GreyImage filter(const GridView& image, const StructuringElement& s, const GreyOptions& o, bool minimum)
{
  checkImage(image);
  const StructuringElement e = morphology::greyElement(s, minimum);
  const ElementOffsets offsets = morphology::greyOffsets(e);
  GreyImage out(static_cast<size_t>(image.voxelCount()) * scalarTypeSize(image.type));
#ifdef TOPOVOX_WITH_CUDA
  if (resolveDevice(o.device, nullptr) == Device::GPU)
  {
    try
    {
      if (morphology::greyGPU(image, e, offsets, minimum, o, out.data(), MemorySpace::Host))
        return out;
      // A NaN under a flat box: scipy's separable passes, below.
    }
    catch (const std::runtime_error&)
    {
      // No GPU memory or a driver error: the CPU gives the same result.
    }
  }
#endif
  // A flat box over a floating-point image with NaN: scipy's separable
  // passes, whose NaN behaviour the direct minimum does not share
  // (SeparableMinMax.h); on the CPU whatever the device, so that every
  // device gives scipy's answer.
  if (scalarTypeIsFloating(image.type) && morphology::isSeparableBox(e))
  {
    bool done = false;
    dispatchScalarType(image.type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_floating_point<T>::value)
      {
        // Look for NaN in place; the image is copied only when there is one.
        bool anyNaN = false;
        forEachValue<T>(image, [&](int64_t, T v) { anyNaN = anyNaN || std::isnan(v); });
        if (anyNaN)
        {
          std::vector<T> values = packedValues<T>(image);
          morphology::separableMinOrMax(values, image.dims, e, minimum, o);
          std::memcpy(out.data(), values.data(), out.size());
          done = true;
        }
      }
    });
    if (done)
      return out;
  }
  dispatchScalarType(image.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    minOrMax<T>(image, offsets, minimum, o, reinterpret_cast<T*>(out.data()));
  });
  return out;
}

GridView viewOf(const GreyImage& bytes, const GridView& like)
{
  return GridView::contiguous(bytes.data(), like.type, like.dims[0], like.dims[1], like.dims[2]);
}

// a - b (and a + b) in the image's type: integers wrap as numpy's do.
template <typename T>
T wrapAdd(T a, T b)
{
  if constexpr (std::is_integral<T>::value)
  {
    using U = typename std::make_unsigned<T>::type;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  }
  else
    return a + b;
}
template <typename T>
T wrapSub(T a, T b)
{
  if constexpr (std::is_integral<T>::value)
  {
    using U = typename std::make_unsigned<T>::type;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  }
  else
    return a - b;
}

// out[k] = f(a[k], b[k], image[k]) in the image's type.
template <typename F>
GreyImage combine(const GridView& image, const GreyImage& a, const GreyImage& b, F f)
{
  GreyImage out(a.size());
  dispatchScalarType(image.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pa = reinterpret_cast<const T*>(a.data());
    const T* pb = reinterpret_cast<const T*>(b.data());
    T* po = reinterpret_cast<T*>(out.data());
    const T* d = static_cast<const T*>(image.data);
    int64_t k = 0;
    for (int64_t z = 0; z < image.dims[2]; ++z)
      for (int64_t y = 0; y < image.dims[1]; ++y)
        for (int64_t x = 0; x < image.dims[0]; ++x, ++k)
          po[k] = f(pa[k], pb[k], d[x * image.strides[0] + y * image.strides[1] + z * image.strides[2]]);
  });
  return out;
}
} // namespace

bool parseBorderMode(const std::string& t, BorderMode& out)
{
  if (t == "reflect" || t == "grid-mirror")
    out = BorderMode::Reflect;
  else if (t == "mirror")
    out = BorderMode::Mirror;
  else if (t == "nearest")
    out = BorderMode::Nearest;
  else if (t == "wrap" || t == "grid-wrap")
    out = BorderMode::Wrap;
  else if (t == "constant" || t == "grid-constant")
    out = BorderMode::Constant;
  else
    return false;
  return true;
}

GreyImage greyErosion(const GridView& image, const StructuringElement& s, const GreyOptions& o)
{
  return filter(image, s, o, true);
}

GreyImage greyDilation(const GridView& image, const StructuringElement& s, const GreyOptions& o)
{
  return filter(image, s, o, false);
}

GreyImage greyOpening(const GridView& image, const StructuringElement& s, const GreyOptions& o)
{
  const GreyImage eroded = greyErosion(image, s, o);
  return greyDilation(viewOf(eroded, image), s, o);
}

GreyImage greyClosing(const GridView& image, const StructuringElement& s, const GreyOptions& o)
{
  const GreyImage dilated = greyDilation(image, s, o);
  return greyErosion(viewOf(dilated, image), s, o);
}

GreyImage morphologicalGradient(const GridView& image, const StructuringElement& s, const GreyOptions& o)
{
  return combine(image, greyDilation(image, s, o), greyErosion(image, s, o),
    [](auto d, auto e, auto) { return wrapSub(d, e); });
}

GreyImage morphologicalLaplace(const GridView& image, const StructuringElement& s, const GreyOptions& o)
{
  return combine(image, greyDilation(image, s, o), greyErosion(image, s, o),
    [](auto d, auto e, auto x) { return wrapSub(wrapSub(wrapAdd(d, e), x), x); });
}

GreyImage whiteTophat(const GridView& image, const StructuringElement& s, const GreyOptions& o)
{
  const GreyImage opened = greyOpening(image, s, o);
  return combine(image, opened, opened, [](auto open, auto, auto x) { return wrapSub(x, open); });
}

GreyImage blackTophat(const GridView& image, const StructuringElement& s, const GreyOptions& o)
{
  const GreyImage closed = greyClosing(image, s, o);
  return combine(image, closed, closed, [](auto close, auto, auto x) { return wrapSub(close, x); });
}

} // namespace topovox
