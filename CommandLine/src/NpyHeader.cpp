#include "NpyHeader.h"

#include <cstdio>
#include <cstring>

namespace topovox
{
namespace cli
{
std::string npyHeader(const std::string& descr, bool fortran, const std::vector<int64_t>& shape)
{
  std::string dims;
  for (size_t k = 0; k < shape.size(); ++k)
    dims += std::to_string(shape[k]) + (shape.size() == 1 ? "," : (k + 1 < shape.size() ? ", " : ""));
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
    ", 'shape': (" + dims + "), }";
  // (10 bytes of preamble come first.)
  header += std::string(63 - (10 + header.size()) % 64, ' ') + "\n";
  const char head[10] = { '\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<char>(header.size() & 0xFF),
    static_cast<char>(header.size() >> 8) };
  return std::string(head, sizeof head) + header;
}

char* startNpy(OutputFile& output, const std::string& header, size_t dataBytes)
{
  if (char* mapped = output.mapSized(header.size() + dataBytes))
  {
    std::memcpy(mapped, header.data(), header.size());
    return mapped + header.size();
  }
  std::fwrite(header.data(), 1, header.size(), output.stream());
  return nullptr;
}
}
}
