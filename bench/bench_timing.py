"""What the Python benchmark drivers share: the best wall time of a call,
in milliseconds, after a warm-up, waiting for the GPU (torch) around it."""
import time

try:
    import torch
except ImportError:
    torch = None


def best_of_ms(fn, repeat=3):
    def sync():
        if torch is not None and torch.cuda.is_available():
            torch.cuda.synchronize()
    fn()
    best = float("inf")
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3
