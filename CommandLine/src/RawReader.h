// RawReader.h - headerless binary images: the layout (dims, scalar type,
// byte order) comes from the command line or a JSON sidecar. The file may
// be gzip-compressed. Its size must match the layout exactly: a mismatch is
// almost always wrong dims or a wrong type, never something to guess around.
#pragma once

#include "Image.h"

#include <string>
#include <vector>

namespace topovox
{
namespace cli
{

struct RawLayout
{
  std::vector<int64_t> dims; // x first, 1..3 axes
  ScalarType type = ScalarType::UInt8;
  bool bigEndian = false;
  std::vector<double> spacing; // empty, or one per axis
  std::string describedBy;     // the sidecar, if any (for error messages)
};

// Throws Error naming the file and the reason.
Image readRaw(const std::string& path, const RawLayout& layout);

} // namespace cli
} // namespace topovox
