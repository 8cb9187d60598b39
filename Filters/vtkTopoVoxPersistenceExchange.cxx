#include "vtkTopoVoxPersistenceExchange.h"

#include "vtkTopoVoxImageAdapter.h"

#include "vtkMultiProcessController.h"

#include <memory>
#include <stdexcept>
#include <string>

namespace topovox_vtk
{
namespace
{
// Runs one step on this rank, then agrees with the others on whether every
// rank succeeded; throws on all ranks if one did not.
template <typename Step>
void collectiveStep(vtkMultiProcessController* c, int ranks, const char* what, Step step)
{
  std::string error;
  long long status = 0; // 1 aborted, 2 failed
  try
  {
    step();
  }
  catch (const topovox::Aborted&)
  {
    status = 1;
  }
  catch (const std::exception& e)
  {
    status = 2;
    error = e.what();
  }
  long long worst = status;
  if (ranks > 1)
    c->AllReduce(&status, &worst, 1, vtkCommunicator::MAX_OP);
  if (worst == 1 && status != 2)
    throw topovox::Aborted{};
  if (worst != 0)
    throw std::runtime_error(error.empty() ? std::string("another rank failed while ") + what : error);
}

std::vector<int64_t> bytesInt64(const std::vector<unsigned char>& b)
{
  std::vector<int64_t> v;
  if (!topovox_vtk::appendRows(b, v))
    throw std::runtime_error("a rank sent a malformed boundary list");
  return v;
}
}

topovox::PersistenceDiagram distributedPersistence(vtkMultiProcessController* c, int ranks,
  const topovox::GridView* local, const topovox::PieceRegion& region,
  const topovox::PersistenceOptions& options)
{
  const bool root = ranks <= 1 || c->GetLocalProcessId() == 0;
  std::unique_ptr<topovox::MorsePiece> piece;
  std::unique_ptr<topovox::MorsePairing> pairing;

  // 1. Each rank: its piece's gradient, critical cells and paths.
  std::vector<unsigned char> summary;
  collectiveStep(c, ranks, "building its piece", [&] {
    if (local)
    {
      piece.reset(new topovox::MorsePiece(*local, region, options));
      summary = piece->releaseSummary().toBytes();
    }
    else
      summary = topovox::MorsePieceSummary().toBytes();
  });
  if (options.progress && !options.progress(0.4))
    throw topovox::Aborted{};

  // 2. Rank 0: every piece's critical cells, paired by union-find; the cells
  // whose boundaries the matrix needs go to every rank.
  std::vector<std::vector<unsigned char>> summaries = gatherBytesToRoot(c, ranks, summary);
  std::vector<unsigned char>().swap(summary);
  std::vector<long long> need;
  collectiveStep(c, ranks, "pairing on rank 0", [&] {
    if (!root)
      return;
    pairing.reset(new topovox::MorsePairing(region.wholeDims, options));
    for (auto& bytes : summaries)
    {
      pairing->add(topovox::MorsePieceSummary::fromBytes(bytes.data(), bytes.size()));
      std::vector<unsigned char>().swap(bytes);
    }
    for (int64_t cell : pairing->pairByUnionFind())
      need.push_back(static_cast<long long>(cell));
  });
  broadcastFromRoot(c, ranks, need);

  // 3. Each rank: the Morse boundaries of the cells it reports.
  std::vector<unsigned char> mine;
  collectiveStep(c, ranks, "computing Morse boundaries", [&] {
    if (piece)
      mine = topovox_vtk::bytesOf(piece->boundaries(std::vector<int64_t>(need.begin(), need.end())));
    piece.reset(); // the gradient is no longer needed
  });
  std::vector<std::vector<unsigned char>> lists = gatherBytesToRoot(c, ranks, mine);
  if (options.progress && !options.progress(0.8))
    throw topovox::Aborted{};

  // 4. Rank 0: the reduction and the diagram.
  topovox::PersistenceDiagram result;
  collectiveStep(c, ranks, "reducing on rank 0", [&] {
    if (!root)
      return;
    for (const auto& bytes : lists)
      pairing->addBoundaries(bytesInt64(bytes));
    result = pairing->finish();
  });
  return result;
}
}
