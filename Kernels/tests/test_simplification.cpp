// test_simplification.cpp - persistence-based simplification
// (Simplification.h) checked with the persistence engine, on random images
// (distinct values and ties), V and T, sublevel and superlevel, 1D to 3D:
//  * components only: the simplified field's dimension-0 pairs are the
//    input's that persist longer than the threshold (as (birth, death)
//    multisets), essential classes included;
//  * both steps: the top-dimensional pairs are those of the components-only
//    field that persist longer than the threshold;
//  * every value of the result is a value of the input; a threshold below
//    every persistence changes nothing.
#include "topovox/Persistence.h"
#include "topovox/Simplification.h"

#include "KernelCheck.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

using namespace topovox;
using kernel_check::expect;

namespace
{
using Pairs = std::multiset<std::tuple<double, double>>;

Pairs pairsOf(const PersistenceDiagram& d, int dimension, double above)
{
  Pairs out;
  for (const auto& p : d.pairs)
    if (p.dimension == dimension && (p.essential || p.persistence() > above))
      out.insert({ p.birth, p.essential ? INFINITY : p.death });
  return out;
}

std::vector<double> asDoubles(const std::vector<unsigned char>& bytes)
{
  std::vector<double> v(bytes.size() / sizeof(double));
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}
} // namespace

int main()
{
  std::mt19937_64 rng(29);
  const std::vector<std::vector<int64_t>> shapes = { { 40, 1, 1 }, { 13, 11, 1 }, { 17, 19, 1 }, { 6, 7, 5 },
    { 10, 9, 8 } };
  for (const auto& shape : shapes)
    for (int ties = 0; ties < 2; ++ties)
      for (Construction c : { Construction::V, Construction::T })
        for (Filtration f : { Filtration::Sublevel, Filtration::Superlevel })
        {
          const size_t count = static_cast<size_t>(shape[0] * shape[1] * shape[2]);
          std::vector<double> image(count);
          for (double& x : image)
            x = ties ? static_cast<double>(rng() % 6) : std::ldexp(static_cast<double>(rng() >> 11), -53);
          const GridView g = GridView::contiguous(image.data(), ScalarType::Float64, shape[0], shape[1], shape[2]);
          PersistenceOptions po;
          po.construction = c;
          po.filtration = f;
          const PersistenceDiagram before = computePersistence(g, po);
          const int dim = (shape[0] > 1) + (shape[1] > 1) + (shape[2] > 1);
          const int top = dim >= 2 ? dim - 1 : -1;
          const std::string what = std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + "x" +
            std::to_string(shape[2]) + (c == Construction::V ? " V" : " T") +
            (f == Filtration::Sublevel ? " sub" : " super") + (ties ? " ties" : "");
          for (double threshold : { ties ? 1.0 : 0.1, ties ? 2.0 : 0.3 })
          {
            const std::string at = what + " threshold " + std::to_string(threshold);
            SimplificationOptions so;
            so.construction = c;
            so.filtration = f;
            so.maxPersistence = threshold;
            so.enclosed = false;
            const std::vector<double> step1 = asDoubles(simplifyPersistence(g, so));
            const GridView g1 = GridView::contiguous(step1.data(), ScalarType::Float64, shape[0], shape[1], shape[2]);
            const PersistenceDiagram after1 = computePersistence(g1, po);
            expect(pairsOf(after1, 0, -1.0) == pairsOf(before, 0, threshold),
              at + ": components are the input's above the threshold");
            so.enclosed = true;
            const std::vector<double> both = asDoubles(simplifyPersistence(g, so));
            const GridView g2 = GridView::contiguous(both.data(), ScalarType::Float64, shape[0], shape[1], shape[2]);
            const PersistenceDiagram after2 = computePersistence(g2, po);
            if (top > 0)
              expect(pairsOf(after2, top, -1.0) == pairsOf(after1, top, threshold),
                at + ": the top dimension is step 1's above the threshold");
            const std::set<double> input(image.begin(), image.end());
            bool valuesOfInput = true;
            for (double v : both)
              valuesOfInput = valuesOfInput && input.count(v);
            expect(valuesOfInput, at + ": every value is a value of the input");
          }
          SimplificationOptions none;
          none.construction = c;
          none.filtration = f;
          none.maxPersistence = 0.0;
          expect(asDoubles(simplifyPersistence(g, none)) == image, what + ": threshold 0 changes nothing");
        }
  return kernel_check::finish();
}
