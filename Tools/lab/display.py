"""A private X display for WebKitGTK, and the environment it needs as root in a container."""
import os
import shutil
import subprocess
import sys
import time


def start():
    """A private Xvfb display, unless DISPLAY is set: (the Xvfb process or None, display)."""
    if os.environ.get("DISPLAY"):
        return None, os.environ["DISPLAY"]
    if not shutil.which("Xvfb"):
        sys.exit("lab: Xvfb is missing; run Tools/lab/setup (Debian: apt-get install xvfb)")
    for n in range(97, 140):
        if not os.path.exists(f"/tmp/.X11-unix/X{n}") and not os.path.exists(f"/tmp/.X{n}-lock"):
            proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1280x800x24"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(50):
                if os.path.exists(f"/tmp/.X11-unix/X{n}"):
                    return proc, f":{n}"
                if proc.poll() is not None:
                    break
                time.sleep(0.1)
            proc.kill()
    sys.exit("lab: could not start Xvfb")


def environment(display):
    """WebKitGTK's sandbox and GPU paths fail as root in a container (NOTES.md)."""
    return dict(os.environ, DISPLAY=display, WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS="1", WEBKIT_DISABLE_COMPOSITING_MODE="1", LIBGL_ALWAYS_SOFTWARE="1")
