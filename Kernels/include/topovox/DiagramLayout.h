// DiagramLayout.h - where each pair of a persistence diagram is drawn in a
// barcode: one bar per pair, bars grouped by dimension (dimension 0 at the
// bottom, one empty row between groups), within a group ordered by birth
// (in the filtration's direction) or by persistence (longest at the
// bottom), ties by their order in the diagram. Essential classes count as
// infinitely persistent.
#pragma once

#include <cstdint>
#include <vector>

namespace topovox
{

enum class BarcodeOrder : int
{
  Birth = 0,
  Persistence = 1
};

// Row of every pair (0 = the bottom). `superlevel`: births decrease along
// the filtration. Throws std::invalid_argument when the arrays' sizes differ.
std::vector<int64_t> barcodeRows(const std::vector<int>& dimensions, const std::vector<double>& births,
  const std::vector<double>& persistence, BarcodeOrder order, bool superlevel);

} // namespace topovox
