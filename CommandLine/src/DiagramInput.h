// DiagramInput.h - reads a persistence diagram that `topovox persistence`
// wrote (or cripser's array), for `topovox transport --diagrams`.
//
// Accepted: .csv (also .csv.gz) with a header line naming the columns
// dimension, birth and death (topovox's layout, with or without --batch's
// leading image column, which must then hold one image), or without a
// header line: dim,birth,death first (cripser's layout); .npy (also .npy.gz):
// a C-ordered float matrix with dim, birth, death as its first three
// columns (topovox's and cripser's layouts alike). A death of +-inf, or
// +-DBL_MAX as cripser writes it, is an essential class. Each pair's id is
// its data row, from 0.
#pragma once

#include "topovox/DiagramDistance.h"

#include <string>
#include <vector>

namespace topovox
{
namespace cli
{

// Throws Error (malformed or unreadable file) or UsageError (a layout this
// does not take), with a one-line reason that names the file.
std::vector<DiagramPair> readDiagram(const std::string& path);

} // namespace cli
} // namespace topovox
