// CriticalCellLimitRun.h - for the persistence tests (CPU and GPU): runs
// computePersistence under options.maxCriticalCells and says what count
// the CriticalCellLimit it threw reported (-1: it finished instead).
#pragma once

#include "topovox/Persistence.h"

#include <cstdint>

inline int64_t reportedCriticalCells(const topovox::GridView& g, const topovox::PersistenceOptions& options)
{
  try
  {
    topovox::computePersistence(g, options);
  }
  catch (const topovox::CriticalCellLimit& e)
  {
    return e.criticalCells;
  }
  return -1;
}
