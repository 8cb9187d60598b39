// MorphologyOnDeviceUnavailable.cpp - the device morphology API
// (MorphologyOnDevice.h) in a build without CUDA: every call says so.
#include "topovox/MorphologyOnDevice.h"

#include <stdexcept>

namespace topovox
{
namespace
{
[[noreturn]] void unavailable()
{
  throw std::runtime_error("this build of TopoVox has no CUDA: the device morphology API cannot run");
}
}

void binaryErosionOnDevice(const GridView&, const StructuringElement&, const BinaryOptions&, uint8_t*) { unavailable(); }
void binaryDilationOnDevice(const GridView&, const StructuringElement&, const BinaryOptions&, uint8_t*) { unavailable(); }
void binaryOpeningOnDevice(const GridView&, const StructuringElement&, const BinaryOptions&, uint8_t*) { unavailable(); }
void binaryClosingOnDevice(const GridView&, const StructuringElement&, const BinaryOptions&, uint8_t*) { unavailable(); }
void greyErosionOnDevice(const GridView&, const StructuringElement&, const GreyOptions&, void*) { unavailable(); }
void greyDilationOnDevice(const GridView&, const StructuringElement&, const GreyOptions&, void*) { unavailable(); }
void greyOpeningOnDevice(const GridView&, const StructuringElement&, const GreyOptions&, void*) { unavailable(); }
void greyClosingOnDevice(const GridView&, const StructuringElement&, const GreyOptions&, void*) { unavailable(); }
}
