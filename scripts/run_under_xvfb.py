#!/usr/bin/env python3
"""Runs a command under a fresh Xvfb, retrying when the X server refuses it.

    run_under_xvfb.py [--display N] [--attempts K] -- command [args...]

Rendering with Debian's ParaView needs an X server (its VTK draws through
GLX). xvfb-run returns control once Xvfb has started, but on a loaded machine
the server can still refuse a connection (pvbatch then aborts with "bad X
server connection"), even after another client got through. Neither is a
fault of the command, so this script

  1. starts the command under `xvfb-run -a -n N`, through this same script in
     its inner role, which first waits (up to 30 s) for the display to answer;
  2. if the run failed and its output shows the X server refusing it, starts
     a fresh Xvfb on the next display numbers and runs the command again, up
     to K attempts (default 3).

A retried attempt's output is replaced by a one-line note; the output of the
attempt that counts is printed in full. The exit status is the command's.
"""
import argparse
import ctypes
import os
import subprocess
import sys
import time

# What a run refused by the X server prints (VTK's GLX window, Qt, Xlib, us).
REFUSALS = ("bad X server connection", "cannot open display", "could not connect to display",
            "the X display never answered")
INNER = "TOPOVOX_UNDER_XVFB_INNER"


def wait_for_display(seconds=30.0):
    x11 = ctypes.CDLL("libX11.so.6")
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    deadline = time.time() + seconds
    while time.time() < deadline:
        display = x11.XOpenDisplay(None)
        if display:
            x11.XCloseDisplay(display)
            return True
        time.sleep(0.2)
    return False


def inner(command):
    if not wait_for_display():
        print("run_under_xvfb: the X display never answered", file=sys.stderr)
        return 1
    return subprocess.call(command)


def outer(command, display, attempts):
    xvfb_run = os.environ.get("XVFB_RUN", "xvfb-run")
    env = dict(os.environ, **{INNER: "1"})
    rc = 1
    for attempt in range(1, attempts + 1):
        # Later attempts start from other display numbers: a display just
        # released can still refuse connections.
        n = display + 3 * (attempt - 1)
        run = subprocess.run([xvfb_run, "-a", "-n", str(n), "-s", "-screen 0 1280x1024x24",
                              sys.executable, os.path.abspath(__file__), "--"] + command,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             errors="replace")
        rc = run.returncode
        refused = rc != 0 and any(r in run.stdout for r in REFUSALS)
        if refused and attempt < attempts:
            print("run_under_xvfb: attempt %d: the X server refused the connection; "
                  "retrying under a fresh Xvfb" % attempt, flush=True)
            continue
        sys.stdout.write(run.stdout)
        sys.stdout.flush()
        return rc
    return rc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--display", type=int, default=99, help="first display number to try (xvfb-run -n)")
    ap.add_argument("--attempts", type=int, default=3)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command:
        ap.error("no command given")
    if os.environ.get(INNER):
        return inner(command)
    return outer(command, a.display, max(1, a.attempts))


if __name__ == "__main__":
    sys.exit(main())
