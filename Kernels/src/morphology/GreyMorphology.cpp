// GreyMorphology.cpp - grey-scale erosion and dilation (minimum and maximum
// over a structuring element) with scipy.ndimage's border modes and order of
// evaluation (Morphology.h), and the operators built on them.
#include "topovox/Device.h"
#include "topovox/Morphology.h"

#include "BoxMinMax.h"
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


// Per axis, where each position from the element's lowest reach to past
// its highest reads from (extendIndex, -1 for the constant): a lookup per
// element instead of the mode's arithmetic at the voxels near the border.
struct ExtensionTables
{
  std::vector<int64_t> axis[3];
  int64_t lo[3];
  ExtensionTables(const int64_t dims[3], const ElementOffsets& e, int mode)
  {
    for (int a = 0; a < 3; ++a)
    {
      lo[a] = e.reach[a][0];
      for (int64_t i = e.reach[a][0]; i < dims[a] + e.reach[a][1]; ++i)
        axis[a].push_back(morphology::extendIndex(i, dims[a], mode));
    }
  }
  int64_t at(int a, int64_t i) const { return axis[a][static_cast<size_t>(i - lo[a])]; }
};

// One voxel near the border: greyVoxel's rule (MorphologyVoxel.h) for
// voxels whose element leaves the image (the first term in double plus its
// value, the others in T, compared in double), positions from the tables.
template <typename T>
T borderVoxel(const T* data, const GridView& g, const ExtensionTables& t, const morphology::FlatElement& e,
  bool minimum, T cv, int64_t x, int64_t y, int64_t z)
{
  double result = 0;
  for (size_t k = 0; k < e.direct.size(); ++k)
  {
    const int64_t q0 = t.at(0, x + e.delta[3 * k]), q1 = t.at(1, y + e.delta[3 * k + 1]),
                  q2 = t.at(2, z + e.delta[3 * k + 2]);
    T v = (q0 < 0 || q1 < 0 || q2 < 0) ? cv : data[q0 * g.strides[0] + q1 * g.strides[1] + q2 * g.strides[2]];
    if (k == 0)
    {
      // A flat element adds nothing: adding 0.0 would turn a first -0 into +0.
      result = static_cast<double>(v);
      if (e.view.values)
        result += e.values[0];
      continue;
    }
    if (e.view.values)
      v = static_cast<T>(static_cast<double>(v) + e.values[k]);
    if (minimum ? (static_cast<double>(v) < result) : (static_cast<double>(v) > result))
      result = static_cast<double>(v);
  }
  return static_cast<T>(result);
}

// The minimum (or maximum) over the element at every voxel
// (MorphologyVoxel.h). For a flat element over a type that double holds
// exactly, the voxels of a row whose whole neighbourhood is inside the
// image take it element by element over the row (the same comparisons in
// the same order, vectorised); the other inside voxels voxel by voxel, and
// those near the border through the extension tables.
template <typename T>
void minOrMax(const GridView& g, const ElementOffsets& e, bool minimum, const GreyOptions& o, T* out)
{
  const T* data = static_cast<const T*>(g.data);
  const T cv = static_cast<T>(o.cval);
  const morphology::FlatElement flat(e, g.strides);
  const ExtensionTables tables(g.dims, e, static_cast<int>(o.mode));
  morphology::GreyGrid grid;
  for (int a = 0; a < 3; ++a)
  {
    grid.dims[a] = g.dims[a];
    grid.strides[a] = g.strides[a];
  }
  grid.mode = static_cast<int>(o.mode);
  const bool byRows = morphology::comparesAsDouble<T>() && e.flat && g.strides[0] == 1;
  const int64_t nx = g.dims[0], ny = g.dims[1], nz = g.dims[2];
  // The x range whose neighbourhood is inside the row.
  const int64_t x0 = std::max<int64_t>(0, -e.reach[0][0]), x1 = std::min<int64_t>(nx, nx - e.reach[0][1]);
  parallelFor(ny * nz, threadCount(o.threads), [&](int, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
    {
      const int64_t y = r % ny, z = r / ny;
      T* row = out + nx * r;
      const bool rowInside = y + e.reach[1][0] >= 0 && y + e.reach[1][1] < ny && z + e.reach[2][0] >= 0 &&
        z + e.reach[2][1] < nz;
      for (int64_t x = 0; x < nx; ++x)
      {
        const bool inside = rowInside && x >= x0 && x < x1;
        if (inside && byRows)
        {
          // The rest of the inside range, element by element.
          const T* at = data + y * g.strides[1] + z * g.strides[2];
          std::copy(at + flat.direct[0] + x, at + flat.direct[0] + x1, row + x);
          for (size_t k = 1; k < flat.direct.size(); ++k)
          {
            if (minimum)
              morphology::keepBetterRow<T, true>(at + flat.direct[k] + x, row + x, x1 - x);
            else
              morphology::keepBetterRow<T, false>(at + flat.direct[k] + x, row + x, x1 - x);
          }
          x = x1 - 1;
        }
        else if (inside)
          row[x] = morphology::greyVoxel(data, grid, flat.view, minimum, cv, x, y, z);
        else
          row[x] = borderVoxel(data, g, tables, flat, minimum, cv, x, y, z);
      }
    }
  });
}

GreyImage filter(const GridView& image, const StructuringElement& s, const GreyOptions& o, bool minimum)
{
  checkImage(image);
  const StructuringElement e = morphology::greyElement(s, minimum);
  const ElementOffsets offsets = morphology::greyOffsets(e);
  GreyImage out(static_cast<size_t>(image.voxelCount()) * scalarTypeSize(image.type));
  const bool box = morphology::isSeparableBox(e);
  // Whether a floating-point image has a NaN or a -0 under a flat box (or
  // a -0 constant border): then scipy's separable passes, whose NaN rule and
  // order among equal values the direct minimum does not share
  // (isNanOrNegativeZero, SeparableMinMax.h), on the CPU whatever the
  // device, so that every device gives scipy's bits. The GPU reports it (it
  // looks while it loads); otherwise the CPU looks, in place.
  bool specialUnderBox = false;
#ifdef TOPOVOX_WITH_CUDA
  if (resolveDevice(o.device, nullptr) == Device::GPU)
  {
    try
    {
      if (morphology::greyGPU(image, e, offsets, minimum, o, out.data(), MemorySpace::Host))
        return out;
      specialUnderBox = true;
    }
    catch (const std::runtime_error&)
    {
      // No GPU memory or a driver error: the CPU gives the same result.
    }
  }
#endif
  if (box && scalarTypeIsFloating(image.type))
  {
    bool done = false;
    dispatchScalarType(image.type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_floating_point<T>::value)
      {
        if (!specialUnderBox)
          specialUnderBox = morphology::negativeZeroBorder(o);
        if (!specialUnderBox)
          forEachValue<T>(image,
            [&](int64_t, T v) { specialUnderBox = specialUnderBox || morphology::isNanOrNegativeZero(v); });
        if (specialUnderBox)
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
  // A flat box (no NaN here) axis by axis, where the type compares as
  // double would (BoxMinMax.h); other elements voxel by voxel.
  dispatchScalarType(image.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* typed = reinterpret_cast<T*>(out.data());
    if constexpr (morphology::comparesAsDouble<T>())
      if (box)
      {
        morphology::boxMinOrMax<T>(image, offsets, minimum, o, typed);
        return;
      }
    minOrMax<T>(image, offsets, minimum, o, typed);
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
