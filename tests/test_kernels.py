import os
import subprocess
import sys
import textwrap
import time


def test_stale_numba_cache_of_a_kernel_is_flushed_when_a_module_it_calls_changes(tmp_path):
    """numba keys its cache on the kernel's own file; flush_stale_cache also watches the callees' files."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    callee = package / "callee.py"
    callee.write_text("from numba import njit\n\n\n@njit(cache=True)\ndef g(x):\n    return x + 1\n")
    (package / "kernel.py").write_text(textwrap.dedent("""
        import os
        from numba import njit
        from olr_core.kernels import flush_stale_cache
        from . import callee

        @njit(cache=True)
        def f(x):
            return callee.g(x)

        if os.environ.get("WATCH"):
            flush_stale_cache(f, callee)
    """))

    def run(watch: bool) -> str:
        env = {**os.environ, "WATCH": "1" if watch else ""}
        out = subprocess.run([sys.executable, "-c", "from pkg.kernel import f; print(f(1))"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, check=True)
        return out.stdout.strip()

    assert run(False) == "2"
    callee.write_text(callee.read_text().replace("x + 1", "x + 2"))
    later = time.time() + 5
    os.utime(callee, (later, later))
    assert run(False) == "2"            # numba alone: stale machine code from the cache
    assert run(True) == "3"             # flushed and recompiled
