// StructuringElement.cpp - scipy.ndimage's generate_binary_structure and
// iterate_structure, and boxes.
#include "topovox/Morphology.h"

#include <cstdlib>
#include <stdexcept>

namespace topovox
{
StructuringElement StructuringElement::box(const int64_t dims[3])
{
  StructuringElement s;
  for (int a = 0; a < 3; ++a)
  {
    if (dims[a] < 1)
      throw std::invalid_argument("a size must be at least 1");
    s.dims[a] = dims[a];
  }
  s.footprint.assign(static_cast<size_t>(s.size()), 1);
  return s;
}

StructuringElement generateBinaryStructure(int rank, int connectivity)
{
  if (rank < 0 || rank > 3)
    throw std::invalid_argument("the rank must be 0 to 3");
  if (connectivity < 1)
    connectivity = 1; // as scipy: the centre and its face neighbours
  StructuringElement s;
  for (int a = 0; a < rank; ++a)
    s.dims[a] = 3;
  s.footprint.resize(static_cast<size_t>(s.size()));
  for (int64_t z = 0; z < s.dims[2]; ++z)
    for (int64_t y = 0; y < s.dims[1]; ++y)
      for (int64_t x = 0; x < s.dims[0]; ++x)
      {
        const int64_t steps = (s.dims[0] > 1 ? std::llabs(x - 1) : 0) + (s.dims[1] > 1 ? std::llabs(y - 1) : 0) +
          (s.dims[2] > 1 ? std::llabs(z - 1) : 0);
        s.footprint[static_cast<size_t>(x + s.dims[0] * (y + s.dims[1] * z))] = steps <= connectivity ? 1 : 0;
      }
  return s;
}

StructuringElement iterateStructure(const StructuringElement& s, int iterations)
{
  if (iterations < 2)
    return s;
  const int ni = iterations - 1;
  StructuringElement out;
  int64_t pos[3];
  for (int a = 0; a < 3; ++a)
  {
    out.dims[a] = s.dims[a] + ni * (s.dims[a] - 1);
    pos[a] = ni * (s.dims[a] / 2);
    out.origin[a] = iterations * s.origin[a];
  }
  // The element placed at the centre, then dilated by itself ni times.
  std::vector<uint8_t> seed(static_cast<size_t>(out.size()), 0);
  for (int64_t z = 0; z < s.dims[2]; ++z)
    for (int64_t y = 0; y < s.dims[1]; ++y)
      for (int64_t x = 0; x < s.dims[0]; ++x)
        seed[static_cast<size_t>((x + pos[0]) + out.dims[0] * ((y + pos[1]) + out.dims[1] * (z + pos[2])))] =
          s.footprint[static_cast<size_t>(x + s.dims[0] * (y + s.dims[1] * z))] ? 1 : 0;
  StructuringElement dilator = s;
  dilator.origin[0] = dilator.origin[1] = dilator.origin[2] = 0;
  dilator.values.clear();
  BinaryOptions o;
  o.iterations = ni;
  o.device = Device::CPU; // an element is small: a GPU round trip costs more
  const BinaryImage grown = binaryDilation(
    GridView::contiguous(seed.data(), ScalarType::UInt8, out.dims[0], out.dims[1], out.dims[2]), dilator, o);
  out.footprint.assign(grown.begin(), grown.end());
  return out;
}
} // namespace topovox
