// TableWriter.h - the tables commands produce (one row per threshold, per
// persistence pair...), written as CSV or as a float64 .npy matrix. Values
// are doubles: counts stay exact up to 2^53, and CSV prints them without a
// decimal point.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "OutputFile.h"
#include "topovox/UninitializedAllocator.h"

namespace topovox
{
namespace cli
{

struct Table
{
  std::vector<std::string> columns;
  // Row-major, columns.size() per row. Sized without being zeroed first
  // (UninitializedAllocator.h): a 512^3 field's diagram is 3 GB of values,
  // written once on the threads.
  UninitializedVector<double> values;
  bool header = true;          // CSV: the column names as a first line

  size_t rowCount() const { return columns.empty() ? 0 : values.size() / columns.size(); }
};

enum class TableFormat
{
  Csv,
  Npy
};

// The format an output name asks for: ".csv" or "-" (stdout) -> CSV,
// ".npy" -> NumPy. Throws UsageError for anything else.
TableFormat tableFormatFor(const std::string& path);

// A table's rows made on demand, a block at a time on the threads, so that
// a large table need not exist whole before it is written: fill(r0, r1,
// out) writes rows [r0, r1), row-major, columns.size() doubles a row, at
// `out`. It is called on several threads at once, for disjoint rows.
struct RowSource
{
  std::vector<std::string> columns;
  bool header = true;
  size_t rows = 0;
  std::function<void(size_t r0, size_t r1, double* out)> fill;
};

// The rows of `table` (which must outlive the source).
RowSource rowsOf(const Table& table);

// A header line with the column names (unless rows.header is false), then
// one line per row; every number as the shortest text that reads back as
// the same double, whole numbers as integers (inf, -inf, nan as such). The
// rows are made and formatted on `threads` threads (the text is the same).
void writeCsv(FILE* out, const RowSource& rows, int threads = 1);

// A .npy file (format 1.0) holding a little-endian float64 array of shape
// (rows, columns) in C order; the column names are not stored. The rows
// are made on `threads` threads straight into the file where it can be
// mapped (OutputFile::mapSized), else a window of them at a time, written
// in order.
void writeNpy(OutputFile& output, const RowSource& rows, int threads = 1);

void writeRows(OutputFile& output, const RowSource& rows, TableFormat format, int threads = 1);

} // namespace cli
} // namespace topovox
