// ImageInput.h - the INPUT argument shared by every command: which reader a
// file needs, and the options that describe headerless raw files.
//
//   name.npy, name.npy.gz, or any file starting with the .npy magic: NumPy
//   name.json: a sidecar describing a raw file (Sidecar.h)
//   name.raw, name.raw.gz with a sibling name.json: that sidecar
//   anything else: raw, described by --dims and --dtype (--byte-order)
// Options given explicitly always win over a sibling sidecar.
#pragma once

#include "Image.h"
#include "OptionParser.h"

#include <string>
#include <vector>

namespace topovox
{
namespace cli
{

struct InputOptions
{
  std::vector<int64_t> dims; // --dims; empty when not given
  ScalarType type = ScalarType::UInt8;
  bool typeGiven = false;
  bool bigEndian = false;
  bool byteOrderGiven = false;
  bool stacks = false; // --batch: a 4D .npy is a stack of volumes (Image::stack)
};

// Adds --dims, --dtype and --byte-order (in an "Input" section).
void addInputOptions(OptionParser& parser, InputOptions& options);

// One line for --help epilogs: the input formats.
const char* inputFormatsHelp();

// Reads INPUT. `how`, when given, receives a short description of the
// reader used (for --verbose). Throws UsageError when the options do not
// fit the file, Error when the file cannot be read.
Image readImage(const std::string& path, const InputOptions& options, std::string* how = nullptr);

} // namespace cli
} // namespace topovox
