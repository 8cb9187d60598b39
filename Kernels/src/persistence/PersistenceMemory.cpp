// PersistenceMemory.cpp - the Morse engine's memory budget (Persistence.h):
// the complex's cell count, what the image's size alone needs, checked
// before computing, and the critical cells the rest holds, checked by the
// engine once it has them.
#include "topovox/Persistence.h"

#include "CubicalCells.h"

#include <algorithm>
#include <cmath>

#include <unistd.h>

namespace topovox
{
int64_t persistenceCellCount(const GridView& grid, Construction construction)
{
  return cubical::CellGrid(grid, construction).cellCount();
}

bool fitPersistenceMemory(const GridView& grid, double budgetBytes, PersistenceOptions& options, double* needed)
{
  const double cells = static_cast<double>(persistenceCellCount(grid, options.construction));
  const double voxels = static_cast<double>(grid.dims[0]) * static_cast<double>(grid.dims[1]) *
    static_cast<double>(grid.dims[2]);
  const double size = cells * kMorseBytesPerCell + voxels * static_cast<double>(scalarTypeSize(grid.type));
  if (needed)
    *needed = size;
  if (size > budgetBytes)
    return false;
  if (std::isfinite(budgetBytes))
    options.maxCriticalCells = static_cast<int64_t>(std::min(9.0e18, (budgetBytes - size) / kMorseBytesPerCriticalCell));
  return true;
}

double defaultPersistenceMemoryBudget()
{
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGE_SIZE)
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && size > 0)
    return 0.8 * static_cast<double>(pages) * static_cast<double>(size);
#endif
  return 8.0 * 1024.0 * 1024.0 * 1024.0;
}
} // namespace topovox
