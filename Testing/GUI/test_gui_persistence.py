#!/usr/bin/env python3
"""Drives the real ParaView client under Xvfb with the TopoVox plugin and
gui_persistence.py (--script ... --exit), then reads the script's results.

Usage: test_gui_persistence.py --paraview PATH --under-xvfb run_under_xvfb.py --plugin-dir DIR
"""
import argparse
import os
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--paraview", required=True)
    ap.add_argument("--under-xvfb", required=True)
    ap.add_argument("--plugin-dir", required=True)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="topovox-gui-")
    result = os.path.join(work, "gui_result.txt")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gui_persistence.py")
    macro = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Representations", "macros",
                         "TopoVox Follow Selection.py")
    env = dict(os.environ, TOPOVOX_GUI_RESULT=result, TOPOVOX_GUI_MACRO=os.path.normpath(macro))
    p = subprocess.run([sys.executable, a.under_xvfb, "--display", "191", "--", a.paraview, "--dr",
                        "--plugin-search-paths=" + a.plugin_dir, "--plugins=TopoVox", "--script=" + script, "--exit"],
                       env=env, capture_output=True, text=True, timeout=300)
    if not os.path.exists(result):
        print("FAIL: the client wrote no result (exit %d)\n%s\n%s" % (p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
        return 1
    text = open(result).read()
    print(text, end="")
    return 0 if text.strip().endswith("gui: 0 failures") else 1


if __name__ == "__main__":
    sys.exit(main())
