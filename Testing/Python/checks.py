"""What the Python tests share: failures collected and printed as they
happen, and the CubicalRipser oracle or a skip when it is missing."""
import sys

failures = []


def expect(ok, what):
    """Records a failure (and prints it) when ok is false."""
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def require_cripser():
    """(cripser, tcripser), or exit 77 (CTest: skipped) when not installed."""
    try:
        import cripser
        import tcripser
    except ImportError:
        print("SKIP: the oracle cripser is not installed (pip install cripser)")
        sys.exit(77)
    return cripser, tcripser
