// test_numbered_ends.cpp - the pairing's numbered path ends
// (MorsePieceSummary::numberedEnds), which only the GPU makes, checked on
// the CPU: a whole image's CPU summary is put in filtration order and its
// ends numbered here, by brute force (a map from each minimum's and
// maximum's cell to its number). Then:
// - the pairing gives from it the diagram the summary as cells gives;
// - expandNumberedEnds writes out the summary as cells, the same set;
// - the numbered form survives toBytes/fromBytes;
// - beside another piece's cells it is written out first (a duplicate
//   piece is then refused as one);
// - numbers that name no cell are refused;
// - boundaries given as the GPU translates them (slots and matrix rows,
//   MorsePairing::boundaryRows; translated here from the CPU's records)
//   give the same diagram, and bad ones are refused.
#include "topovox/Persistence.h"
#include "topovox/PersistencePieces.h"

#include "KernelCheck.h"
#include "RandomValues.h"
#include "SummaryComparison.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

using namespace topovox;

namespace
{
using kernel_check::expect;

int topOf(const int64_t dims[3])
{
  int top = 0;
  for (int a = 0; a < 3; ++a)
    top += dims[a] > 1 ? 1 : 0;
  return top;
}

// The summary as the GPU hands it over: cells in filtration order (value,
// dimension, cell), ends numbered.
MorsePieceSummary numberedFrom(const MorsePieceSummary& classic, int top)
{
  MorsePieceSummary s;
  s.hasNan = classic.hasNan;
  s.critical = classic.critical;
  std::sort(s.critical.begin(), s.critical.end(), [](const MorseCriticalCell& a, const MorseCriticalCell& b) {
    return std::tie(a.value, a.dimension, a.cell) < std::tie(b.value, b.dimension, b.cell);
  });
  std::map<int64_t, int32_t> minimum, maximum; // cell -> number
  std::map<int64_t, size_t> position;
  for (size_t j = 0; j < s.critical.size(); ++j)
  {
    const MorseCriticalCell& c = s.critical[j];
    position[c.cell] = j;
    if (c.dimension == 0)
      minimum.emplace(c.cell, static_cast<int32_t>(minimum.size()));
    if (c.dimension == top)
      maximum.emplace(c.cell, static_cast<int32_t>(maximum.size()));
  }
  const std::array<int32_t, 2> none = { { -1, -1 } };
  // (As the GPU gives them: edges' ends from 2D up, the dual's without NaN.)
  if (top >= 2)
  {
    s.edgeEndNumbers.assign(s.critical.size(), none);
    for (size_t k = 0; k + 2 < classic.edgeEnds.size(); k += 3)
      s.edgeEndNumbers[position.at(classic.edgeEnds[k])] = { { minimum.at(classic.edgeEnds[k + 1]),
        minimum.at(classic.edgeEnds[k + 2]) } };
  }
  if (top >= 1 && !classic.hasNan)
  {
    s.dualEndNumbers.assign(s.critical.size(), none);
    const int32_t outside = static_cast<int32_t>(maximum.size());
    for (size_t k = 0; k + 1 < classic.dualEnds.size(); k += 2)
    {
      auto& e = s.dualEndNumbers[position.at(classic.dualEnds[k])];
      const int32_t end = classic.dualEnds[k + 1] < 0 ? outside : maximum.at(classic.dualEnds[k + 1]);
      (e[0] < 0 ? e[0] : e[1]) = end;
    }
  }
  s.numberedEnds = true;
  return s;
}

using kernel_check::CanonicalSummary;
using kernel_check::sameDiagram;

PersistenceDiagram pairOnce(const MorsePiece& piece, MorsePieceSummary summary, const PersistenceOptions& po,
  const int64_t dims[3])
{
  MorsePairing pairing(dims, po);
  pairing.add(std::move(summary));
  const std::vector<int64_t> need = pairing.pairByUnionFind();
  pairing.addBoundaries(piece.boundaries(need));
  return pairing.finish();
}

// Records of cells (MorsePiece::boundaries) as the GPU translates them with
// `rows`: slot, count, matrix rows; positions from the numbered summary.
BoundaryRecords translated(const std::vector<int64_t>& flat, const BoundaryRows& rows,
  const MorsePieceSummary& numbered)
{
  std::map<int64_t, int64_t> position;
  for (size_t j = 0; j < numbered.critical.size(); ++j)
    position[numbered.critical[j].cell] = static_cast<int64_t>(j);
  BoundaryRecords out;
  for (size_t k = 0; k < flat.size(); k += 2 + static_cast<size_t>(flat[k + 1]))
  {
    out.push_back(rows.slotOf[position.at(flat[k])]);
    out.push_back(flat[k + 1]);
    for (int64_t e = 0; e < flat[k + 1]; ++e)
      out.push_back(rows.rowOf[position.at(flat[k + 2 + static_cast<size_t>(e)])]);
  }
  return out;
}

// Where each record of `flat` starts, last first.
template <typename Flat>
RecordStarts startsOf(const Flat& flat)
{
  RecordStarts starts;
  for (size_t k = 0; k < flat.size(); k += 2 + static_cast<size_t>(flat[k + 1]))
    starts.insert(starts.begin(), k);
  return starts;
}

template <typename T>
void checkImage(const std::string& name, std::vector<T> values, ScalarType type, int64_t nx, int64_t ny, int64_t nz)
{
  const GridView g = GridView::contiguous(values.data(), type, nx, ny, nz);
  const int top = topOf(g.dims);
  for (Construction construction : { Construction::V, Construction::T })
    for (Filtration filtration : { Filtration::Sublevel, Filtration::Superlevel })
      for (int threads : { 1, 4 })
      {
        PersistenceOptions po;
        po.construction = construction;
        po.filtration = filtration;
        po.threads = threads;
        const std::string what = name + (construction == Construction::T ? " T" : " V") +
          (filtration == Filtration::Superlevel ? " superlevel" : " sublevel") + " threads " +
          std::to_string(threads);
        try
        {
          const MorsePiece piece(g, PieceRegion::whole(g.dims, construction), po);
          const MorsePieceSummary& classic = piece.summary();
          const MorsePieceSummary numbered = numberedFrom(classic, top);
          expect(sameDiagram(pairOnce(piece, numbered, po, g.dims), pairOnce(piece, classic, po, g.dims)),
            what + ": the numbered ends pair as the cells do");

          MorsePieceSummary expanded = numbered;
          expanded.expandNumberedEnds(top, threads);
          expect(!expanded.numberedEnds && expanded.edgeEndNumbers.empty() && expanded.dualEndNumbers.empty() &&
              CanonicalSummary(expanded) == CanonicalSummary(classic),
            what + ": written out, the numbered ends are the cells'");

          const std::vector<uint8_t> bytes = numbered.toBytes();
          const MorsePieceSummary back = MorsePieceSummary::fromBytes(bytes.data(), bytes.size());
          expect(back.numberedEnds && back.edgeEndNumbers == numbered.edgeEndNumbers &&
              back.dualEndNumbers == numbered.dualEndNumbers && back.critical.size() == numbered.critical.size(),
            what + ": the numbered ends travel as bytes");
          expect(sameDiagram(pairOnce(piece, back, po, g.dims), pairOnce(piece, classic, po, g.dims)),
            what + ": and pair as before");

          // The boundaries as slots and rows: all of them, half and half,
          // or all with their starts given (in reverse order, as the
          // device gives them in no order).
          for (const int how : { 0, 1, 2 })
          {
            const bool half = how == 1;
            MorsePairing pairing(g.dims, po);
            pairing.add(MorsePieceSummary(numbered));
            const std::vector<int64_t> need = pairing.pairByUnionFind();
            const BoundaryRows rows = pairing.boundaryRows();
            expect(need.empty() ? rows.positions == 0 : rows.positions == static_cast<int64_t>(numbered.critical.size()),
              what + ": the pairing offers slots and rows where it needs boundaries");
            const std::vector<int64_t> flat = piece.boundaries(need);
            if (rows.positions == 0)
              pairing.addBoundaries(flat);
            else if (how == 0)
              pairing.addBoundaryRows(translated(flat, rows, numbered));
            else if (how == 2)
              pairing.addBoundaryRows(translated(flat, rows, numbered), startsOf(flat));
            else
            {
              // The first half of the records translated, the rest as cells.
              size_t k = 0, records = 0;
              for (; k < flat.size(); k += 2 + static_cast<size_t>(flat[k + 1]))
                ++records;
              size_t cut = 0;
              for (size_t r = 0; r < records / 2; ++r)
                cut += 2 + static_cast<size_t>(flat[cut + 1]);
              pairing.addBoundaryRows(translated(std::vector<int64_t>(flat.begin(), flat.begin() + cut), rows, numbered));
              pairing.addBoundaries(std::vector<int64_t>(flat.begin() + cut, flat.end()));
            }
            expect(sameDiagram(pairing.finish(), pairOnce(piece, classic, po, g.dims)),
              what + (how == 1 ? ": half the boundaries as slots and rows"
                               : how == 2 ? ": the boundaries as slots and rows, starts given"
                                          : ": the boundaries as slots and rows") +
                ", the same diagram");
          }
          // The boundaries asked for early (MorsePairing::BoundaryRequest):
          // in 3D without NaN, once the dual is paired, with the slots but
          // not the rows; given as slots and rows once those are known, as
          // the GPU's held records are.
          {
            MorsePairing pairing(g.dims, po);
            pairing.add(MorsePieceSummary(numbered));
            bool asked = false;
            std::vector<int64_t> early;
            BoundaryRows slots;
            const std::vector<int64_t> need =
              pairing.pairByUnionFind([&](const std::vector<int64_t>& cells, const BoundaryRows& given) {
                asked = true;
                early = cells;
                slots = given;
              });
            const bool dual3D = top == 3 && !numbered.hasNan;
            expect(asked == dual3D && (!asked || need.empty()),
              what + ": the boundaries are asked for early exactly in 3D without NaN");
            const BoundaryRows rows = pairing.boundaryRows();
            expect(!asked || early.empty() ||
                (slots.slotOf == rows.slotOf && !slots.rowOf && rows.rowOf && slots.positions == rows.positions),
              what + ": asked early, the slots come without the rows, which follow");
            const std::vector<int64_t> flat = piece.boundaries(asked ? early : need);
            if (rows.positions == 0)
              pairing.addBoundaries(flat);
            else
              pairing.addBoundaryRows(translated(flat, rows, numbered), startsOf(flat));
            expect(sameDiagram(pairing.finish(), pairOnce(piece, classic, po, g.dims)),
              what + ": the boundaries asked for early, the same diagram");
          }
          // Beside an empty summary (an MPI rank's): still numbered, same diagram.
          {
            MorsePairing pairing(g.dims, po);
            pairing.add(MorsePieceSummary(numbered));
            pairing.add(MorsePieceSummary());
            const std::vector<int64_t> need = pairing.pairByUnionFind();
            pairing.addBoundaries(piece.boundaries(need));
            expect(sameDiagram(pairing.finish(), pairOnce(piece, classic, po, g.dims)),
              what + ": an empty summary beside the numbered one changes nothing");
          }
          // Beside another piece's cells (here the same again): written out,
          // so the duplicate is found.
          if (!classic.critical.empty())
          {
            MorsePairing pairing(g.dims, po);
            pairing.add(MorsePieceSummary(numbered));
            pairing.add(MorsePieceSummary(classic));
            std::string why;
            try
            {
              pairing.pairByUnionFind();
            }
            catch (const std::logic_error& e)
            {
              why = e.what();
            }
            expect(why.find("same critical cell") != std::string::npos,
              what + ": numbered ends beside other cells are written out (" + why + ")");
          }
        }
        catch (const std::exception& e)
        {
          expect(false, what + ": threw " + e.what());
        }
      }
}

using kernel_check::randomValues;

// A numbered summary whose numbers name no cell is refused by the pairing
// and by expandNumberedEnds, as a logic error.
void checkRefusals(std::mt19937_64& rng)
{
  std::vector<float> v = randomValues<float>(rng, 9 * 8 * 7, 30);
  const GridView g = GridView::contiguous(v.data(), ScalarType::Float32, 9, 8, 7);
  PersistenceOptions po;
  po.threads = 4;
  const MorsePiece piece(g, PieceRegion::whole(g.dims, po.construction), po);
  const MorsePieceSummary numbered = numberedFrom(piece.summary(), 3);
  auto refused = [&](const MorsePieceSummary& bad, const std::string& what) {
    std::string pairingWhy, expandWhy;
    try
    {
      MorsePairing pairing(g.dims, po);
      pairing.add(MorsePieceSummary(bad));
      pairing.pairByUnionFind();
    }
    catch (const std::logic_error& e)
    {
      pairingWhy = e.what();
    }
    try
    {
      MorsePieceSummary copy = bad;
      copy.expandNumberedEnds(3, 4);
    }
    catch (const std::logic_error& e)
    {
      expandWhy = e.what();
    }
    expect(!pairingWhy.empty(), what + ": refused by the pairing");
    expect(!expandWhy.empty(), what + ": refused when written out");
  };
  auto firstOf = [&](int dimension) {
    for (size_t j = 0; j < numbered.critical.size(); ++j)
      if (numbered.critical[j].dimension == dimension)
        return j;
    return numbered.critical.size();
  };
  expect(firstOf(1) < numbered.critical.size() && firstOf(2) < numbered.critical.size(),
    "the volume has critical edges and faces");
  {
    MorsePieceSummary bad = numbered;
    bad.edgeEndNumbers[firstOf(1)][1] = 1 << 30; // past the minima
    refused(bad, "an edge's end past the minima");
  }
  {
    MorsePieceSummary bad = numbered;
    bad.dualEndNumbers[firstOf(2)][0] = -7;
    refused(bad, "a face's negative end");
  }
  {
    MorsePieceSummary bad = numbered;
    bad.edgeEndNumbers.pop_back();
    refused(bad, "edge ends of the wrong length");
  }
  // Translated boundaries that the pairing refuses: a record given twice,
  // a slot past those asked for (invalid_argument), a row past the matrix
  // (logic_error: the device's mistake).
  auto rowsRefusal = [&](const std::function<void(BoundaryRecords&)>& spoil,
                       const std::function<void(RecordStarts&)>& spoilStarts = nullptr) {
    MorsePairing pairing(g.dims, po);
    pairing.add(MorsePieceSummary(numbered));
    const std::vector<int64_t> need = pairing.pairByUnionFind();
    BoundaryRecords flat = translated(piece.boundaries(need), pairing.boundaryRows(), numbered);
    RecordStarts starts;
    if (spoilStarts)
    {
      starts = startsOf(flat);
      spoilStarts(starts);
    }
    spoil(flat);
    try
    {
      pairing.addBoundaryRows(flat, starts);
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
  expect(rowsRefusal([](BoundaryRecords& flat) {
    const BoundaryRecords first(flat.begin(), flat.begin() + 2 + flat[1]);
    flat.insert(flat.end(), first.begin(), first.end());
  }).rfind("I persistence: a boundary that was not asked for, or given twice", 0) == 0,
    "a translated record given twice is refused");
  expect(rowsRefusal([](BoundaryRecords& flat) { flat[0] = 1 << 30; })
           .rfind("I persistence: a boundary that was not asked for", 0) == 0,
    "a translated record's slot past those asked for is refused");
  expect(rowsRefusal([](BoundaryRecords& flat) {
    if (flat[1] > 0)
      flat[2] = 1 << 30;
  }).rfind("L ", 0) == 0,
    "a translated row past the matrix is a logic error");
  expect(rowsRefusal([](BoundaryRecords& flat) { flat[1] = static_cast<int64_t>(flat.size()); })
           .rfind("I persistence: malformed boundary list", 0) == 0,
    "a translated record cut short is refused");
  // Starts given: one past the records, one given twice.
  expect(rowsRefusal([](BoundaryRecords&) {}, [](RecordStarts& starts) { starts[0] = 1u << 30; })
           .rfind("I persistence: malformed boundary list", 0) == 0,
    "a record's start past the records is refused");
  expect(rowsRefusal([](BoundaryRecords&) {}, [](RecordStarts& starts) { starts.push_back(starts[0]); })
           .rfind("I persistence: a boundary that was not asked for, or given twice", 0) == 0,
    "a record's start given twice is refused");
}
}

int main()
{
  std::mt19937_64 rng(57);
  const int64_t shapes[][3] = { { 1, 1, 1 }, { 12, 1, 1 }, { 7, 6, 1 }, { 1, 5, 8 }, { 5, 4, 3 }, { 9, 8, 7 },
    { 2, 2, 2 } };
  for (const auto& s : shapes)
  {
    const size_t n = static_cast<size_t>(s[0] * s[1] * s[2]);
    const std::string shape = std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]);
    checkImage("uint8 3 levels " + shape, randomValues<uint8_t>(rng, n, 3), ScalarType::UInt8, s[0], s[1], s[2]);
    checkImage("float 1000 levels " + shape, randomValues<float>(rng, n, 1000), ScalarType::Float32, s[0], s[1],
      s[2]);
    checkImage("constant " + shape, std::vector<double>(n, 2.5), ScalarType::Float64, s[0], s[1], s[2]);
  }
  // Enough critical cells (2^16) for the two union-finds to run at once,
  // the boundaries then asked for on the dual's thread while dimension 0's
  // runs (ThreadSanitizer's case for that request).
  {
    std::vector<float> v = randomValues<float>(rng, 52 * 46 * 44, 1000);
    const GridView g = GridView::contiguous(v.data(), ScalarType::Float32, 52, 46, 44);
    const size_t critical =
      MorsePiece(g, PieceRegion::whole(g.dims, Construction::V), PersistenceOptions()).summary().critical.size();
    expect(critical >= (size_t(1) << 16),
      "52x46x44: enough critical cells for the two union-finds at once (" + std::to_string(critical) + ")");
    checkImage("float 1000 levels 52x46x44", v, ScalarType::Float32, 52, 46, 44);
  }
  // With NaN the dual has no ends (the matrix pairs the top dimension).
  std::vector<float> withNan = randomValues<float>(rng, 7 * 6 * 5, 5);
  for (size_t i = 0; i < withNan.size(); i += 7)
    withNan[i] = std::nanf("");
  checkImage("nan 7x6x5", withNan, ScalarType::Float32, 7, 6, 5);
  checkRefusals(rng);
  return kernel_check::finish();
}
