#include "TableWriter.h"

#include "ByteOrder.h"
#include "Errors.h"
#include "InputFile.h"
#include "NpyHeader.h"
#include "topovox/ParallelFor.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace topovox
{
namespace cli
{

TableFormat tableFormatFor(const std::string& path)
{
  if (path == "-" || endsWith(path, ".csv"))
    return TableFormat::Csv;
  if (endsWith(path, ".npy"))
    return TableFormat::Npy;
  throw UsageError("cannot tell the format of the output '" + path +
    "': name it .csv or .npy, or use - for CSV on stdout");
}

RowSource rowsOf(const Table& table)
{
  RowSource rows;
  rows.columns = table.columns;
  rows.header = table.header;
  rows.rows = table.rowCount();
  const size_t width = table.columns.size();
  rows.fill = [&table, width](size_t r0, size_t r1, double* out) {
    std::copy(table.values.begin() + static_cast<std::ptrdiff_t>(r0 * width),
      table.values.begin() + static_cast<std::ptrdiff_t>(r1 * width), out);
  };
  return rows;
}

namespace
{
// Rows a block: what one thread makes and formats, or writes, at a time.
constexpr size_t kBlockRows = size_t(1) << 14;

// `values` (rows of n) as CSV text, appended to `text`: the shortest text
// that reads back as the same double (std::to_chars); whole numbers as
// integers (100000, not 1e+05: counts and voxel coordinates read as such).
void formatRows(const double* values, size_t rows, size_t n, std::string& text)
{
  // Written in place: at most 24 characters a number (to_chars' longest
  // double, "-2.2250738585072014e-308"), and a comma or a newline.
  const size_t at = text.size();
  text.resize(at + rows * n * 25);
  char* to = &text[at];
  char* const limit = to + rows * n * 25;
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < n; ++c)
    {
      const double v = values[r * n + c];
      const bool whole = std::fabs(v) < 1e15 && v == std::trunc(v) && !(v == 0 && std::signbit(v));
      to = whole ? std::to_chars(to, limit, static_cast<int64_t>(v)).ptr : std::to_chars(to, limit, v).ptr;
      *to++ = c + 1 < n ? ',' : '\n';
    }
  text.resize(static_cast<size_t>(to - text.data()));
}

// Rows [r0, r1) made at `out`, little-endian.
void fillLittleEndian(const RowSource& rows, size_t r0, size_t r1, double* out)
{
  rows.fill(r0, r1, out);
  if (!hostIsLittleEndian())
    swapBytes(out, sizeof(double), (r1 - r0) * rows.columns.size());
}
} // namespace

void writeCsv(FILE* out, const RowSource& rows, int threadCount)
{
  const size_t n = rows.columns.size();
  if (rows.header)
  {
    for (size_t c = 0; c < n; ++c)
      std::fprintf(out, c ? ",%s" : "%s", rows.columns[c].c_str());
    std::fputc('\n', out);
  }
  // Blocks of rows made and formatted on the threads, a window of them at
  // a time (tens of MB of text), written in order: a 512^3 field's 42.7
  // million pairs took 13 to 17 s to write on one thread, at about 40 ns a
  // number.
  const size_t blocks = (rows.rows + kBlockRows - 1) / kBlockRows;
  const int threads = static_cast<int>(std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(std::max(threadCount, 1)), blocks)));
  std::vector<std::string> text(static_cast<size_t>(threads) * 2);
  for (size_t first = 0; first < blocks; first += text.size())
  {
    const size_t window = std::min(text.size(), blocks - first);
    parallelFor(static_cast<int64_t>(window), threads, [&](int, int64_t b0, int64_t b1) {
      std::vector<double> values;
      for (int64_t b = b0; b < b1; ++b)
      {
        const size_t r0 = (first + static_cast<size_t>(b)) * kBlockRows, r1 = std::min(rows.rows, r0 + kBlockRows);
        values.resize((r1 - r0) * n);
        rows.fill(r0, r1, values.data());
        text[static_cast<size_t>(b)].clear();
        formatRows(values.data(), r1 - r0, n, text[static_cast<size_t>(b)]);
      }
    });
    for (size_t b = 0; b < window; ++b)
      std::fwrite(text[b].data(), 1, text[b].size(), out);
  }
}

void writeNpy(OutputFile& output, const RowSource& rows, int threads)
{
  const std::string header =
    npyHeader("<f8", false, { static_cast<int64_t>(rows.rows), static_cast<int64_t>(rows.columns.size()) });
  const size_t width = rows.columns.size();
  if (char* mapped = startNpy(output, header, rows.rows * width * sizeof(double)))
  {
    double* data = reinterpret_cast<double*>(mapped); // (64-byte aligned)
    parallelFor(static_cast<int64_t>(rows.rows), threads, [&](int, int64_t r0, int64_t r1) {
      fillLittleEndian(rows, static_cast<size_t>(r0), static_cast<size_t>(r1), data + static_cast<size_t>(r0) * width);
    });
    return;
  }
  FILE* out = output.stream();
  // A window of blocks made on the threads, then written (not the whole
  // table: its rows may be made on demand).
  const int workers = std::max(threads, 1);
  const size_t windowRows = kBlockRows * static_cast<size_t>(workers) * 2;
  UninitializedVector<double> window(std::min(rows.rows, windowRows) * width);
  for (size_t first = 0; first < rows.rows; first += windowRows)
  {
    const size_t count = std::min(windowRows, rows.rows - first);
    parallelFor(static_cast<int64_t>(count), workers, [&](int, int64_t r0, int64_t r1) {
      fillLittleEndian(rows, first + static_cast<size_t>(r0), first + static_cast<size_t>(r1),
        window.data() + static_cast<size_t>(r0) * width);
    });
    std::fwrite(window.data(), sizeof(double), count * width, out);
  }
}

void writeRows(OutputFile& output, const RowSource& rows, TableFormat format, int threads)
{
  if (format == TableFormat::Csv)
    writeCsv(output.stream(), rows, threads);
  else
    writeNpy(output, rows, threads);
}

} // namespace cli
} // namespace topovox
