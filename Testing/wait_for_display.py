#!/usr/bin/env python3
"""Waits (up to 30 s) until the X display in $DISPLAY accepts a connection.

xvfb-run returns control once Xvfb has started, but on a loaded machine the
first connection can still be refused, and pvbatch aborts on that. Run
between xvfb-run and pvbatch:
    xvfb-run -a sh -c 'python3 wait_for_display.py && pvbatch script.py'
Exit 0 when the display answers, 1 otherwise.
"""
import ctypes
import sys
import time

x11 = ctypes.CDLL("libX11.so.6")
x11.XOpenDisplay.restype = ctypes.c_void_p
x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
deadline = time.time() + 30
while time.time() < deadline:
    display = x11.XOpenDisplay(None)
    if display:
        x11.XCloseDisplay(display)
        sys.exit(0)
    time.sleep(0.2)
print("wait_for_display: the X display never answered", file=sys.stderr)
sys.exit(1)
