// NpyHeader.h - the preamble and header of a .npy file (format 1.0), which
// the table and image writers put before their data.
#pragma once

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
}
}
