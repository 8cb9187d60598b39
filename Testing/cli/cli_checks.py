"""What the CLI tests share: checks counted, failures printed (the first 30),
and the closing line and exit status."""
import sys

failures = []
_checks = [0]


def expect(ok, what):
    _checks[0] += 1
    if not ok:
        failures.append(what)
        if len(failures) <= 30:
            print("FAIL:", what, flush=True)


def finish():
    """Prints "N checks, M failures"; returns the exit status."""
    print("%d checks, %d failures" % (_checks[0], len(failures)), flush=True)
    return 1 if failures else 0
