// ElementOffsets.h - a structuring element as the list of offsets from the
// voxel to each of its elements, in the order they are visited (raster
// order, x fastest), with the checks every operator makes first.
#pragma once

#include "topovox/Device.h"
#include "topovox/Morphology.h"

#include "MorphologyVoxel.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace topovox
{
namespace morphology
{
struct ElementOffsets
{
  std::vector<std::array<int64_t, 3>> delta; // element position - centre
  std::vector<double> values;                // per element, when non-flat
  int64_t reach[3][2] = { { 0, 0 }, { 0, 0 }, { 0, 0 } }; // min and max delta per axis
  bool flat = true;
};

// The checks every operator makes of its image: valid, and in the memory
// its API expects (Morphology.h: host; MorphologyOnDevice.h: the GPU).
inline void checkImage(const GridView& g, MemorySpace expected = MemorySpace::Host)
{
  const std::string why = validateGrid(g);
  if (!why.empty())
    throw std::invalid_argument(why);
  if (g.memory != expected)
    throw std::invalid_argument(expected == MemorySpace::Host
        ? "morphology needs the image in host memory (MorphologyOnDevice.h takes GPU memory)"
        : "the device morphology API needs the image in GPU memory (Morphology.h takes host memory)");
}

// A constant border of -0 (see isNanOrNegativeZero: under a flat box it
// ties with +0 and scipy's passes decide which survives).
inline bool negativeZeroBorder(const GreyOptions& o)
{
  return o.mode == BorderMode::Constant && o.cval == 0 && std::signbit(o.cval);
}

inline void checkElement(const StructuringElement& s)
{
  for (int a = 0; a < 3; ++a)
  {
    if (s.dims[a] < 1)
      throw std::invalid_argument("the structuring element has an empty axis");
    const int64_t lo = -(s.dims[a] / 2), hi = (s.dims[a] - 1) / 2;
    if (s.origin[a] < lo || s.origin[a] > hi)
      throw std::invalid_argument("invalid origin " + std::to_string(s.origin[a]) + " on axis " +
        std::to_string(a) + ": it must lie in [" + std::to_string(lo) + ", " + std::to_string(hi) +
        "] for an element of length " + std::to_string(s.dims[a]));
  }
  if (static_cast<int64_t>(s.footprint.size()) != s.size())
    throw std::invalid_argument("the structuring element's footprint does not match its shape");
  if (!s.values.empty() && static_cast<int64_t>(s.values.size()) != s.size())
    throw std::invalid_argument("the structuring element's values do not match its shape");
}

// The element reflected through its centre, with the origin scipy gives a
// dilation: -origin, one less on axes of even length.
inline StructuringElement reflected(const StructuringElement& s)
{
  StructuringElement r = s;
  for (int64_t z = 0; z < s.dims[2]; ++z)
    for (int64_t y = 0; y < s.dims[1]; ++y)
      for (int64_t x = 0; x < s.dims[0]; ++x)
      {
        const int64_t from = x + s.dims[0] * (y + s.dims[1] * z);
        const int64_t to = (s.dims[0] - 1 - x) + s.dims[0] * ((s.dims[1] - 1 - y) + s.dims[1] * (s.dims[2] - 1 - z));
        r.footprint[static_cast<size_t>(to)] = s.footprint[static_cast<size_t>(from)];
        if (!s.values.empty())
          r.values[static_cast<size_t>(to)] = s.values[static_cast<size_t>(from)];
      }
  for (int a = 0; a < 3; ++a)
    r.origin[a] = -s.origin[a] - (s.dims[a] % 2 == 0 ? 1 : 0);
  return r;
}

inline ElementOffsets offsetsOf(const StructuringElement& s)
{
  checkElement(s);
  ElementOffsets e;
  e.flat = s.values.empty();
  int64_t center[3];
  for (int a = 0; a < 3; ++a)
    center[a] = s.dims[a] / 2 + s.origin[a];
  for (int64_t z = 0; z < s.dims[2]; ++z)
    for (int64_t y = 0; y < s.dims[1]; ++y)
      for (int64_t x = 0; x < s.dims[0]; ++x)
      {
        const size_t k = static_cast<size_t>(x + s.dims[0] * (y + s.dims[1] * z));
        if (!s.footprint[k])
          continue;
        const std::array<int64_t, 3> d = { x - center[0], y - center[1], z - center[2] };
        for (int a = 0; a < 3; ++a)
        {
          e.reach[a][0] = e.delta.empty() ? d[static_cast<size_t>(a)] : std::min(e.reach[a][0], d[static_cast<size_t>(a)]);
          e.reach[a][1] = e.delta.empty() ? d[static_cast<size_t>(a)] : std::max(e.reach[a][1], d[static_cast<size_t>(a)]);
        }
        e.delta.push_back(d);
        if (!e.flat)
          e.values.push_back(s.values[k]);
      }
  return e;
}

// The element a grey operator visits: erosion subtracts the element's
// values, dilation adds those of the reflected element (scipy's duality).
inline StructuringElement greyElement(const StructuringElement& s, bool minimum)
{
  StructuringElement e = minimum ? s : reflected(s);
  if (minimum)
    for (double& v : e.values)
      v = -v;
  return e;
}

// Its offsets; an element with nothing set is an error.
inline ElementOffsets greyOffsets(const StructuringElement& prepared)
{
  ElementOffsets offsets = offsetsOf(prepared);
  if (offsets.delta.empty())
    throw std::invalid_argument("the structuring element is empty (no element set)");
  return offsets;
}

// The offsets as flat arrays behind an ElementView (MorphologyVoxel.h);
// `strides`: the image's, for the direct offsets.
struct FlatElement
{
  std::vector<int64_t> delta, direct;
  std::vector<double> values;
  ElementView view{};

  FlatElement(const ElementOffsets& e, const int64_t strides[3])
  {
    for (const auto& d : e.delta)
    {
      delta.insert(delta.end(), d.begin(), d.end());
      direct.push_back(d[0] * strides[0] + d[1] * strides[1] + d[2] * strides[2]);
    }
    values = e.values;
    view.count = static_cast<int>(e.delta.size());
    view.delta = delta.data();
    view.direct = direct.data();
    view.values = e.flat ? nullptr : values.data();
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 2; ++b)
        view.reach[a][b] = e.reach[a][b];
  }
  FlatElement(const FlatElement&) = delete;
  FlatElement& operator=(const FlatElement&) = delete;
};

// Whether `element` at `center` lies in the structuring element (scipy's
// "center is true", which lets a binary erosion skip a false voxel).
inline bool centerIsTrue(const StructuringElement& s)
{
  const int64_t c[3] = { s.dims[0] / 2 + s.origin[0], s.dims[1] / 2 + s.origin[1], s.dims[2] / 2 + s.origin[2] };
  return s.footprint[static_cast<size_t>(c[0] + s.dims[0] * (c[1] + s.dims[1] * c[2]))] != 0;
}
}
}
