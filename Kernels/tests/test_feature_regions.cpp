// test_feature_regions.cpp - feature regions against a brute force of their
// definition (FeatureRegions.h), on random images, V and T, sublevel and
// superlevel, 1D to 3D:
//  * distinct values: for every pair of dimension 0 its region is found by
//    a flood fill of the voxels below its death value from its birth voxel
//    (the construction's connectivity), for every top-dimensional pair by a
//    flood fill of the voxels above its birth value from its death voxel
//    (the dual connectivity; a fill that reaches the border is not
//    enclosed); each voxel's label must be the smallest such region holding
//    it, and every selected pair must have its region;
//  * ties (small integers): every region holds its pair's voxel, lies on
//    the right side of the pair's values, and every dimension-0 pair is
//    matched;
//  * with NaN voxels (absent from the complex: below nothing, above
//    everything), the same, and the essential voids they enclose have no
//    region.
#include "topovox/FeatureRegions.h"
#include "topovox/Persistence.h"

#include "KernelCheck.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace topovox;
using kernel_check::expect;

namespace
{
struct Image
{
  int64_t n[3];
  std::vector<double> v;
  int64_t size() const { return n[0] * n[1] * n[2]; }
  int64_t at(int64_t x, int64_t y, int64_t z) const { return x + n[0] * (y + n[1] * z); }
};

// The voxels reachable from `seed` through voxels where inside(v) holds,
// face (full = false) or block (full = true) neighbours; sets `border` when
// the fill touches the image's border.
std::vector<char> flood(const Image& im, int64_t seed, bool full, const std::vector<char>& inside, bool& border)
{
  std::vector<char> seen(static_cast<size_t>(im.size()), 0);
  std::vector<int64_t> stack{ seed };
  seen[static_cast<size_t>(seed)] = 1;
  border = false;
  while (!stack.empty())
  {
    const int64_t v = stack.back();
    stack.pop_back();
    const int64_t c[3] = { v % im.n[0], (v / im.n[0]) % im.n[1], v / (im.n[0] * im.n[1]) };
    for (int a = 0; a < 3; ++a)
      border = border || (im.n[a] > 1 && (c[a] == 0 || c[a] == im.n[a] - 1));
    for (int64_t dz = -1; dz <= 1; ++dz)
      for (int64_t dy = -1; dy <= 1; ++dy)
        for (int64_t dx = -1; dx <= 1; ++dx)
        {
          const int steps = (dx != 0) + (dy != 0) + (dz != 0);
          if (steps == 0 || (!full && steps > 1))
            continue;
          const int64_t q[3] = { c[0] + dx, c[1] + dy, c[2] + dz };
          if (q[0] < 0 || q[1] < 0 || q[2] < 0 || q[0] >= im.n[0] || q[1] >= im.n[1] || q[2] >= im.n[2])
            continue;
          const int64_t u = im.at(q[0], q[1], q[2]);
          if (!seen[static_cast<size_t>(u)] && inside[static_cast<size_t>(u)])
          {
            seen[static_cast<size_t>(u)] = 1;
            stack.push_back(u);
          }
        }
  }
  return seen;
}

int64_t linear(const Image& im, const int64_t c[3])
{
  return im.at(c[0], c[1], c[2]);
}
} // namespace

int main()
{
  std::mt19937_64 rng(17);
  const std::vector<std::vector<int64_t>> shapes = { { 30, 1, 1 }, { 9, 7, 1 }, { 16, 13, 1 }, { 5, 6, 4 },
    { 9, 8, 7 }, { 1, 12, 11 } };
  for (const auto& shape : shapes)
    for (int ties = 0; ties < 2; ++ties)
      for (bool withNaN : { false, true })
      for (Construction c : { Construction::V, Construction::T })
        for (Filtration f : { Filtration::Sublevel, Filtration::Superlevel })
        {
          Image im{ { shape[0], shape[1], shape[2] }, {} };
          im.v.resize(static_cast<size_t>(im.size()));
          for (double& x : im.v)
            x = ties ? static_cast<double>(rng() % 4) : std::ldexp(static_cast<double>(rng() >> 11), -53);
          if (withNaN)
            for (double& x : im.v)
              if (rng() % 12 == 0)
                x = std::nan(""); // absent from the complex
          const GridView g = GridView::contiguous(im.v.data(), ScalarType::Float64, im.n[0], im.n[1], im.n[2]);
          PersistenceOptions po;
          po.construction = c;
          po.filtration = f;
          const PersistenceDiagram d = computePersistence(g, po);
          FeatureRegionOptions ro;
          ro.construction = c;
          ro.filtration = f;
          ro.minPersistence = ties ? 0.0 : 0.05;
          const FeatureRegions r = featureRegions(g, d, ro);
          const std::string what = std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + "x" +
            std::to_string(shape[2]) + (c == Construction::V ? " V" : " T") +
            (f == Filtration::Sublevel ? " sub" : " super") + (ties ? " ties" : "") + (withNaN ? " NaN" : "");
          const int dim = (shape[0] > 1) + (shape[1] > 1) + (shape[2] > 1);
          const int top = dim >= 2 ? dim - 1 : -1;
          const double sign = f == Filtration::Sublevel ? 1.0 : -1.0;
          // One kind asked for: that kind's labels alone, the other's empty.
          for (int kind = 0; kind < 2; ++kind)
          {
            FeatureRegionOptions one = ro;
            one.components = kind == 0;
            one.enclosed = kind == 1;
            const FeatureRegions r1 = featureRegions(g, d, one);
            expect(r1.labels[kind] == r.labels[kind] && r1.labels[1 - kind].empty(),
              what + (kind ? ": enclosed alone" : ": components alone"));
          }
          // Brute force: the regions of the selected pairs, innermost wins.
          std::vector<int32_t> expected[2];
          std::vector<int64_t> best[2];
          for (int k = 0; k < 2; ++k)
          {
            expected[k].assign(static_cast<size_t>(im.size()), -1);
            best[k].assign(static_cast<size_t>(im.size()), INT64_MAX);
          }
          bool regionsHoldTheirVoxel = true, regionsOnTheRightSide = true, dim0Matched = true;
          int64_t essentialVoids = 0;
          for (size_t i = 0; i < d.pairs.size(); ++i)
          {
            const PersistencePair& p = d.pairs[i];
            const bool selected = p.essential || p.persistence() > ro.minPersistence;
            const int kind = p.dimension == 0 ? 0 : (p.dimension == top ? 1 : -1);
            if (kind < 0 || !selected)
              continue;
            if (kind == 1 && p.essential)
            {
              // A hole around NaN voxels never fills: no death voxel, no region.
              ++essentialVoids;
              expect(r.voxels[i] < 0, what + ": an essential void has no region");
              continue;
            }
            const std::vector<int32_t>& labels = r.labels[kind];
            int64_t count = 0;
            for (size_t v = 0; v < labels.size(); ++v)
              if (labels[v] == static_cast<int32_t>(i))
              {
                ++count;
                const double x = sign * im.v[v];
                if (kind == 0 && !p.essential)
                  regionsOnTheRightSide = regionsOnTheRightSide && x <= sign * p.death;
                if (kind == 1)
                  regionsOnTheRightSide = regionsOnTheRightSide && x >= sign * p.birth;
              }
            if (kind == 0)
              dim0Matched = dim0Matched && r.voxels[i] > 0;
            if (r.voxels[i] > 0)
            {
              const int64_t* seedVoxel = kind == 0 ? p.birthVoxel : p.deathVoxel;
              const int32_t seedLabel = labels[static_cast<size_t>(linear(im, seedVoxel))];
              // The seed lies in this region or in one nested inside it.
              regionsHoldTheirVoxel = regionsHoldTheirVoxel && seedLabel >= 0 &&
                r.voxels[static_cast<size_t>(seedLabel)] <= r.voxels[i];
            }
            if (ties)
              continue;
            std::vector<char> inside(static_cast<size_t>(im.size()));
            for (size_t v = 0; v < inside.size(); ++v)
              inside[v] = kind == 0 ? !std::isnan(im.v[v]) && (p.essential || sign * im.v[v] < sign * p.death)
                                    : std::isnan(im.v[v]) || sign * im.v[v] > sign * p.birth;
            bool border = false;
            const bool full = kind == 0 ? c == Construction::T : c == Construction::V;
            const int64_t seed = linear(im, kind == 0 ? p.birthVoxel : p.deathVoxel);
            const std::vector<char> region = flood(im, seed, full, inside, border);
            int64_t size = 0;
            for (char s : region)
              size += s;
            expect(kind == 0 || !border, what + ": void " + std::to_string(i) + " is enclosed");
            expect(r.voxels[i] == size, what + ": pair " + std::to_string(i) + " region size " +
                std::to_string(r.voxels[i]) + ", brute force " + std::to_string(size));
            for (size_t v = 0; v < region.size(); ++v)
              if (region[v] && size < best[kind][v])
              {
                best[kind][v] = size;
                expected[kind][v] = static_cast<int32_t>(i);
              }
          }
          // Without the essential classes: nothing carries their label, the
          // finite pairs keep their regions.
          FeatureRegionOptions finiteOnly = ro;
          finiteOnly.includeEssential = false;
          const FeatureRegions rf = featureRegions(g, d, finiteOnly);
          bool essentialUnlabelled = true, finiteKept = true;
          for (int kind = 0; kind < 2; ++kind)
            for (size_t v = 0; v < rf.labels[kind].size(); ++v)
            {
              const int32_t l = rf.labels[kind][v];
              essentialUnlabelled = essentialUnlabelled && (l < 0 || !d.pairs[static_cast<size_t>(l)].essential);
              if (l >= 0)
                finiteKept = finiteKept && rf.voxels[static_cast<size_t>(l)] == r.voxels[static_cast<size_t>(l)];
            }
          expect(essentialUnlabelled, what + ": includeEssential off leaves the essential classes out");
          expect(finiteKept, what + ": includeEssential off keeps the finite regions");
          expect(regionsHoldTheirVoxel, what + ": regions hold their pair's voxel");
          expect(regionsOnTheRightSide, what + ": regions on the right side of the pair's values");
          expect(dim0Matched, what + ": every dimension-0 pair has a region");
          if (!ties)
          {
            expect(r.unmatched == essentialVoids, what + ": every selected pair matched but essential voids");
            expect(r.labels[0] == expected[0], what + ": component labels equal the brute force");
            if (top > 0)
              expect(r.labels[1] == expected[1], what + ": enclosed-region labels equal the brute force");
          }
        }
  return kernel_check::finish();
}
