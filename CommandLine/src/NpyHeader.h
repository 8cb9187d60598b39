// NpyHeader.h - the preamble and header of a .npy file (format 1.0), which
// the table and image writers put before their data, and where the data go.
#pragma once

#include "OutputFile.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace topovox
{
namespace cli
{
// The magic, version and header of an array of numpy type `descr` ("<f8",
// "|u1"...) and `shape` (slowest axis first unless `fortran`), padded with
// spaces and a newline so that the data start at a multiple of 64 bytes,
// as numpy writes it.
std::string npyHeader(const std::string& descr, bool fortran, const std::vector<int64_t>& shape);

// Starts `output` as a .npy file of `header` and `dataBytes` of data: where
// the file can be mapped (OutputFile::mapSized), the header copied in and
// the address the data go to returned, for threads to fill; otherwise the
// header written through output.stream() and nullptr returned, the data to
// follow it there. (Write failures show up at output.commit().)
char* startNpy(OutputFile& output, const std::string& header, size_t dataBytes);
}
}
