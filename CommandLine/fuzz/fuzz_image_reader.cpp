// fuzz_image_reader.cpp - libFuzzer target for every input reader of the
// topovox tool. The first byte picks the kind of file the rest becomes
// (.npy, .npy.gz, .json sidecar, raw with --dims/--dtype, .vti, .nii, and a
// persistence diagram as .csv or .npy for transport --diagrams); the reader
// must either return its result or throw one of the tool's errors: a crash,
// a hang, or a sanitizer report (address, undefined behaviour) is a bug.
#include "../src/DiagramInput.h"
#include "../src/Errors.h"
#include "../src/ImageInput.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <unistd.h>

using namespace topovox;
using namespace topovox::cli;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  if (size < 2)
    return 0;
  static const char* const kinds[] = { ".npy", ".npy.gz", ".json", ".raw", ".vti", ".nii", ".csv", ".d.npy" };
  const int kind = data[0] % 8;
  const uint8_t shape = data[1];
  data += 2;
  size -= 2;
  const std::string path = "/tmp/topovox-fuzz-" + std::to_string(getpid()) + kinds[kind];
  if (FILE* f = std::fopen(path.c_str(), "wb"))
  {
    if (size)
      std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  InputOptions options;
  if (kind == 3)
  {
    // A raw file described by options derived from the second byte.
    options.dims = { 1 + (shape & 7), 1 + ((shape >> 3) & 3) };
    const ScalarType types[] = { ScalarType::UInt8, ScalarType::Int16, ScalarType::Float32,
      ScalarType::Float64 };
    options.type = types[(shape >> 5) & 3];
    options.typeGiven = true;
    options.bigEndian = shape >> 7;
    options.byteOrderGiven = true;
  }
  try
  {
    if (kind >= 6)
      (void)readDiagram(path);
    else
    {
      const Image image = readImage(path, options);
      (void)image.view();
    }
  }
  catch (const Error&)
  {
  }
  catch (const UsageError&)
  {
  }
  std::remove(path.c_str());
  return 0;
}
