// CommandSteps.h - the steps every command that reads one image and writes
// one table takes around its kernel call, with their usage errors and
// --verbose lines worded alike.
#pragma once

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

// Writes the table, commits the output, and says so under --verbose.
void writeTableLogged(OutputFile& output, const Table& table, TableFormat format,
  const std::string& outputName, bool verbose);

} // namespace cli
} // namespace topovox
