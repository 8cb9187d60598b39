// Sidecar.h - the JSON files that describe raw volumes (Testing/Data):
//   { "dims": [256, 256, 128], "dtype": "uint8", "byte_order": "little",
//     "spacing": [1.0, 1.0, 1.0], "file": "engine_256x256x128.raw.gz", ... }
// dims are x first; x varies fastest in the raw file. Other keys (ndim,
// size_bytes) are checked for consistency when present; the rest (sha256,
// licence, description...) are ignored.
#pragma once

#include "RawReader.h"

#include <string>

namespace topovox
{
namespace cli
{

struct Sidecar
{
  std::string dataPath; // the raw file, resolved next to the sidecar
  RawLayout layout;
};

// Reads and checks a sidecar; throws Error naming the file and the reason.
Sidecar readSidecar(const std::string& jsonPath);

// The sidecar of a raw file: "dir/name.json" for "dir/name.raw" or
// "dir/name.raw.gz" when it exists; "" otherwise.
std::string findSidecar(const std::string& rawPath);

} // namespace cli
} // namespace topovox
