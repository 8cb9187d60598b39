// test_morphology.cpp - the morphology kernels (scipy.ndimage's semantics
// are checked bit for bit against scipy itself in Testing/cli):
//  * --device cpu: the result does not depend on the number of threads,
//    dilation is erosion's dual (dilation(x, s) == not erosion(not x,
//    reflected s) with the border inverted), and binary erosion and flat
//    grey erosion equal the naive rule voxel by voxel (every border mode),
//    checked on random images;
//  * --device gpu: the GPU gives the CPU's bits, for every operator, border
//    mode, element (flat and not) and type, masks and iterations until
//    stable (exit 77 without a GPU); the device API (MorphologyOnDevice.h)
//    on device copies gives the host API's bits.
//  Both: rows longer than a 32-voxel word and not a multiple of it, x
//  offsets beyond a word, float images with NaN and strided views.
#include "topovox/Morphology.h"
#include "topovox/MorphologyOnDevice.h"

#include "KernelCheck.h"

#ifdef TOPOVOX_TEST_CUDA
#include "DeviceCopies.h"
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <utility>
#include <string>
#include <type_traits>
#include <vector>

using namespace topovox;
using kernel_check::expect;

namespace
{
StructuringElement randomElement(std::mt19937_64& rng, bool flatOnly)
{
  StructuringElement s;
  for (int a = 0; a < 3; ++a)
  {
    s.dims[a] = 1 + static_cast<int64_t>(rng() % 4);
    s.origin[a] = -(s.dims[a] / 2) + static_cast<int64_t>(rng() % static_cast<uint64_t>(s.dims[a]));
  }
  for (int64_t k = 0; k < s.size(); ++k)
    s.footprint.push_back(rng() % 3 ? 1 : 0);
  s.footprint[0] = 1;
  if (!flatOnly)
    for (int64_t k = 0; k < s.size(); ++k)
      s.values.push_back(static_cast<double>(static_cast<int>(rng() % 5) - 2));
  return s;
}

// An element of `dims` with random elements (the first set), origin `origin`.
StructuringElement sparseElement(std::mt19937_64& rng, const int64_t dims[3], const int64_t origin[3])
{
  StructuringElement s;
  for (int a = 0; a < 3; ++a)
  {
    s.dims[a] = dims[a];
    s.origin[a] = origin[a];
  }
  for (int64_t k = 0; k < s.size(); ++k)
    s.footprint.push_back(k == 0 || rng() % 4 == 0 ? 1 : 0);
  return s;
}

// Position i of an axis of n samples under a grey border mode (Morphology.h):
// reflect (d c b a | a b c d), mirror (d c b | a b c d), nearest, wrap,
// periodically however far outside; -1 for constant (cval).
int64_t extended(int64_t i, int64_t n, BorderMode mode)
{
  if (i >= 0 && i < n)
    return i;
  switch (mode)
  {
    case BorderMode::Reflect:
    {
      const int64_t r = ((i % (2 * n)) + 2 * n) % (2 * n);
      return r < n ? r : 2 * n - 1 - r;
    }
    case BorderMode::Mirror:
    {
      if (n == 1)
        return 0;
      const int64_t r = ((i % (2 * n - 2)) + 2 * n - 2) % (2 * n - 2);
      return r < n ? r : 2 * n - 2 - r;
    }
    case BorderMode::Nearest:
      return i < 0 ? 0 : n - 1;
    case BorderMode::Wrap:
      return ((i % n) + n) % n;
    default:
      return -1;
  }
}

// The naive rules, voxel by voxel, as Morphology.h states them: the
// element centred at dims // 2 + origin; binary erosion (one iteration, no
// mask) true where every element voxel lands on a true voxel, outside being
// `border`; grey erosion by a flat element, the least of the voxels it
// covers under the border mode (images without NaN).
template <typename Covered>
void forElement(const StructuringElement& s, const int64_t n[3], int64_t x, int64_t y, int64_t z, Covered covered)
{
  for (int64_t k = 0; k < s.size(); ++k)
  {
    if (!s.footprint[static_cast<size_t>(k)])
      continue;
    const int64_t e[3] = { k % s.dims[0], (k / s.dims[0]) % s.dims[1], k / (s.dims[0] * s.dims[1]) };
    const int64_t at[3] = { x + e[0] - (s.dims[0] / 2 + s.origin[0]), y + e[1] - (s.dims[1] / 2 + s.origin[1]),
      z + e[2] - (s.dims[2] / 2 + s.origin[2]) };
    covered(at);
  }
}

BinaryImage naiveBinaryErosion(
  const std::vector<uint8_t>& on, const int64_t n[3], const StructuringElement& s, bool border)
{
  BinaryImage out(on.size());
  for (int64_t z = 0; z < n[2]; ++z)
    for (int64_t y = 0; y < n[1]; ++y)
      for (int64_t x = 0; x < n[0]; ++x)
      {
        bool all = true;
        forElement(s, n, x, y, z, [&](const int64_t at[3]) {
          const bool inside = at[0] >= 0 && at[1] >= 0 && at[2] >= 0 && at[0] < n[0] && at[1] < n[1] && at[2] < n[2];
          all = all && (inside ? on[static_cast<size_t>(at[0] + n[0] * (at[1] + n[1] * at[2]))] != 0 : border);
        });
        out[static_cast<size_t>(x + n[0] * (y + n[1] * z))] = all ? 1 : 0;
      }
  return out;
}

GreyImage naiveGreyErosion(
  const std::vector<float>& v, const int64_t n[3], const StructuringElement& s, BorderMode mode, float cval)
{
  std::vector<float> out(v.size());
  for (int64_t z = 0; z < n[2]; ++z)
    for (int64_t y = 0; y < n[1]; ++y)
      for (int64_t x = 0; x < n[0]; ++x)
      {
        float least = std::numeric_limits<float>::infinity();
        forElement(s, n, x, y, z, [&](const int64_t at[3]) {
          const int64_t i = extended(at[0], n[0], mode), j = extended(at[1], n[1], mode),
                        k = extended(at[2], n[2], mode);
          least = std::min(least, i < 0 || j < 0 || k < 0 ? cval : v[static_cast<size_t>(i + n[0] * (j + n[1] * k))]);
        });
        out[static_cast<size_t>(x + n[0] * (y + n[1] * z))] = least;
      }
  GreyImage bytes(out.size() * sizeof(float));
  std::memcpy(bytes.data(), out.data(), bytes.size());
  return bytes;
}

// The options of the reference (the CPU, one thread) and of the device
// under test (the GPU, or the CPU on `threads` threads), alike otherwise.
BinaryOptions reference(int iterations, bool border, const uint8_t* mask)
{
  BinaryOptions a;
  a.iterations = iterations;
  a.borderValue = border;
  a.mask = mask;
  a.device = Device::CPU;
  a.threads = 1;
  return a;
}
BinaryOptions underTest(const BinaryOptions& reference, bool gpu, int threads)
{
  BinaryOptions b = reference;
  b.device = gpu ? Device::GPU : Device::CPU;
  b.threads = threads;
  return b;
}

// A float image interleaved with a second component, as a VTK array's
// (stride 2): of `levels` random levels, the first `zeros` are 0, the last
// NaN, the others level / 3; the second component is -1. `mask`: random,
// four in five true.
std::vector<float> interleavedImage(std::mt19937_64& rng, size_t count, int levels, int zeros, std::vector<uint8_t>& mask)
{
  std::vector<float> values(2 * count);
  mask.resize(count);
  for (size_t k = 0; k < count; ++k)
  {
    const int r = static_cast<int>(rng() % static_cast<uint64_t>(levels));
    values[2 * k] =
      r < zeros ? 0.0f : (r == levels - 1 ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(r) / 3);
    values[2 * k + 1] = -1.0f;
    mask[k] = rng() % 5 != 0;
  }
  return values;
}

// Binary and grey operators on a strided float view with NaN, through
// options `a` (the CPU, one thread) and `b` (the device under test), on the
// elements the GPU's bit shifts and shared tiles treat apart.
void checkWideRows(std::mt19937_64& rng, bool gpu)
{
  const int64_t n[3] = { 70, 37, 5 };
  const size_t count = static_cast<size_t>(n[0] * n[1] * n[2]);
  std::vector<uint8_t> mask;
  const std::vector<float> values = interleavedImage(rng, count, 60, 25, mask);
  GridView image = GridView::contiguous(values.data(), ScalarType::Float32, n[0], n[1], n[2]);
  for (int a = 0; a < 3; ++a)
    image.strides[a] *= 2;
  const int64_t longDims[3] = { 81, 3, 1 }, longOrigin[3] = { 7, -1, 0 };
  const int64_t zeroOrigin[3] = { 0, 0, 0 }, boxDims[3] = { 3, 3, 3 };
  const StructuringElement elements[] = { sparseElement(rng, longDims, longOrigin), generateBinaryStructure(3, 1),
    StructuringElement::box(boxDims), sparseElement(rng, boxDims, zeroOrigin) };
  std::vector<uint8_t> on(count); // nonzero, NaN included
  for (size_t k = 0; k < count; ++k)
    on[k] = values[2 * k] != 0.0f;
  int which = 0;
  for (const StructuringElement& s : elements)
  {
    const std::string name = "wide rows, element " + std::to_string(which++);
    for (int iterations : { 1, 2, -1 })
      for (bool border : { false, true })
        for (bool masked : { false, true })
        {
          const BinaryOptions a = reference(iterations, border, masked ? mask.data() : nullptr);
          const BinaryOptions b = underTest(a, gpu, 3);
          const std::string what = name + " iterations " + std::to_string(iterations) + " border " +
            std::to_string(border) + " mask " + std::to_string(masked);
          expect(binaryErosion(image, s, a) == binaryErosion(image, s, b), what + ": binary erosion");
          if (!gpu && iterations == 1 && !masked)
            expect(binaryErosion(image, s, b) == naiveBinaryErosion(on, n, s, border), what + ": the naive rule");
          expect(binaryDilation(image, s, a) == binaryDilation(image, s, b), what + ": binary dilation");
          expect(binaryOpening(image, s, a) == binaryOpening(image, s, b), what + ": binary opening");
          expect(binaryClosing(image, s, a) == binaryClosing(image, s, b), what + ": binary closing");
        }
    for (int mode = 0; mode < 5; ++mode)
    {
      GreyOptions a, b;
      a.mode = b.mode = static_cast<BorderMode>(mode);
      a.cval = b.cval = -2.5;
      a.device = Device::CPU;
      a.threads = 1;
      b.device = gpu ? Device::GPU : Device::CPU;
      b.threads = 3;
      const std::string what = name + " mode " + std::to_string(mode);
      expect(greyErosion(image, s, a) == greyErosion(image, s, b), what + ": grey erosion with NaN");
      expect(greyDilation(image, s, a) == greyDilation(image, s, b), what + ": grey dilation with NaN");
    }
  }
}

#ifdef TOPOVOX_TEST_CUDA
// The device API on device copies of the images gives the host API's bits
// (host API on the CPU): binary operators on a float image with a mask,
// grey operators on a strided view, NaN under a box included (which the
// device API hands to the CPU's separable passes).
void checkDeviceApi(std::mt19937_64& rng)
{
  const int64_t n[3] = { 45, 33, 7 };
  const size_t count = static_cast<size_t>(n[0] * n[1] * n[2]);
  std::vector<uint8_t> mask;
  const std::vector<float> values = interleavedImage(rng, count, 40, 18, mask);
  OnDevice d;
  float* onDevice = d.copy(values);
  uint8_t* maskOnDevice = d.copy(mask);
  GridView host = GridView::contiguous(values.data(), ScalarType::Float32, n[0], n[1], n[2]);
  for (int a = 0; a < 3; ++a)
    host.strides[a] *= 2;
  GridView device = host;
  device.data = onDevice;
  device.memory = MemorySpace::Device;
  const int64_t boxDims[3] = { 3, 3, 3 };
  const StructuringElement elements[] = { generateBinaryStructure(3, 2), StructuringElement::box(boxDims) };
  using BinaryOnHost = BinaryImage (*)(const GridView&, const StructuringElement&, const BinaryOptions&);
  using BinaryOnDevice = void (*)(const GridView&, const StructuringElement&, const BinaryOptions&, uint8_t*);
  const std::pair<BinaryOnHost, BinaryOnDevice> binary[] = { { binaryErosion, binaryErosionOnDevice },
    { binaryDilation, binaryDilationOnDevice }, { binaryOpening, binaryOpeningOnDevice },
    { binaryClosing, binaryClosingOnDevice } };
  using GreyOnHost = GreyImage (*)(const GridView&, const StructuringElement&, const GreyOptions&);
  using GreyOnDevice = void (*)(const GridView&, const StructuringElement&, const GreyOptions&, void*);
  const std::pair<GreyOnHost, GreyOnDevice> grey[] = { { greyErosion, greyErosionOnDevice },
    { greyDilation, greyDilationOnDevice }, { greyOpening, greyOpeningOnDevice },
    { greyClosing, greyClosingOnDevice } };
  uint8_t* bytes = d.make<uint8_t>(count);
  float* floats = d.make<float>(count);
  int which = 0;
  for (const StructuringElement& s : elements)
  {
    for (int op = 0; op < 4; ++op)
    {
      const std::string what = "device API, element " + std::to_string(which) + ", operator " + std::to_string(op);
      BinaryOptions h, g;
      h.device = Device::CPU;
      h.iterations = g.iterations = op + 1 == 4 ? -1 : op + 1;
      h.mask = mask.data();
      g.mask = maskOnDevice;
      binary[op].second(device, s, g, bytes);
      const std::vector<uint8_t> gotBits = d.back(bytes, count);
      const BinaryImage wantBits = binary[op].first(host, s, h);
      expect(std::equal(gotBits.begin(), gotBits.end(), wantBits.begin(), wantBits.end()), what + ": binary");
      GreyOptions gh, gg;
      gh.device = Device::CPU;
      gh.mode = gg.mode = static_cast<BorderMode>(op);
      grey[op].second(device, s, gg, floats);
      const std::vector<float> got = d.back(floats, count);
      const GreyImage want = grey[op].first(host, s, gh);
      expect(std::memcmp(got.data(), want.data(), want.size()) == 0, what + ": grey");
    }
    ++which;
  }
  bool refused = false;
  try
  {
    greyErosionOnDevice(host, elements[0], GreyOptions{}, floats);
  }
  catch (const std::invalid_argument&)
  {
    refused = true;
  }
  expect(refused, "device API: a host image is refused with std::invalid_argument");
}
#endif

// The flat elements the GPU filters with a kernel of registers
// (GreyRegisterKernel.cuh): the 3 x 3 x 3 box and the 3 x 3 square at every
// origin, the ball of radius 2 and the disk of radius 2 at a few origins,
// every border mode, on images whose sides are not multiples of the
// kernel's 32 x 32 tiles nor of its planes per block, 2D, one column wide,
// a strided view, float images of many ties of +0 (the kernel's own path)
// and of +0 / -0 (the first in raster order must survive under the ball;
// under the box a -0 takes scipy's passes, on the CPU), bytes, and a float
// image with NaN (the ball's then take the direct rule, the box's scipy's
// passes). The reference is the CPU on one thread; on the CPU the float
// erosion is also the naive rule, where it is scipy's (not under a box with
// a -0).
StructuringElement ballElement(int radius, bool flat2D, const int64_t origin[3])
{
  StructuringElement s;
  const int64_t side = 2 * radius + 1;
  s.dims[0] = s.dims[1] = side;
  s.dims[2] = flat2D ? 1 : side;
  for (int64_t z = 0; z < s.dims[2]; ++z)
    for (int64_t y = 0; y < side; ++y)
      for (int64_t x = 0; x < side; ++x)
      {
        const int64_t dz = flat2D ? 0 : z - radius, dy = y - radius, dx = x - radius;
        s.footprint.push_back(dx * dx + dy * dy + dz * dz <= radius * radius ? 1 : 0);
      }
  for (int a = 0; a < 3; ++a)
    s.origin[a] = a == 2 && flat2D ? 0 : origin[a];
  return s;
}

// The register kernels' elements, named: the 3 x 3 (x 3) box at every
// origin, the ball (disk) of radius 2 at random origins, and on a volume
// the one-plane elements too (a 3 x 3 square, a disk of radius 2): each
// plane filtered alone, as a batch of 2D images is (the command line's
// --batch runs a stack of images as one volume).
std::vector<std::pair<std::string, StructuringElement>> registerElements(std::mt19937_64& rng, bool flat)
{
  std::vector<std::pair<std::string, StructuringElement>> elements;
  for (int origin = 0; origin < (flat ? 9 : 27); ++origin)
  {
    const int64_t boxDims[3] = { 3, 3, flat ? 1 : 3 };
    StructuringElement s = StructuringElement::box(boxDims);
    s.origin[0] = origin % 3 - 1;
    s.origin[1] = (origin / 3) % 3 - 1;
    s.origin[2] = flat ? 0 : origin / 9 - 1;
    elements.emplace_back("3x3 box", s);
  }
  for (int k = 0; k < 6; ++k)
  {
    int64_t origin[3] = { 0, 0, 0 };
    if (k > 0)
      for (auto& o : origin)
        o = static_cast<int64_t>(rng() % 5) - 2;
    elements.emplace_back("ball 2", ballElement(2, flat, origin));
  }
  if (flat)
    return elements;
  for (int k = 0; k < 3; ++k)
  {
    const int64_t squareDims[3] = { 3, 3, 1 };
    StructuringElement square = StructuringElement::box(squareDims);
    square.origin[0] = static_cast<int64_t>(rng() % 3) - 1;
    square.origin[1] = static_cast<int64_t>(rng() % 3) - 1;
    elements.emplace_back("3x3 square on planes", square);
    int64_t origin[3] = { static_cast<int64_t>(rng() % 5) - 2, static_cast<int64_t>(rng() % 5) - 2, 0 };
    elements.emplace_back("disk 2 on planes", ballElement(2, true, origin));
  }
  return elements;
}

void checkRegisterShapes(std::mt19937_64& rng, bool gpu)
{
  const int64_t shapes[][3] = { { 70, 45, 43 }, { 33, 65, 1 }, { 1, 40, 20 }, { 5, 3, 130 } };
  for (const auto& n : shapes)
  {
    const size_t count = static_cast<size_t>(n[0] * n[1] * n[2]);
    std::vector<float> f(count), positive(count), strided(2 * count), withNaN(count);
    std::vector<uint8_t> bytes(count);
    for (size_t k = 0; k < count; ++k)
    {
      const int r = static_cast<int>(rng() % 6);
      f[k] = r == 0 ? -0.0f : (r == 1 ? 0.0f : static_cast<float>(r - 3));
      positive[k] = f[k] == 0.0f ? 0.0f : f[k];
      strided[2 * k] = positive[k];
      strided[2 * k + 1] = 99.0f;
      withNaN[k] = rng() % 50 == 0 ? std::numeric_limits<float>::quiet_NaN() : f[k];
      bytes[k] = static_cast<uint8_t>(rng() % 7);
    }
    const bool flat = n[2] == 1;
    const GridView gf = GridView::contiguous(f.data(), ScalarType::Float32, n[0], n[1], n[2]);
    const GridView gp = GridView::contiguous(positive.data(), ScalarType::Float32, n[0], n[1], n[2]);
    const GridView gn = GridView::contiguous(withNaN.data(), ScalarType::Float32, n[0], n[1], n[2]);
    const GridView gb = GridView::contiguous(bytes.data(), ScalarType::UInt8, n[0], n[1], n[2]);
    GridView gs = GridView::contiguous(strided.data(), ScalarType::Float32, n[0], n[1], n[2]);
    for (int a = 0; a < 3; ++a)
      gs.strides[a] *= 2;
    const std::string shape = std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" + std::to_string(n[2]);
    const auto elements = registerElements(rng, flat);
    for (const auto& [name, s] : elements)
      for (int mode = 0; mode < 5; ++mode)
      {
        GreyOptions a, b;
        a.mode = b.mode = static_cast<BorderMode>(mode);
        a.cval = b.cval = mode == 4 ? -0.0 : 3.25;
        a.device = Device::CPU;
        a.threads = 1;
        b.device = gpu ? Device::GPU : Device::CPU;
        b.threads = 4;
        const std::string what = shape + " " + name + " origin " + std::to_string(s.origin[0]) + "," +
          std::to_string(s.origin[1]) + "," + std::to_string(s.origin[2]) + " mode " + std::to_string(mode);
        const GreyImage want = greyErosion(gp, s, a);
        expect(greyErosion(gp, s, b) == want, what + ": float erosion");
        expect(greyErosion(gs, s, b) == want, what + ": strided float erosion");
        expect(greyDilation(gp, s, b) == greyDilation(gp, s, a), what + ": float dilation");
        const GreyImage signedZeros = greyErosion(gf, s, a);
        expect(greyErosion(gf, s, b) == signedZeros, what + ": float erosion, -0 and +0");
        expect(greyDilation(gf, s, b) == greyDilation(gf, s, a), what + ": float dilation, -0 and +0");
        if (!gpu)
        {
          // Under the box a -0 border (mode 4 here) is scipy's passes' too.
          const bool box = name == "3x3 box" || name == "3x3 square on planes";
          if (!box || mode != 4)
            expect(want == naiveGreyErosion(positive, n, s, a.mode, static_cast<float>(a.cval)),
              what + ": float erosion == the naive rule");
          if (!box)
            expect(signedZeros == naiveGreyErosion(f, n, s, a.mode, static_cast<float>(a.cval)),
              what + ": float erosion, -0 and +0 == the naive rule");
        }
        expect(greyErosion(gb, s, b) == greyErosion(gb, s, a), what + ": byte erosion");
        expect(greyDilation(gb, s, b) == greyDilation(gb, s, a), what + ": byte dilation");
        expect(greyErosion(gn, s, b) == greyErosion(gn, s, a), what + ": float erosion with NaN");
      }
  }
}

// The same elements for the binary operators, one iteration without a mask
// (on the GPU: the byte kernel, BinaryRegisterKernel.cuh, which needs rows
// of whole 4-voxel quads): every origin of the box, balls at random
// origins, the one-plane elements on volumes, both border values, several
// types (nonzero is true, -0 is not, NaN is), dense and sparse images; rows
// of 33 quads (a warp writes 30: for one-plane elements two tiles along x,
// the second mostly idle; for volumes, warps that run on past a row's
// phantom quad into the next rows, the phantom after the row or, for the
// origins whose centre lies left, before it), planes of more than one tile
// of rows, and columns of many planes.
// On the CPU, erosion is checked against the naive rule too; on the GPU,
// the device API on a view with padded rows (strides that are not the
// dims) gives the host API's bits.
template <typename T>
std::vector<T> binaryValues(std::mt19937_64& rng, size_t count, int percentTrue)
{
  std::vector<T> v(count);
  for (size_t k = 0; k < count; ++k)
  {
    const bool on = static_cast<int>(rng() % 100) < percentTrue;
    if constexpr (std::is_floating_point<T>::value)
    {
      const T nonzero = rng() % 9 == 0 ? std::numeric_limits<T>::quiet_NaN() : T(rng() % 5) - T(2.5);
      v[k] = on ? nonzero : (rng() % 2 ? T(-0.0) : T(0));
    }
    else
      v[k] = on ? static_cast<T>(1 + rng() % 200) : T(0);
  }
  return v;
}

void checkBinaryRegisterShapes(std::mt19937_64& rng, bool gpu)
{
  const int64_t shapes[][3] = { { 132, 37, 21 }, { 64, 70, 1 }, { 8, 5, 40 } };
  using BinaryOp = BinaryImage (*)(const GridView&, const StructuringElement&, const BinaryOptions&);
  const std::pair<const char*, BinaryOp> operators[] = { { "erosion", binaryErosion },
    { "dilation", binaryDilation }, { "opening", binaryOpening }, { "closing", binaryClosing } };
  for (const auto& n : shapes)
  {
    const bool flat = n[2] == 1;
    const size_t count = static_cast<size_t>(n[0] * n[1] * n[2]);
    const std::string shape = std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" + std::to_string(n[2]);
    const auto elements = registerElements(rng, flat);
    const std::vector<uint8_t> dense = binaryValues<uint8_t>(rng, count, 90);
    const std::vector<uint8_t> sparse = binaryValues<uint8_t>(rng, count, 8);
    const std::vector<int16_t> shorts = binaryValues<int16_t>(rng, count, 80);
    const std::vector<float> floats = binaryValues<float>(rng, count, 85);
    const std::vector<double> doubles = binaryValues<double>(rng, count, 85);
    const std::pair<std::string, GridView> images[] = {
      { "dense bytes", GridView::contiguous(dense.data(), ScalarType::UInt8, n[0], n[1], n[2]) },
      { "sparse bytes", GridView::contiguous(sparse.data(), ScalarType::UInt8, n[0], n[1], n[2]) },
      { "int16", GridView::contiguous(shorts.data(), ScalarType::Int16, n[0], n[1], n[2]) },
      { "float", GridView::contiguous(floats.data(), ScalarType::Float32, n[0], n[1], n[2]) },
      { "double", GridView::contiguous(doubles.data(), ScalarType::Float64, n[0], n[1], n[2]) } };
    for (const auto& [name, s] : elements)
      for (bool border : { false, true })
      {
        const BinaryOptions a = reference(1, border, nullptr);
        const BinaryOptions b = underTest(a, gpu, 4);
        const std::string element = shape + " " + name + " origin " + std::to_string(s.origin[0]) + "," +
          std::to_string(s.origin[1]) + "," + std::to_string(s.origin[2]) + " border " + std::to_string(border);
        for (const auto& [kind, image] : images)
          for (const auto& [op, run] : operators)
            expect(run(image, s, b) == run(image, s, a), element + " " + kind + ": binary " + op);
        if (!gpu)
          expect(binaryErosion(images[0].second, s, b) == naiveBinaryErosion(dense, n, s, border),
            element + ": binary erosion == the naive rule");
      }
#ifdef TOPOVOX_TEST_CUDA
    if (gpu)
    {
      // Rows padded by 4 voxels and planes by one row, on the device.
      const int64_t rowStride = n[0] + 4, planeStride = rowStride * (n[1] + 1);
      std::vector<float> padded(static_cast<size_t>(planeStride * n[2]), 7.0f);
      for (int64_t z = 0; z < n[2]; ++z)
        for (int64_t y = 0; y < n[1]; ++y)
          for (int64_t x = 0; x < n[0]; ++x)
            padded[static_cast<size_t>(x + rowStride * y + planeStride * z)] =
              floats[static_cast<size_t>(x + n[0] * (y + n[1] * z))];
      OnDevice d;
      GridView view = GridView::contiguous(d.copy(padded), ScalarType::Float32, n[0], n[1], n[2], MemorySpace::Device);
      view.strides[1] = rowStride;
      view.strides[2] = planeStride;
      uint8_t* out = d.make<uint8_t>(count);
      for (size_t k = 0; k < elements.size(); k += 5)
      {
        const StructuringElement& s = elements[k].second;
        BinaryOptions g;
        g.borderValue = k % 2 == 1;
        binaryOpeningOnDevice(view, s, g, out);
        const std::vector<uint8_t> got = d.back(out, count);
        const BinaryImage want = binaryOpening(images[3].second, s, reference(1, g.borderValue, nullptr));
        expect(std::equal(got.begin(), got.end(), want.begin(), want.end()),
          shape + " " + elements[k].first + ": device API on padded rows, binary opening");
      }
    }
#endif
  }
}
} // namespace

int main(int argc, char** argv)
{
  bool gpu = false;
  if (!kernel_check::deviceFromArguments(argc, argv, gpu))
    return 77;
  std::mt19937_64 rng(21);
  // 200: rows of 7 words, the last padded (the GPU's interior words and
  // its border words both occur); 150 planes: the GPU's grey box kernel
  // marches 64 planes per block.
  const int64_t shapes[][3] = { { 40, 1, 1 }, { 19, 23, 1 }, { 13, 11, 9 }, { 64, 48, 33 }, { 200, 9, 7 },
    { 9, 7, 150 } };
  for (const auto& n : shapes)
  {
    const size_t count = static_cast<size_t>(n[0] * n[1] * n[2]);
    std::vector<float> f(count);
    std::vector<int16_t> i16(count);
    std::vector<uint8_t> bits(count), mask(count);
    for (size_t k = 0; k < count; ++k)
    {
      f[k] = static_cast<float>(rng() % 1000) / 7.0f;
      i16[k] = static_cast<int16_t>(rng() % 9);
      bits[k] = rng() % 2;
      mask[k] = rng() % 4 != 0;
    }
    const std::string shape = std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" + std::to_string(n[2]);
    const GridView gf = GridView::contiguous(f.data(), ScalarType::Float32, n[0], n[1], n[2]);
    const GridView gi = GridView::contiguous(i16.data(), ScalarType::Int16, n[0], n[1], n[2]);
    const GridView gb = GridView::contiguous(bits.data(), ScalarType::UInt8, n[0], n[1], n[2]);
    for (int trial = 0; trial < 3; ++trial)
    {
      StructuringElement s = randomElement(rng, trial != 2);
      for (int a = 0; a < 3; ++a)
        if (n[a] == 1)
          s.dims[a] = 1, s.origin[a] = 0;
      // The shape changed on the image's flat axes: a random footprint anew.
      s.footprint.clear();
      // Trial 1: a full box (the GPU's separable grey kernel).
      for (int64_t k = 0; k < s.size(); ++k)
        s.footprint.push_back(k == 0 || trial == 1 || rng() % 3 ? 1 : 0);
      if (!s.values.empty())
      {
        s.values.clear();
        for (int64_t k = 0; k < s.size(); ++k)
          s.values.push_back(static_cast<double>(static_cast<int>(rng() % 5) - 2) + 0.5);
      }
      for (int mode = 0; mode < 5; ++mode)
      {
        GreyOptions a, b;
        a.mode = b.mode = static_cast<BorderMode>(mode);
        a.cval = b.cval = 3.25;
        a.device = Device::CPU;
        a.threads = 1;
        b.device = gpu ? Device::GPU : Device::CPU;
        b.threads = 4;
        const std::string what = shape + " mode " + std::to_string(mode) + " trial " + std::to_string(trial);
        expect(greyErosion(gf, s, a) == greyErosion(gf, s, b), what + ": float grey erosion");
        if (!gpu && s.values.empty())
          expect(greyErosion(gf, s, b) == naiveGreyErosion(f, n, s, a.mode, static_cast<float>(a.cval)),
            what + ": float grey erosion == the naive rule");
        expect(greyDilation(gf, s, a) == greyDilation(gf, s, b), what + ": float grey dilation");
        StructuringElement flat = s;
        flat.values.clear();
        expect(morphologicalLaplace(gi, flat, a) == morphologicalLaplace(gi, flat, b), what + ": int16 laplace");
        expect(blackTophat(gi, flat, a) == blackTophat(gi, flat, b), what + ": int16 black tophat");
        if (trial == 1)
        {
          // A full box is filtered axis by axis; the same box with values
          // of 0 (not flat: the direct rule) gives the same bits.
          StructuringElement zeros = flat;
          zeros.values.assign(static_cast<size_t>(flat.size()), 0.0);
          expect(greyErosion(gf, flat, b) == greyErosion(gf, zeros, a), what + ": float box axis by axis");
          expect(greyDilation(gi, flat, b) == greyDilation(gi, zeros, a), what + ": int16 box axis by axis");
        }
      }
      StructuringElement bs = s;
      bs.values.clear();
      for (int iterations : { 1, 3, -1 })
        for (bool border : { false, true })
        {
          const BinaryOptions a = reference(iterations, border, iterations == 3 ? mask.data() : nullptr);
          const BinaryOptions b = underTest(a, gpu, 4);
          const std::string what = shape + " iterations " + std::to_string(iterations) + " border " +
            std::to_string(border) + " trial " + std::to_string(trial);
          expect(binaryErosion(gb, bs, a) == binaryErosion(gb, bs, b), what + ": binary erosion");
          expect(binaryDilation(gb, bs, a) == binaryDilation(gb, bs, b), what + ": binary dilation");
          if (!gpu && iterations == 1 && !a.mask)
            expect(binaryErosion(gb, bs, b) == naiveBinaryErosion(bits, n, bs, border),
              what + ": binary erosion == the naive rule");
          if (!gpu && iterations == 1 && !a.mask)
          {
            // Duality: dilation(x) == not erosion(not x) by the reflected
            // element, the border inverted.
            std::vector<uint8_t> inverse(bits.size());
            for (size_t k = 0; k < bits.size(); ++k)
              inverse[k] = !bits[k];
            StructuringElement r = bs;
            for (int64_t z = 0; z < bs.dims[2]; ++z)
              for (int64_t y = 0; y < bs.dims[1]; ++y)
                for (int64_t x = 0; x < bs.dims[0]; ++x)
                  r.footprint[static_cast<size_t>(x + bs.dims[0] * (y + bs.dims[1] * z))] =
                    bs.footprint[static_cast<size_t>((bs.dims[0] - 1 - x) +
                      bs.dims[0] * ((bs.dims[1] - 1 - y) + bs.dims[1] * (bs.dims[2] - 1 - z)))];
            for (int ax = 0; ax < 3; ++ax)
              r.origin[ax] = -bs.origin[ax] - (bs.dims[ax] % 2 == 0 ? 1 : 0);
            BinaryOptions c = a;
            c.borderValue = !border;
            const BinaryImage eroded = binaryErosion(
              GridView::contiguous(inverse.data(), ScalarType::UInt8, n[0], n[1], n[2]), r, c);
            BinaryImage dual(eroded.size());
            for (size_t k = 0; k < eroded.size(); ++k)
              dual[k] = !eroded[k];
            expect(binaryDilation(gb, bs, a) == dual, what + ": dilation is erosion's dual");
          }
        }
      BinaryOptions a, b;
      a.device = Device::CPU;
      b.device = gpu ? Device::GPU : Device::CPU;
      expect(binaryFillHoles(gb, generateBinaryStructure(3, 1), 1) ==
          binaryFillHoles(gb, generateBinaryStructure(3, 1), 4), shape + ": fill holes");
    }
  }
  checkWideRows(rng, gpu);
  checkRegisterShapes(rng, gpu);
  checkBinaryRegisterShapes(rng, gpu);
#ifdef TOPOVOX_TEST_CUDA
  if (gpu)
    checkDeviceApi(rng);
#endif
  return kernel_check::finish();
}
