// test_morphology.cpp - the morphology kernels (scipy.ndimage's semantics
// are checked bit for bit against scipy itself in Testing/cli):
//  * --device cpu: the result does not depend on the number of threads, and
//    dilation is erosion's dual (dilation(x, s) == not erosion(not x,
//    reflected s) with the border inverted), checked on random images;
//  * --device gpu: the GPU gives the CPU's bits, for every operator, border
//    mode, element (flat and not) and type, masks and iterations until
//    stable (exit 77 without a GPU).
#include "topovox/Morphology.h"

#include "KernelCheck.h"

#include <cstring>
#include <random>
#include <string>
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
} // namespace

int main(int argc, char** argv)
{
  bool gpu = false;
  if (!kernel_check::deviceFromArguments(argc, argv, gpu))
    return 77;
  std::mt19937_64 rng(21);
  const int64_t shapes[][3] = { { 40, 1, 1 }, { 19, 23, 1 }, { 13, 11, 9 }, { 64, 48, 33 } };
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
      for (int64_t k = 0; k < s.size(); ++k)
        s.footprint.push_back(k == 0 || rng() % 3 ? 1 : 0);
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
        expect(greyDilation(gf, s, a) == greyDilation(gf, s, b), what + ": float grey dilation");
        StructuringElement flat = s;
        flat.values.clear();
        expect(morphologicalLaplace(gi, flat, a) == morphologicalLaplace(gi, flat, b), what + ": int16 laplace");
        expect(blackTophat(gi, flat, a) == blackTophat(gi, flat, b), what + ": int16 black tophat");
      }
      StructuringElement bs = s;
      bs.values.clear();
      for (int iterations : { 1, 3, -1 })
        for (bool border : { false, true })
        {
          BinaryOptions a, b;
          a.iterations = b.iterations = iterations;
          a.borderValue = b.borderValue = border;
          a.mask = b.mask = iterations == 3 ? mask.data() : nullptr;
          a.device = Device::CPU;
          a.threads = 1;
          b.device = gpu ? Device::GPU : Device::CPU;
          b.threads = 4;
          const std::string what = shape + " iterations " + std::to_string(iterations) + " border " +
            std::to_string(border) + " trial " + std::to_string(trial);
          expect(binaryErosion(gb, bs, a) == binaryErosion(gb, bs, b), what + ": binary erosion");
          expect(binaryDilation(gb, bs, a) == binaryDilation(gb, bs, b), what + ": binary dilation");
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
  return kernel_check::finish();
}
