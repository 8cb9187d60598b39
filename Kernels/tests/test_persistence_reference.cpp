// test_persistence_reference.cpp - the reference persistence engine against
// an independent oracle in this library: the Euler characteristic curve
// (counted cell by cell, test_euler_curve.cpp checks it against a brute-force
// count). At every threshold t, sum_k (-1)^k beta_k(t) == chi(t), where
// beta_k(t) counts the k-dimensional pairs alive at t (birth <= t < death).
// Also: every reported voxel holds the reported value, no pair has zero
// persistence, beta_0 at the end is the number of components, options filter
// as documented, and bad input is refused. (cripser and GUDHI, the external
// oracles, are checked in Testing/cli.)
#include "topovox/EulerCurve.h"
#include "topovox/Persistence.h"
#include "topovox/PersistencePieces.h"

#include "CriticalCellLimitRun.h"
#include "KernelCheck.h"
#include "RandomValues.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace topovox;

namespace
{
using kernel_check::expect;

// Runs an engine; an exception is a failed check, not the end of the test.
template <typename Run>
PersistenceDiagram attempt(const std::string& what, Run run)
{
  try
  {
    return run();
  }
  catch (const std::exception& e)
  {
    expect(false, what + ": threw " + e.what());
    PersistenceDiagram failed;
    failed.pairs.resize(1);
    failed.pairs[0].dimension = -1; // never equal to a real diagram
    return failed;
  }
}

bool samePairs(const PersistenceDiagram& m, const PersistenceDiagram& d)
{
  bool same = m.pairs.size() == d.pairs.size();
  for (size_t k = 0; same && k < d.pairs.size(); ++k)
    same = m.pairs[k].dimension == d.pairs[k].dimension && m.pairs[k].birth == d.pairs[k].birth &&
      m.pairs[k].death == d.pairs[k].death && m.pairs[k].essential == d.pairs[k].essential;
  return same;
}

// The image as MPI ranks hold it: pieces given by voxel extents sharing
// their boundary planes, each copied into its own array with the voxels its
// closure needs and told every cut plane; summaries and boundaries travel as
// bytes.
template <typename T>
PersistenceDiagram piecewise(const std::vector<T>& v, const GridView& g, const PersistenceOptions& po,
  const std::vector<std::array<int64_t, 6>>& extents)
{
  std::vector<PieceRegion> regions;
  for (const auto& e : extents)
  {
    const int64_t lo[3] = { e[0], e[2], e[4] }, hi[3] = { e[1], e[3], e[5] };
    regions.push_back(PieceRegion::fromVoxelExtent(g.dims, lo, hi, po.construction));
  }
  for (PieceRegion& r : regions)
    for (const PieceRegion& other : regions)
      r.addCutsOf(other);
  std::vector<std::vector<double>> arrays;
  std::vector<MorsePiece> pieces;
  MorsePairing pairing(g.dims, po);
  for (PieceRegion region : regions)
  {
    int64_t need[2][3];
    region.requiredVoxels(po.construction, need[0], need[1]);
    std::vector<double> copy;
    for (int64_t z = need[0][2]; z <= need[1][2]; ++z)
      for (int64_t y = need[0][1]; y <= need[1][1]; ++y)
        for (int64_t x = need[0][0]; x <= need[1][0]; ++x)
          copy.push_back(static_cast<double>(v[static_cast<size_t>(x + g.dims[0] * (y + g.dims[1] * z))]));
    for (int a = 0; a < 3; ++a)
      region.origin[a] = need[0][a];
    arrays.push_back(std::move(copy));
    const GridView view = GridView::contiguous(arrays.back().data(), ScalarType::Float64,
      need[1][0] - need[0][0] + 1, need[1][1] - need[0][1] + 1, need[1][2] - need[0][2] + 1);
    pieces.emplace_back(view, region, po);
    const std::vector<uint8_t> bytes = pieces.back().summary().toBytes();
    pairing.add(MorsePieceSummary::fromBytes(bytes.data(), bytes.size()));
  }
  const std::vector<int64_t> need = pairing.pairByUnionFind();
  for (const MorsePiece& p : pieces)
    pairing.addBoundaries(p.boundaries(need));
  return pairing.finish();
}

// Slabs two voxels thick along the last spanned axis.
std::vector<std::array<int64_t, 6>> slabs(const GridView& g)
{
  int axis = 0;
  for (int a = 0; a < 3; ++a)
    if (g.dims[a] > 1)
      axis = a;
  std::vector<std::array<int64_t, 6>> out;
  for (int64_t lo = 0; lo == 0 || lo < g.dims[axis] - 1; lo += 2)
  {
    std::array<int64_t, 6> e = { 0, g.dims[0] - 1, 0, g.dims[1] - 1, 0, g.dims[2] - 1 };
    e[2 * axis] = lo;
    e[2 * axis + 1] = std::min(lo + 2, g.dims[axis] - 1);
    out.push_back(e);
  }
  return out;
}

// Pieces that do not form a grid, as VTK's block splits make them: the
// lower half along the last axis whole, the upper half cut in two along the
// one before (T-junctions, where one piece's boundary crosses another).
std::vector<std::array<int64_t, 6>> junction(const GridView& g)
{
  int axes[3], n = 0;
  for (int a = 0; a < 3; ++a)
    if (g.dims[a] > 2)
      axes[n++] = a;
  const std::array<int64_t, 6> whole = { 0, g.dims[0] - 1, 0, g.dims[1] - 1, 0, g.dims[2] - 1 };
  if (n < 2)
    return { whole };
  const int outer = axes[n - 1], inner = axes[n - 2];
  const int64_t m = (g.dims[outer] - 1) / 2, k = (g.dims[inner] - 1) / 2;
  std::array<int64_t, 6> a = whole, b = whole, c = whole;
  a[2 * outer + 1] = m;
  b[2 * outer] = c[2 * outer] = m;
  b[2 * inner + 1] = k;
  c[2 * inner] = k;
  return { a, b, c };
}

template <typename T>
void checkImage(const std::string& name, const std::vector<T>& v, ScalarType type, int64_t nx,
  int64_t ny, int64_t nz)
{
  const GridView g = GridView::contiguous(v.data(), type, nx, ny, nz);
  for (Construction c : { Construction::V, Construction::T })
    for (Filtration f : { Filtration::Sublevel, Filtration::Superlevel })
    {
      const bool super = f == Filtration::Superlevel;
      const std::string what = name + " " + constructionName(c) + " " + filtrationName(f);
      PersistenceOptions po;
      po.construction = c;
      po.filtration = f;
      const PersistenceDiagram d = computePersistenceReference(g, po);
      // The Morse engine must give the same multiset of pairs (both engines
      // sort pairs the same way), and voxels holding the reported values.
      const PersistenceDiagram m = computePersistence(g, po);
      bool same = m.pairs.size() == d.pairs.size();
      for (size_t k = 0; same && k < d.pairs.size(); ++k)
        same = m.pairs[k].dimension == d.pairs[k].dimension &&
          m.pairs[k].birth == d.pairs[k].birth && m.pairs[k].death == d.pairs[k].death &&
          m.pairs[k].essential == d.pairs[k].essential;
      if (!same)
      {
        std::printf("  %s: reference %zu pairs, Morse %zu pairs\n", what.c_str(), d.pairs.size(),
          m.pairs.size());
        for (size_t k = 0; k < std::max(d.pairs.size(), m.pairs.size()) && k < 12; ++k)
        {
          if (k < d.pairs.size())
            std::printf("    ref  %d %g %g\n", d.pairs[k].dimension, d.pairs[k].birth, d.pairs[k].death);
          if (k < m.pairs.size())
            std::printf("    mrs  %d %g %g\n", m.pairs[k].dimension, m.pairs[k].birth, m.pairs[k].death);
        }
      }
      expect(same, what + ": Morse engine equals the reference engine");
      for (const auto& p : m.pairs)
      {
        const double b = static_cast<double>(v[p.birthVoxel[0] + nx * (p.birthVoxel[1] + ny * p.birthVoxel[2])]);
        const double e = p.essential ? p.death
                                     : static_cast<double>(v[p.deathVoxel[0] + nx * (p.deathVoxel[1] + ny * p.deathVoxel[2])]);
        same = same && b == p.birth && e == p.death;
      }
      expect(same, what + ": Morse engine voxels hold the values");
      // The stratified block decomposition (blocks of 1, 2, 3 voxels: every
      // cell near a cut plane) and pieces exchanged as bytes, as MPI ranks
      // exchange them, give the same diagram.
      for (int64_t block : { 1, 2, 3 })
      {
        PersistenceOptions bo = po;
        bo.blockSize = block;
        const std::string how = what + ": blocks of " + std::to_string(block);
        expect(samePairs(attempt(how, [&] { return computePersistence(g, bo); }), d), how);
      }
      expect(samePairs(attempt(what, [&] { return piecewise(v, g, po, slabs(g)); }), d),
        what + ": slab pieces through bytes");
      expect(samePairs(attempt(what, [&] { return piecewise(v, g, po, junction(g)); }), d),
        what + ": pieces with T-junctions");
      EulerCurveOptions eo;
      eo.construction = c;
      eo.filtration = f;
      eo.thresholdMode = ThresholdMode::Exact;
      eo.device = Device::CPU;
      const EulerCurve curve = computeEulerCurve(g, eo);
      same = true;
      for (size_t j = 0; j < curve.thresholds.size() && same; ++j)
      {
        const double t = curve.thresholds[j];
        int64_t chi = 0;
        for (const auto& p : d.pairs)
        {
          const bool born = super ? p.birth >= t : p.birth <= t;
          const bool dead = !p.essential && (super ? p.death >= t : p.death <= t);
          if (born && !dead)
            chi += (p.dimension % 2) ? -1 : 1;
        }
        same = chi == curve.euler[j];
        if (!same)
          std::printf("  %s at t=%g: diagram gives %lld, Euler curve %lld\n", what.c_str(), t,
            static_cast<long long>(chi), static_cast<long long>(curve.euler[j]));
      }
      expect(same, what + ": alternating Betti sum equals the Euler curve");
      bool values = true, positive = true;
      for (const auto& p : d.pairs)
      {
        auto at = [&](const int64_t* q) {
          return static_cast<double>(v[q[0] + nx * (q[1] + ny * q[2])]);
        };
        values = values && at(p.birthVoxel) == p.birth && (p.essential || at(p.deathVoxel) == p.death);
        positive = positive && p.persistence() > 0 && p.dimension <= g.dimension();
      }
      expect(values, what + ": image[voxel] equals birth and death");
      expect(positive, what + ": no zero-persistence pair, dimensions in range");

      // Filters: max dimension 0 keeps only the 0-dimensional pairs, and a
      // minimum persistence drops exactly the shorter finite pairs.
      po.maxDimension = 0;
      const PersistenceDiagram d0 = computePersistenceReference(g, po);
      size_t zeros = 0;
      for (const auto& p : d.pairs)
        zeros += p.dimension == 0;
      expect(d0.pairs.size() == zeros, what + ": max dimension 0");
      po.maxDimension = 3;
      po.minPersistence = 1.5;
      const PersistenceDiagram dm = computePersistenceReference(g, po);
      size_t longer = 0;
      for (const auto& p : d.pairs)
        longer += p.persistence() > 1.5;
      expect(dm.pairs.size() == longer, what + ": min persistence");
    }
}

using kernel_check::randomValues;
} // namespace

int main()
{
  std::mt19937_64 rng(31);
  const int64_t shapes[][3] = { { 1, 1, 1 }, { 12, 1, 1 }, { 1, 1, 9 }, { 7, 6, 1 }, { 1, 5, 8 },
    { 5, 4, 3 }, { 6, 6, 6 }, { 2, 2, 2 }, { 9, 1, 7 } };
  for (const auto& s : shapes)
  {
    const size_t n = static_cast<size_t>(s[0] * s[1] * s[2]);
    const std::string shape =
      std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]);
    checkImage("uint8 3 levels " + shape, randomValues<uint8_t>(rng, n, 3), ScalarType::UInt8, s[0], s[1], s[2]);
    checkImage("int16 40 levels " + shape, randomValues<int16_t>(rng, n, 40), ScalarType::Int16, s[0], s[1], s[2]);
    checkImage("float 1000 levels " + shape, randomValues<float>(rng, n, 1000), ScalarType::Float32, s[0], s[1], s[2]);
    checkImage("constant " + shape, std::vector<double>(n, 4.0), ScalarType::Float64, s[0], s[1], s[2]);
  }
  // NaN voxels are absent: the diagram still matches the Euler curve, which
  // follows the same rule.
  std::vector<float> withNan = randomValues<float>(rng, 7 * 6 * 5, 5);
  for (size_t i = 0; i < withNan.size(); i += 7)
    withNan[i] = std::numeric_limits<float>::quiet_NaN();
  checkImage("nan", withNan, ScalarType::Float32, 7, 6, 5);
  // A checkerboard: many components and (in T) many merges at once.
  std::vector<uint8_t> board(8 * 8 * 4);
  for (int z = 0; z < 4; ++z)
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 8; ++x)
        board[x + 8 * (y + 8 * z)] = static_cast<uint8_t>((x + y + z) % 2);
  checkImage("checkerboard", board, ScalarType::UInt8, 8, 8, 4);

  // A sublevel V diagram of a 2-component image: two essential... one
  // essential class of dimension 0 in total, one finite pair.
  const std::vector<uint8_t> twoBasins = { 0, 5, 1 };
  const PersistenceDiagram d =
    computePersistenceReference(GridView::contiguous(twoBasins.data(), ScalarType::UInt8, 3), {});
  expect(d.pairs.size() == 2 && d.pairs[0].essential && d.pairs[0].birth == 0 &&
      !d.pairs[1].essential && d.pairs[1].birth == 1 && d.pairs[1].death == 5,
    "0 5 1: one essential class born at 0, one pair (1, 5)");

  // The persistence curve against a direct count, on a real diagram.
  {
    std::vector<float> img = randomValues<float>(rng, 9 * 8 * 7, 30);
    const PersistenceDiagram pd =
      computePersistence(GridView::contiguous(img.data(), ScalarType::Float32, 9, 8, 7), {});
    std::vector<int> dims;
    std::vector<double> pers;
    for (const auto& p : pd.pairs)
    {
      dims.push_back(p.dimension);
      pers.push_back(p.persistence());
    }
    const PersistenceCurve curve = persistenceCurve(dims, pers);
    bool ok = !curve.persistence.empty();
    for (size_t j = 0; j < curve.persistence.size() && ok; ++j)
    {
      std::array<int64_t, 4> count{ 0, 0, 0, 0 };
      for (size_t i = 0; i < pers.size(); ++i)
        count[static_cast<size_t>(dims[i])] += pers[i] >= curve.persistence[j];
      ok = count == curve.pairs[j] && (j == 0 || curve.persistence[j] > curve.persistence[j - 1]);
    }
    expect(ok, "persistence curve equals a direct count at every threshold");
  }

  bool threw = false;
  try
  {
    PersistenceOptions bad;
    bad.maxDimension = -1;
    computePersistenceReference(GridView::contiguous(twoBasins.data(), ScalarType::UInt8, 3), bad);
  }
  catch (const std::invalid_argument&)
  {
    threw = true;
  }
  expect(threw, "a negative maximum dimension is refused");

  // A piece's summary given twice: its critical cells reported twice, which
  // the pairing's position table (filled on all threads) must refuse,
  // whichever thread meets the second copy.
  {
    std::vector<float> v = randomValues<float>(rng, 30 * 20 * 10, 50);
    const GridView g = GridView::contiguous(v.data(), ScalarType::Float32, 30, 20, 10);
    PersistenceOptions po;
    po.threads = 4;
    const MorsePiece piece(g, PieceRegion::whole(g.dims, po.construction), po);
    MorsePairing pairing(g.dims, po);
    const std::vector<uint8_t> bytes = piece.summary().toBytes();
    pairing.add(MorsePieceSummary::fromBytes(bytes.data(), bytes.size()));
    pairing.add(MorsePieceSummary::fromBytes(bytes.data(), bytes.size()));
    bool refused = false;
    try
    {
      pairing.pairByUnionFind();
    }
    catch (const std::logic_error& e)
    {
      refused = std::string(e.what()).find("same critical cell") != std::string::npos;
    }
    expect(refused, "a piece's critical cells reported twice are refused");
  }

  // Boundary lists the pairing must refuse (their slots are looked up on
  // all threads, then checked in order): one given twice, one for a
  // critical cell not asked for (a minimum), one for a cell no piece
  // reported (a piece's mistake: a logic error), one whose count runs past
  // its end. The diagram of the lists given once is the reference's.
  {
    std::vector<float> v = randomValues<float>(rng, 24 * 18 * 9, 40);
    const GridView g = GridView::contiguous(v.data(), ScalarType::Float32, 24, 18, 9);
    PersistenceOptions po;
    po.threads = 4;
    int64_t minimum = -1; // a critical cell whose boundary no one needs
    {
      const MorsePiece piece(g, PieceRegion::whole(g.dims, po.construction), po);
      for (const MorseCriticalCell& c : piece.summary().critical)
        if (c.dimension == 0)
          minimum = c.cell;
    }
    // What the pairing threw (invalid_argument: "I " and its message,
    // logic_error: "L " and its message), or nothing.
    auto refusal = [&](const std::function<void(MorsePairing&, const std::vector<int64_t>&)>& give) {
      const MorsePiece piece(g, PieceRegion::whole(g.dims, po.construction), po);
      MorsePairing pairing(g.dims, po);
      const std::vector<uint8_t> bytes = piece.summary().toBytes();
      pairing.add(MorsePieceSummary::fromBytes(bytes.data(), bytes.size()));
      const std::vector<int64_t> need = pairing.pairByUnionFind();
      const std::vector<int64_t> flat = piece.boundaries(need);
      try
      {
        give(pairing, flat);
      }
      catch (const std::invalid_argument& e)
      {
        return "I " + std::string(e.what());
      }
      catch (const std::logic_error& e)
      {
        return "L " + std::string(e.what());
      }
      return std::string();
    };
    expect(refusal([](MorsePairing& p, const std::vector<int64_t>& flat) {
      p.addBoundaries(flat);
      p.addBoundaries(flat);
    }).rfind("I persistence: a boundary that was not asked for, or given twice", 0) == 0,
      "a boundary list given twice is refused");
    expect(minimum >= 0, "the volume has a minimum");
    expect(refusal([minimum](MorsePairing& p, const std::vector<int64_t>& flat) {
      std::vector<int64_t> wrong(flat.begin(), flat.begin() + 2 + flat[1]);
      wrong[0] = minimum;
      p.addBoundaries(wrong);
    }).rfind("I persistence: a boundary that was not asked for, or given twice", 0) == 0,
      "a boundary of a critical cell not asked for is refused");
    expect(refusal([](MorsePairing& p, const std::vector<int64_t>& flat) {
      std::vector<int64_t> wrong(flat.begin(), flat.begin() + 2 + flat[1]);
      wrong[0] = -5; // no cell at all
      p.addBoundaries(wrong);
    }).rfind("L ", 0) == 0, "a boundary of a cell no piece reported is a logic error");
    expect(refusal([](MorsePairing& p, const std::vector<int64_t>& flat) {
      std::vector<int64_t> cut(flat.begin(), flat.begin() + 2 + flat[1]);
      cut[1] += 1; // one entry more than the list holds
      p.addBoundaries(cut);
    }).rfind("I persistence: malformed boundary list", 0) == 0, "a boundary list cut short is refused");
    bool fine = true;
    PersistenceDiagram once;
    {
      const MorsePiece piece(g, PieceRegion::whole(g.dims, po.construction), po);
      MorsePairing pairing(g.dims, po);
      const std::vector<uint8_t> bytes = piece.summary().toBytes();
      pairing.add(MorsePieceSummary::fromBytes(bytes.data(), bytes.size()));
      const std::vector<int64_t> need = pairing.pairByUnionFind();
      fine = !need.empty();
      pairing.addBoundaries(piece.boundaries(need));
      once = pairing.finish();
    }
    expect(fine, "the volume needs Morse boundaries (the refusals above are exercised)");
    expect(samePairs(once, computePersistenceReference(g, po)), "the lists given once: the reference's diagram");
  }
  // fitPersistenceMemory: the size's share is 4.5 bytes a cell and the
  // input's bytes (11 x 10 x 9 float: 21 x 19 x 17 V cells); the rest of the
  // budget holds 200 bytes a critical cell; no finite budget, no limit.
  {
    std::vector<float> values(11 * 10 * 9, 1.0f);
    const GridView g = GridView::contiguous(values.data(), ScalarType::Float32, 11, 10, 9);
    const double size = 21.0 * 19 * 17 * kMorseBytesPerCell + 11.0 * 10 * 9 * 4;
    PersistenceOptions po;
    double needed = 0;
    expect(!fitPersistenceMemory(g, size - 1, po, &needed) && needed == size && po.maxCriticalCells == -1,
      "a budget under the size's share is refused, the share reported");
    expect(fitPersistenceMemory(g, size + 7 * kMorseBytesPerCriticalCell + 1, po, &needed) &&
        po.maxCriticalCells == 7,
      "the rest of the budget bounds the critical cells (" + std::to_string(po.maxCriticalCells) + ")");
    PersistenceOptions unlimited;
    expect(fitPersistenceMemory(g, std::numeric_limits<double>::infinity(), unlimited, nullptr) &&
        unlimited.maxCriticalCells == -1,
      "an infinite budget sets no limit");
    // The default budget against the kernel's own count of the machine's
    // memory (/proc/meminfo's MemTotal, where there is one).
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    double kib = 0;
    while (meminfo >> key >> kib && key != "MemTotal:")
      meminfo.ignore(1 << 10, '\n');
    if (key == "MemTotal:")
      expect(std::fabs(defaultPersistenceMemoryBudget() - 0.8 * kib * 1024) <= 0.01 * 0.8 * kib * 1024,
        "the default budget is 80% of MemTotal (" + std::to_string(defaultPersistenceMemoryBudget()) + " bytes)");
  }
  // maxCriticalCells: one under the gradient's count stops the engine with
  // CriticalCellLimit, which reports that count; the count itself runs it
  // (one piece, and blocks, whose pieces each have fewer).
  {
    std::vector<float> noise = randomValues<float>(rng, 11 * 10 * 9, 50);
    const GridView g = GridView::contiguous(noise.data(), ScalarType::Float32, 11, 10, 9);
    for (int64_t block : { int64_t(0), int64_t(4) })
    {
      PersistenceOptions po;
      po.threads = 2;
      po.blockSize = block;
      const PersistenceDiagram free = computePersistence(g, po);
      const std::string words = block ? " (blocks of 4)" : " (one piece)";
      po.maxCriticalCells = free.criticalCells - 1;
      const int64_t reported = reportedCriticalCells(g, po);
      expect(block ? reported > po.maxCriticalCells && reported <= free.criticalCells
                   : reported == free.criticalCells,
        "maxCriticalCells one under the count stops the engine" + words + ", reporting " + std::to_string(reported) +
          " of " + std::to_string(free.criticalCells));
      po.maxCriticalCells = free.criticalCells;
      expect(samePairs(computePersistence(g, po), free), "maxCriticalCells at the count: the same diagram" + words);
    }
  }
  return kernel_check::finish();
}
