"""What the MPI tests (pvbatch --symmetric) share: this rank, failures
printed with the rank that saw them, the check that as many ranks run as the
test was registered for, and the closing line CTest reads on rank 0 (the
scripts must not sys.exit: pvbatch finalizes MPI itself)."""
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
failures = []


def expect(ok, what):
    if not ok:
        failures.append(what)
        print("rank %d FAIL: %s" % (rank, what), flush=True)


def expect_ranks():
    """The first argument is the number of ranks the test was registered for."""
    expect(size == int(sys.argv[1]), "running on %s ranks" % sys.argv[1])


def report(cases):
    """'N ranks, C cases, F failures' on rank 0, F summed over the ranks."""
    total = comm.allreduce(len(failures))
    if rank == 0:
        print("%d ranks, %d cases, %d failures" % (size, cases, total), flush=True)
