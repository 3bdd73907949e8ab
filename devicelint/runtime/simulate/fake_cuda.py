"""The fake CUDA shim of the simulation process: a few lines of C++ that give PyTorch a CUDA
device guard and CUDA hooks for fake GPUs only, so that fake tensors claiming ``cuda:N`` can do
what they cannot on stock PyTorch without a GPU. The simulation process sees no real GPU (the
parent hides them, see ``child_environment``), so a CPU build and a CUDA build of PyTorch, on a
machine with GPUs or without, all run the same simulation.

Why each part (checked on torch 2.13, CPU build and CUDA 13 build without a GPU):

- The device guard. Without one, a CPU build stops ``.cuda()``, ``.to("cuda")`` without an
  index, copies, boolean indexing and train-mode BatchNorm with "PyTorch is not linked with
  support for cuda devices". c10's ``FakeGuardImpl`` answers for 8 devices (``cuda:0`` to
  ``cuda:7``) and their streams, and does nothing else. (A CUDA build registers its own guard
  over this one when torch loads; seeing no GPU, ``FakeTensorMode`` replaces it with the same
  ``FakeGuardImpl``.)
- CUDA hooks that say CUDA was built and that no device has a context. Autograd asks
  ``at::accelerator`` for the current stream of every gradient on an accelerator
  (``InputBuffer::add``); with no accelerator built that stops every backward with "Cannot
  access accelerator device when none is available". ``getAccelerator`` asks the CUDA hooks'
  ``isBuilt()``. Each backward then asks the hooks whether each device (as many as the guard
  counts) has a context; a CUDA build's own hooks, seeing no GPU, stop every backward there
  with "hasPrimaryContext expects a valid device index", so these hooks are registered at a
  priority that wins over a CUDA build's. Their other answers are a CPU build's: no cuDNN (so
  RNNs run ATen's fused CUDA cells, as on a CPU build), no cuDNN runtime for the attention
  kernel chooser. ATen creates its CUDA hooks once, at first use, which happens while ``import
  torch`` runs. So the shim must be loaded before torch is imported: the simulation process
  loads it with ctypes first thing.
- Building needs torch imported (its extension builder), so it runs in a process of its own
  (``python -m devicelint.runtime.simulate.fake_cuda PATH``), once per environment.

The build is named after a hash of what identifies it: torch's version and location, the Python
ABI, ``sys.prefix`` and the source text. Two environments that share torch's extension folder
(``~/.cache/torch_extensions``) then keep one build each instead of rebuilding over each other
at every call, and a changed source gets a new build.

Nothing here imports torch at module level: the simulation process calls :func:`prepare` before
torch is imported.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from typing import Optional

SOURCE = r"""
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/FakeGuardImpl.h>

// Loaded only into devicelint's simulation process, before torch is imported.
namespace {
// Moves, copies and indexing of tensors on "cuda" need a device guard; this one only counts
// devices and streams.
c10::impl::DeviceGuardImplRegistrar devicelint_fake_cuda_guard(
    c10::DeviceType::CUDA, new c10::impl::FakeGuardImpl<c10::DeviceType::CUDA>());
}  // namespace

namespace at {
namespace {
// Autograd needs an accelerator that was built to find the stream of a CUDA gradient. Nothing
// is initialised and no context exists; every other hook keeps its CPU-build answer.
struct DevicelintFakeCUDAHooks final : CUDAHooksInterface {
  explicit DevicelintFakeCUDAHooks(CUDAHooksArgs) {}
  bool isBuilt() const override { return true; }
  bool hasPrimaryContext(DeviceIndex) const override { return false; }
  // No `override`: not every torch declares it. Where one does (the attention kernel chooser
  // of a CUDA build asks it), no cuDNN runtime.
  long versionRuntimeCuDNN() const { return 0; }
};
}  // namespace
// ATen looks its CUDA hooks up under this key, once, on first use. Preferred over a CUDA
// build's own hooks (registered at the default priority, before or after these).
C10_REGISTER_TYPED_CLASS_WITH_PRIORITY(CUDAHooksRegistry, "CUDAHooks", c10::REGISTRY_PREFERRED, DevicelintFakeCUDAHooks)
}  // namespace at
"""

DISABLE_VARIABLE = "DEVICELINT_FAKE_CUDA_GUARD"
# what the shim needs loaded first: the libraries torch's extension builder links it against
_TORCH_LIBRARIES = ("libc10.so", "libtorch_cpu.so", "libtorch.so", "libtorch_python.so")
_BUILD_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class ShimStatus:
    """What :func:`prepare` did: ``loaded`` when the shim is in the process, else ``problem``
    says why not."""

    loaded: bool
    problem: Optional[str] = None


def build_name(torch_version: str, torch_location: str, python_abi: str, prefix: str, source: str = SOURCE) -> str:
    """The shim's build name for one environment: stable within it, different across torch
    builds, Python ABIs, environments (``sys.prefix``) and source texts."""
    identity = "\0".join((torch_version, torch_location, python_abi, prefix, source))
    return "devicelint_fake_cuda_" + hashlib.sha256(identity.encode()).hexdigest()[:16]


def _torch_directory() -> Optional[str]:
    spec = importlib.util.find_spec("torch")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.realpath(list(spec.submodule_search_locations)[0])


def _torch_version() -> str:
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def current_build_name() -> str:
    python_abi = sysconfig.get_config_var("SOABI") or sys.implementation.cache_tag or ""
    return build_name(_torch_version(), _torch_directory() or "", python_abi, sys.prefix)


def extensions_root() -> str:
    """torch's extension folder, as torch's builder chooses it on Linux: ``TORCH_EXTENSIONS_DIR``,
    else ``torch_extensions`` in the user's cache folder."""
    configured = os.environ.get("TORCH_EXTENSIONS_DIR")
    if configured:
        return configured
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "torch_extensions")


def library_path(name: Optional[str] = None) -> str:
    """Where the built shim is (or will be)."""
    name = name or current_build_name()
    return os.path.join(extensions_root(), name, f"{name}.so")


def ensure_built(path: str) -> Optional[str]:
    """Build the shim at ``path`` unless it is there; None when it is, else why it is not."""
    if os.path.exists(path):
        return None
    try:
        completed = subprocess.run(
            [sys.executable, "-m", "devicelint.runtime.simulate.fake_cuda", path],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_BUILD_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"building the fake CUDA shim took more than {_BUILD_TIMEOUT_SECONDS} s"
    if completed.returncode != 0 or not os.path.exists(path):
        lines = [line for line in completed.stderr.strip().splitlines() if line.strip()]
        return "the fake CUDA shim could not be built (" + (lines[-1] if lines else f"exit code {completed.returncode}") + ")"
    return None


def prepare() -> ShimStatus:
    """Build the shim if needed and load it into this process. Call before torch is imported;
    never raises."""
    if os.environ.get(DISABLE_VARIABLE, "1") == "0":
        return ShimStatus(False, f"the fake CUDA device guard is turned off ({DISABLE_VARIABLE}=0)")
    torch_directory = _torch_directory()
    if torch_directory is None:
        return ShimStatus(False, "torch is not installed")
    if "torch" in sys.modules:
        return ShimStatus(False, "torch was imported before the fake CUDA shim could be loaded")
    path = library_path()
    problem = ensure_built(path)
    if problem is not None:
        return ShimStatus(False, problem)
    try:
        for library in _TORCH_LIBRARIES:
            ctypes.CDLL(os.path.join(torch_directory, "lib", library), mode=ctypes.RTLD_GLOBAL)
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as error:
        return ShimStatus(False, f"the fake CUDA shim could not be loaded ({error}); delete {path} to build it again")
    return ShimStatus(True)


def build(path: str) -> None:
    """Compile the shim to ``path`` with torch's extension builder (needs g++ and ninja). It is
    built in a folder of this process's own and then renamed into place, so a simulation
    running at the same time never loads a half-written library. Run by
    ``python -m devicelint.runtime.simulate.fake_cuda PATH``."""
    try:
        import ninja

        os.environ["PATH"] = ninja.BIN_DIR + os.pathsep + os.environ.get("PATH", "")
    except ImportError:
        if shutil.which("ninja") is None:  # torch's builder runs whichever `ninja` is on PATH
            raise SystemExit("devicelint: the fake CUDA shim needs ninja: pip install 'devicelint[simulate]'") from None
    from torch.utils.cpp_extension import load_inline

    directory = os.path.dirname(path)
    name = os.path.basename(directory)
    os.makedirs(directory, exist_ok=True)
    workspace = tempfile.mkdtemp(prefix="build-", dir=directory)
    try:
        load_inline(
            name,
            cpp_sources=[SOURCE],
            build_directory=workspace,
            is_python_module=False,
            no_implicit_headers=True,  # the shim needs three headers, not all of torch/extension.h
        )
        os.replace(os.path.join(workspace, f"{name}.so"), path)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


if __name__ == "__main__":
    build(sys.argv[1])
