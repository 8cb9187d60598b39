// CommandSteps.h - the steps every command that reads one image and writes
// one table takes around its kernel call, with their usage errors and
// --verbose lines worded alike.
#pragma once

#include "Errors.h"
#include "Image.h"
#include "ImageInput.h"
#include "OutputFile.h"
#include "TableWriter.h"

#include <string>
#include <vector>

namespace topovox
{
namespace cli
{

// The one INPUT and the -o OUTPUT of `command`; UsageError otherwise.
const std::string& singleInput(const std::vector<std::string>& positional,
  const std::string& output, const char* command);

// readImage, with a --verbose line saying what was read and how long it took.
Image readInputLogged(const std::string& path, const InputOptions& options, bool verbose);

// An image's samples as doubles, x fastest.
std::vector<double> valuesOf(const Image& image);

// --batch: the images of a stack read from one file, numpy's first axis
// indexing them: an (n, w) or (n, h, w) array (n 1D or 2D images) or, read
// with InputOptions::stacks, an (n, z, y, x) array (n volumes). Each image
// is `voxels` contiguous samples.
struct Stack
{
  int64_t count = 0;
  int axes = 0;                     // of one image
  int64_t dims[3] = { 1, 1, 1 };    // of one image, x first
  int64_t voxels = 0;
  // Image k as a view into `image`'s samples.
  GridView image(const Image& stack, int64_t k) const;
};
// The stack `image` holds; UsageError when it is not one (fewer than 2
// axes, or Fortran-ordered).
Stack stackOf(const Image& image);

// An option given as one value or one per image axis (x first): the
// values for out[0..axes), the one value repeated; out unchanged when the
// option was not given. UsageError naming `option` for another count.
template <typename T>
void perAxis(const std::vector<T>& given, int axes, const char* option, T out[3])
{
  if (given.empty())
    return;
  if (given.size() != 1 && static_cast<int>(given.size()) != axes)
    throw UsageError(std::string(option) + " takes one value or one per image axis (" + std::to_string(axes) + ")");
  for (int k = 0; k < axes; ++k)
    out[k] = given.size() == 1 ? given[0] : given[static_cast<size_t>(k)];
}

// Adds a warning to those gathered from several images, once.
void addWarning(std::string& all, const std::string& warning);

// Appends image k's table to a batch's: its rows, each led by an `image`
// column (the batch table takes the columns of the first one appended).
void appendImageRows(Table& batch, const Table& one, int64_t k);

// Writes the rows (made, and CSV formatted, on `threads` threads), commits
// the output, and says so under --verbose.
void writeRowsLogged(OutputFile& output, const RowSource& rows, TableFormat format,
  const std::string& outputName, bool verbose, int threads = 1);

// writeRowsLogged of the table's rows.
void writeTableLogged(OutputFile& output, const Table& table, TableFormat format,
  const std::string& outputName, bool verbose, int threads = 1);

} // namespace cli
} // namespace topovox
