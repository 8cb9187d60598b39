// DiagramLayout.cpp - barcode rows (DiagramLayout.h): a stable sort.
#include "topovox/DiagramLayout.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace topovox
{

std::vector<int64_t> barcodeRows(const std::vector<int>& dimensions, const std::vector<double>& births,
  const std::vector<double>& persistence, BarcodeOrder order, bool superlevel)
{
  const size_t n = dimensions.size();
  if (births.size() != n || persistence.size() != n)
    throw std::invalid_argument("barcode: dimensions, births and persistence differ in length");
  std::vector<size_t> byRow(n);
  std::iota(byRow.begin(), byRow.end(), size_t(0));
  const auto key = [&](size_t i) {
    if (order == BarcodeOrder::Birth)
      return superlevel ? -births[i] : births[i];
    const double p = persistence[i];
    return std::isnan(p) ? INFINITY : -p; // longest first
  };
  std::stable_sort(byRow.begin(), byRow.end(), [&](size_t a, size_t b) {
    if (dimensions[a] != dimensions[b])
      return dimensions[a] < dimensions[b];
    return key(a) < key(b);
  });
  std::vector<int64_t> rows(n);
  int64_t row = 0;
  for (size_t k = 0; k < n; ++k)
  {
    if (k > 0 && dimensions[byRow[k]] != dimensions[byRow[k - 1]])
      ++row; // a gap between dimensions
    rows[byRow[k]] = row++;
  }
  return rows;
}

} // namespace topovox
