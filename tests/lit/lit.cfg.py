# lit configuration for onnx2mlir's FileCheck tests of emitted MLIR.
# Run: lit -v tests/lit --param build=BUILD_DIR
import os

import lit.formats

config.name = "onnx2mlir"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".test"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["inputs", "lit.cfg.py"]

build = os.path.abspath(lit_config.params.get("build", "build"))
llvm_bin = lit_config.params.get("llvm_bin", "/usr/lib/llvm-22/bin")
config.environment["PATH"] = os.pathsep.join([build, llvm_bin, os.environ.get("PATH", "")])
for var in ("HOME", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
# `run` caches compiled code: the tests keep theirs in the build tree, not
# in the user's ~/.cache (cache.test uses folders of its own)
config.environment["XDG_CACHE_HOME"] = os.path.join(build, "lit-cache")
# lit runs a test per core side by side: each run's kernels on one thread
# (threads.test asks for two explicitly), so that threads do not multiply
config.environment["ONNX2MLIR_THREADS"] = "1"

# %{status} CMD...: runs CMD, then prints "exit=<status>", so that a test can
# check the exact exit status (1: bad model, 2: bad usage) with FileCheck.
config.substitutions.append(("%{status}", os.path.join(config.test_source_root, "run_status.sh")))

# "blas": OpenBLAS is there for `run` to hand matrix products to
# (setup.sh installs libopenblas0-serial)
try:
    import ctypes

    ctypes.CDLL("libopenblas.so.0")
    config.available_features.add("blas")
except OSError:
    pass

# "x86_64": tests that name x86 CPUs (compile --cpu)
import platform

if platform.machine() == "x86_64":
    config.available_features.add("x86_64")
