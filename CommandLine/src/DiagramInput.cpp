// DiagramInput.cpp - see DiagramInput.h.
#include "DiagramInput.h"

#include "CommandSteps.h"
#include "Errors.h"
#include "ImageInput.h"
#include "InputFile.h"

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace topovox
{
namespace cli
{
namespace
{
// cripser marks the essential classes with +-DBL_MAX.
double deathOf(double death)
{
  return std::fabs(death) == DBL_MAX ? std::copysign(INFINITY, death) : death;
}

DiagramPair pairOf(double dimension, double birth, double death, int64_t row, const std::string& where)
{
  if (!(dimension >= 0 && dimension <= 3 && dimension == std::floor(dimension)))
    throw Error(where + ": dimension " + std::to_string(dimension) + " is not 0, 1, 2 or 3");
  if (std::isnan(birth) || std::isnan(death) || std::isinf(birth))
    throw Error(where + ": birth and death must be numbers (finite birth)");
  return { static_cast<int>(dimension), birth, deathOf(death), row };
}

std::vector<std::string> fieldsOf(const std::string& line)
{
  std::vector<std::string> out;
  std::stringstream s(line);
  std::string field;
  while (std::getline(s, field, ','))
  {
    const size_t a = field.find_first_not_of(" \t\r"), b = field.find_last_not_of(" \t\r");
    out.push_back(a == std::string::npos ? std::string() : field.substr(a, b - a + 1));
  }
  return out;
}

bool numberOf(const std::string& field, double& value)
{
  if (field.empty())
    return false;
  char* end = nullptr;
  value = std::strtod(field.c_str(), &end);
  return end == field.c_str() + field.size();
}

std::vector<DiagramPair> readCsv(const std::string& path)
{
  InputFile in(path);
  std::string text;
  std::vector<unsigned char> chunk;
  while (!(chunk = in.readUpTo(1 << 20)).empty())
    text.append(chunk.begin(), chunk.end());
  std::stringstream lines(text);
  std::string line;
  int column[4] = { 0, 1, 2, -1 }; // dimension, birth, death, image (--batch)
  bool first = true;
  double image = NAN;
  std::vector<DiagramPair> out;
  int64_t lineNumber = 0;
  while (std::getline(lines, line))
  {
    ++lineNumber;
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    const std::vector<std::string> fields = fieldsOf(line);
    const std::string where = path + " line " + std::to_string(lineNumber);
    double value;
    if (first && !numberOf(fields[0], value))
    {
      // The header: find the columns by name.
      const char* names[4] = { "dimension", "birth", "death", "image" };
      for (int k = 0; k < 4; ++k)
      {
        column[k] = -1;
        for (size_t f = 0; f < fields.size(); ++f)
          if (fields[f] == names[k])
            column[k] = static_cast<int>(f);
        if (k < 3 && column[k] < 0)
          throw UsageError(path + ": the header has no column '" + names[k] +
            "' (expected the output of topovox persistence)");
      }
      first = false;
      continue;
    }
    first = false;
    double v[4] = { 0, 0, 0, 0 };
    for (int k = 0; k < 4; ++k)
    {
      if (column[k] < 0)
        continue;
      if (static_cast<size_t>(column[k]) >= fields.size() || !numberOf(fields[static_cast<size_t>(column[k])], v[k]))
        throw Error(where + ": expected numbers in the dimension, birth and death columns");
    }
    if (column[3] >= 0)
    {
      if (!std::isnan(image) && v[3] != image)
        throw UsageError(path + " holds the diagrams of several images (--batch): give one image's");
      image = v[3];
    }
    out.push_back(pairOf(v[0], v[1], v[2], static_cast<int64_t>(out.size()), where));
  }
  return out;
}

std::vector<DiagramPair> readNpy(const std::string& path)
{
  const Image m = readImage(path, InputOptions{});
  if (m.axes != 2 || m.dims[0] < 3)
    throw UsageError(path + " is " + m.describe() + ": a diagram is a matrix of rows dim,birth,death,...");
  if (m.fortranOrder)
    throw UsageError(path + " is Fortran-ordered: save it with np.ascontiguousarray");
  const std::vector<double> v = valuesOf(m);
  const int64_t columns = m.dims[0], rows = m.dims[1];
  std::vector<DiagramPair> out;
  for (int64_t r = 0; r < rows; ++r)
  {
    const double* row = v.data() + r * columns;
    out.push_back(pairOf(row[0], row[1], row[2], r, path + " row " + std::to_string(r)));
  }
  return out;
}
} // namespace

std::vector<DiagramPair> readDiagram(const std::string& path)
{
  if (endsWith(path, ".csv") || endsWith(path, ".csv.gz"))
    return readCsv(path);
  if (endsWith(path, ".npy") || endsWith(path, ".npy.gz"))
    return readNpy(path);
  throw UsageError(path + ": a diagram is a .csv or .npy file (the output of topovox persistence)");
}

} // namespace cli
} // namespace topovox
