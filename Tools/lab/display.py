"""A private X display for WebKitGTK, and the environment it needs as root in a container."""
import contextlib
import os
import select
import shutil
import subprocess
import sys


@contextlib.contextmanager
def private():
    """Yields a display for WebKitGTK: DISPLAY when set, else a private Xvfb stopped on exit.

    Xvfb picks a free display number itself (-displayfd) and reclaims a lock file left by a
    server that died, so stale /tmp/.X*-lock files from killed runs never exhaust the range.
    """
    if os.environ.get("DISPLAY"):
        yield os.environ["DISPLAY"]
        return
    if not shutil.which("Xvfb"):
        sys.exit("lab: Xvfb is missing; run Tools/lab/setup (Debian: apt-get install xvfb)")
    read, write = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                            pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(write)
    try:
        number = b""
        while not number.endswith(b"\n") and select.select([read], [], [], 10)[0]:
            chunk = os.read(read, 16)
            if not chunk:
                break
            number += chunk
        if not number.strip().isdigit():
            proc.kill()
            why = proc.communicate(timeout=5)[1].decode(errors="replace").strip().splitlines()
            sys.exit("lab: could not start Xvfb" + (f": {why[-1]}" if why else ""))
        yield ":" + number.strip().decode()
    finally:
        os.close(read)
        # SIGTERM and a wait, so the server removes its socket and lock before the caller exits.
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def environment(display):
    """WebKitGTK's sandbox and GPU paths fail as root in a container (NOTES.md)."""
    return dict(os.environ, DISPLAY=display, WEBKIT_DISABLE_SANDBOX_THIS_IS_DANGEROUS="1", WEBKIT_DISABLE_COMPOSITING_MODE="1", LIBGL_ALWAYS_SOFTWARE="1")
