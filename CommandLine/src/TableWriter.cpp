#include "TableWriter.h"

#include "ByteOrder.h"
#include "Errors.h"
#include "InputFile.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
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

namespace
{
// Rows [r0, r1) of the table as CSV text, appended to `text`: the shortest
// text that reads back as the same double (std::to_chars); whole numbers
// as integers (100000, not 1e+05: counts and voxel coordinates read as
// such).
void formatRows(const Table& table, size_t r0, size_t r1, std::string& text)
{
  // Written in place: at most 24 characters a number (to_chars' longest
  // double, "-2.2250738585072014e-308"), and a comma or a newline.
  const size_t n = table.columns.size();
  const size_t at = text.size();
  text.resize(at + (r1 - r0) * n * 25);
  char* to = &text[at];
  char* const limit = to + (r1 - r0) * n * 25;
  for (size_t r = r0; r < r1; ++r)
    for (size_t c = 0; c < n; ++c)
    {
      const double v = table.values[r * n + c];
      const bool whole = std::fabs(v) < 1e15 && v == std::trunc(v) && !(v == 0 && std::signbit(v));
      to = whole ? std::to_chars(to, limit, static_cast<int64_t>(v)).ptr : std::to_chars(to, limit, v).ptr;
      *to++ = c + 1 < n ? ',' : '\n';
    }
  text.resize(static_cast<size_t>(to - text.data()));
}
} // namespace

void writeCsv(FILE* out, const Table& table, int threadCount)
{
  if (table.header)
  {
    for (size_t c = 0; c < table.columns.size(); ++c)
      std::fprintf(out, c ? ",%s" : "%s", table.columns[c].c_str());
    std::fputc('\n', out);
  }
  // Blocks of rows formatted on the threads, a window of them at a time
  // (tens of MB of text), written in order: a 512^3 field's 42.7 million
  // pairs took 13 to 17 s to write on one thread, at about 40 ns a number.
  const size_t rows = table.rowCount();
  const size_t blockRows = size_t(1) << 14;
  const size_t blocks = (rows + blockRows - 1) / blockRows;
  const size_t threads = std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(std::max(threadCount, 1)), blocks));
  std::vector<std::string> text(threads * 2);
  for (size_t first = 0; first < blocks; first += text.size())
  {
    const size_t window = std::min(text.size(), blocks - first);
    // A helper's failure (memory) is kept and thrown here, not terminate().
    std::vector<std::exception_ptr> failed(threads);
    auto format = [&](size_t t) {
      try
      {
        for (size_t b = t; b < window; b += threads)
        {
          text[b].clear();
          const size_t r0 = (first + b) * blockRows;
          formatRows(table, r0, std::min(rows, r0 + blockRows), text[b]);
        }
      }
      catch (...)
      {
        failed[t] = std::current_exception();
      }
    };
    std::vector<std::thread> helpers;
    for (size_t t = 1; t < std::min(threads, window); ++t)
      helpers.emplace_back(format, t);
    format(0);
    for (std::thread& h : helpers)
      h.join();
    for (const std::exception_ptr& e : failed)
      if (e)
        std::rethrow_exception(e);
    for (size_t b = 0; b < window; ++b)
      std::fwrite(text[b].data(), 1, text[b].size(), out);
  }
}

void writeNpy(FILE* out, const Table& table)
{
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (" +
    std::to_string(table.rowCount()) + ", " + std::to_string(table.columns.size()) + "), }";
  // numpy pads the header with spaces and a final newline so that the data
  // start at a multiple of 64 bytes (10 bytes of preamble come first).
  const size_t preamble = 10;
  header += std::string(63 - (preamble + header.size()) % 64, ' ') + "\n";
  const size_t length = header.size();
  const unsigned char head[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
    static_cast<unsigned char>(length & 0xFF), static_cast<unsigned char>(length >> 8) };
  std::fwrite(head, 1, sizeof head, out);
  std::fwrite(header.data(), 1, header.size(), out);
  if (hostIsLittleEndian())
  {
    // The values as they are (a batch's table can be 100 MB: no copy).
    std::fwrite(table.values.data(), sizeof(double), table.values.size(), out);
    return;
  }
  std::vector<double> data(table.values.begin(), table.values.end());
  swapBytes(data.data(), sizeof(double), data.size());
  std::fwrite(data.data(), sizeof(double), data.size(), out);
}

void writeTable(FILE* out, const Table& table, TableFormat format, int threads)
{
  if (format == TableFormat::Csv)
    writeCsv(out, table, threads);
  else
    writeNpy(out, table);
}

} // namespace cli
} // namespace topovox
