"""Kernels forked from a process that has already imported the heavy modules.

Importing TensorFlow costs about 4.5 s of CPU, and each of the book's pages
runs in a fresh kernel that imports it: on two cores that was half of a cold
build. `bookbuild/execute_pages.py` therefore starts one *zygote* process that
imports numpy, SymPy, matplotlib, TensorFlow (which imports JAX and Keras),
ipykernel and myst-nb's ``glue`` once, and then forks one kernel per page.
(``glue`` imports nbformat and jsonschema at its first call: 1.6 s of CPU in
each of the dozen pages that glue numbers.) A fork shares the imported
modules copy-on-write, so each kernel starts in a few milliseconds.
Nothing has run in the zygote besides the imports (no TensorFlow op, no
thread pools: one BLAS thread, and TensorFlow creates its threads on first
use), so each forked kernel is as fresh as a new process.

How a kernel is started: nbclient's KernelManager launches the kernelspec's
command, which is this file with ``kernel <connection file>``, a small stub.
The stub sends the connection file, its working folder, its environment and
its standard streams (file descriptors, over the Unix socket) to the zygote;
the zygote forks; the child takes the stub's folder, environment and streams
and becomes an ipykernel on that connection file. The stub stays alive while
the kernel lives, passes on interrupt and terminate signals, and exits when
the kernel does, so the KernelManager sees an ordinary kernel process.

The environment variables that matter at import time are the zygote's, and
they are the same values the pages set in their first cell:
``TF_CPP_MIN_LOG_LEVEL=3``, ``TF_ENABLE_ONEDNN_OPTS=0``, one BLAS thread,
and matplotlib's inline backend. tests/test_pages.py and
tests/test_portability.py fork their kernels from a zygote too; the pages
that time something, and JupyterLab's (tests/test_lab.py), run in ordinary
fresh kernels.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import sys
import time

# Set before the imports, as each page's first cell would.
IMPORT_ENV = {
    "TF_CPP_MIN_LOG_LEVEL": "3",
    "TF_ENABLE_ONEDNN_OPTS": "0",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "MPLBACKEND": "module://matplotlib_inline.backend_inline",
}
# (Not matplotlib's inline backend: importing it registers its hook that shows
# figures after each cell only when an IPython kernel is already running, so
# each kernel imports it itself, at its first figure.)
PRELOAD = (
    "numpy",
    "sympy",
    "matplotlib.pyplot",
    "tensorflow",
    "ipykernel.kernelapp",
    "IPython",
    "myst_nb.ext.glue",
)


def serve(path: str) -> None:
    """The zygote: import, listen on ``path``, fork a kernel per request."""
    os.environ.update(IMPORT_ENV)
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    # The imports' objects live as long as any kernel: frozen, Python's
    # garbage collector no longer walks them, in the zygote or in a kernel.
    # With TensorFlow imported, a full collection walked ~0.3 s of them; a
    # page ran several (its own gc.collect() calls, and any automatic one).
    # It also keeps the shared pages shared (the gc.freeze() documentation).
    gc.freeze()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the system
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(8)
    print("ready", flush=True)
    children: list[int] = []
    try:
        while True:
            conn, _ = server.accept()
            message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
            request = json.loads(message.decode("utf8"))
            if request.get("stop"):
                conn.close()
                break
            pid = os.fork()
            if pid == 0:  # the kernel
                server.close()
                conn.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                for target, fd in enumerate(fds):
                    os.dup2(fd, target)
                    os.close(fd)
                os.chdir(request["cwd"])
                os.environ.clear()
                os.environ.update(request["env"])
                # ipykernel read JPY_PARENT_PID when the zygote imported it;
                # without it, it prints its "ipython kernel" banner.
                parent = request["env"].get("JPY_PARENT_PID", "0")
                sys.argv = [
                    "ipykernel_launcher",
                    "-f",
                    request["connection_file"],
                    f"--IPKernelApp.parent_handle={parent}",
                ]
                from ipykernel import kernelapp

                try:
                    kernelapp.launch_new_instance()
                finally:
                    os._exit(0)
            for fd in fds:
                os.close(fd)
            children.append(pid)
            conn.sendall(f"{pid}\n".encode())
            conn.close()
    finally:
        for pid in children:  # any kernel whose manager gave up on it
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        server.close()


def kernel(connection_file: str) -> int:
    """The stub the KernelManager launches: ask the zygote for a kernel, then mirror it."""
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    deadline = time.monotonic() + 90
    while True:  # the zygote listens once its imports are done
        try:
            client.connect(os.environ["MATGRAD_ZYGOTE"])
            break
        except (FileNotFoundError, ConnectionRefusedError):
            if time.monotonic() > deadline:
                print("kernel_zygote: no zygote to fork a kernel from", file=sys.stderr)
                return 1
            time.sleep(0.05)
    request = {
        "connection_file": os.path.abspath(connection_file),
        "cwd": os.getcwd(),
        "env": dict(os.environ),
    }
    socket.send_fds(client, [json.dumps(request).encode("utf8")], [0, 1, 2])
    pid = int(client.makefile().readline())
    client.close()

    def forward(signum, frame):
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass
        if signum == signal.SIGTERM:
            sys.exit(0)

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return 0
        time.sleep(0.05)


class Zygote:
    """Start a zygote (context manager); kernels started inside use it.

    Sets MATGRAD_ZYGOTE and puts a python3 kernelspec that launches the stub
    first on JUPYTER_PATH, for this process and the ones it starts.
    """

    def __enter__(self):
        import subprocess
        import tempfile

        self.folder = tempfile.mkdtemp(prefix="matgrad-zygote-")
        self.path = os.path.join(self.folder, "zygote.sock")
        self.saved = {k: os.environ.get(k) for k in ("MATGRAD_ZYGOTE", "JUPYTER_PATH")}
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "serve", self.path],
            stdout=subprocess.DEVNULL,
        )
        os.environ["MATGRAD_ZYGOTE"] = self.path
        os.environ["JUPYTER_PATH"] = os.pathsep.join(
            p for p in (kernelspec(self.folder), self.saved["JUPYTER_PATH"]) if p
        )
        return self

    def __exit__(self, *exc):
        import shutil

        if self.process.poll() is None:
            try:
                client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                client.connect(self.path)
                socket.send_fds(client, [json.dumps({"stop": True}).encode("utf8")], [])
                client.close()
                self.process.wait(timeout=10)
            except Exception:  # the zygote is stuck or gone: stop it for sure
                self.process.kill()
                self.process.wait()
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(self.folder, ignore_errors=True)
        return False


def kernelspec(folder: str) -> str:
    """A Jupyter data folder whose python3 kernel is this stub (put it on JUPYTER_PATH)."""
    spec = os.path.join(folder, "kernels", "python3")
    os.makedirs(spec, exist_ok=True)
    with open(os.path.join(spec, "kernel.json"), "w") as handle:
        json.dump(
            {
                "argv": [sys.executable, os.path.abspath(__file__), "kernel", "{connection_file}"],
                "display_name": "Python 3",
                "language": "python",
            },
            handle,
        )
    return folder


if __name__ == "__main__":
    command, argument = sys.argv[1], sys.argv[2]
    if command == "serve":
        serve(argument)
    elif command == "kernel":
        sys.exit(kernel(argument))
