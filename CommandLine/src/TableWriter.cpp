#include "TableWriter.h"

#include "ByteOrder.h"
#include "Errors.h"
#include "InputFile.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <string>

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

void writeCsv(FILE* out, const Table& table)
{
  if (table.header)
  {
    for (size_t c = 0; c < table.columns.size(); ++c)
      std::fprintf(out, c ? ",%s" : "%s", table.columns[c].c_str());
    std::fputc('\n', out);
  }
  // The shortest text that reads back as the same double (std::to_chars),
  // a row at a time: millions of pairs are written in well under a second.
  // Whole numbers are written as integers (100000, not 1e+05: counts and
  // voxel coordinates read as such).
  const size_t n = table.columns.size();
  std::string row;
  char number[32];
  for (size_t r = 0; r < table.rowCount(); ++r)
  {
    row.clear();
    for (size_t c = 0; c < n; ++c)
    {
      if (c)
        row += ',';
      const double v = table.values[r * n + c];
      const bool whole = std::fabs(v) < 1e15 && v == std::trunc(v) && !(v == 0 && std::signbit(v));
      const auto end = whole ? std::to_chars(number, number + sizeof number, static_cast<int64_t>(v)).ptr
                             : std::to_chars(number, number + sizeof number, v).ptr;
      row.append(number, end);
    }
    row += '\n';
    std::fwrite(row.data(), 1, row.size(), out);
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
  std::vector<double> data = table.values;
  swapBytes(data.data(), sizeof(double), data.size());
  std::fwrite(data.data(), sizeof(double), data.size(), out);
}

void writeTable(FILE* out, const Table& table, TableFormat format)
{
  if (format == TableFormat::Csv)
    writeCsv(out, table);
  else
    writeNpy(out, table);
}

} // namespace cli
} // namespace topovox
