// VtiReader.h - VTK XML image data (.vti, also .vti.gz), as ParaView and
// VTK's vtkXMLImageDataWriter write it: one piece; data arrays in ascii,
// inline binary (base64) or appended (raw or base64) form; uncompressed or
// zlib-compressed; UInt32 or UInt64 block headers; either byte order.
//
// The array read: the point data's active scalars, else its first array,
// else the cell data's (the voxels are then the cells). Multi-component
// arrays, several pieces, other compressors (LZ4, LZMA) and non-numeric
// types are refused with a reason. The spacing comes along; origin and
// direction are not used by the commands.
#pragma once

#include "Image.h"

#include <string>

namespace topovox
{
namespace cli
{

bool isVtiPath(const std::string& path);

// Throws Error naming the file and the reason.
Image readVti(const std::string& path);

} // namespace cli
} // namespace topovox
