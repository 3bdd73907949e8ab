# source: https://github.com/SBU-BMI/wsinfer/issues/79
# error: (issue "test_input and model can be on different devices": "this should be fixed to put the inputs on the
#        same device as the model", pointing at run_inference.py line 197)
# bug: run_inference moves the loaded model to cuda:0 when a GPU exists and, with speedup=True, hands it to
#      jit_compile; on PyTorch 1.x (no torch.compile) jit_compile scripts the model and runs it on
#      test_input = torch.ones(1, 3, 224, 224), a CPU tensor, so the check fails on every GPU run and the
#      except branch silently falls back to the non-compiled model with a warning. The fix (commit 5d48270, PR #80
#      "place test_input on same device as model in jit_compile") builds the input at the top of jit_compile as
#      torch.ones(1, 3, 224, 224).to(device) with device = next(model.parameters()).device; the factory line is
#      marked (DL202).
#      Reductions: run_inference keeps its device choice, model loading (a stand-in Weights with a small CNN),
#      eval/to(device), the speedup branch and the per-batch forward; the whole-slide directories, patch HDF5 files,
#      WholeSlideImagePatches dataset and CSV output become a loader of random patches.
import typing
import warnings

import torch


def jit_compile(
    model: torch.nn.Module,
) -> typing.Union[torch.jit.ScriptModule, torch.nn.Module, typing.Callable]:
    """JIT-compile a model for inference."""
    noncompiled = model
    w = "Warning: could not JIT compile the model. Using non-compiled model instead."
    # PyTorch 2.x has torch.compile.
    if hasattr(torch, "compile"):
        # Try to get the most optimized model.
        try:
            return torch.compile(model, fullgraph=True, mode="max-autotune")
        except Exception:
            pass
        try:
            return torch.compile(model, mode="max-autotune")
        except Exception:
            pass
        try:
            return torch.compile(model)
        except Exception:
            warnings.warn(w)
            return noncompiled
    # For pytorch 1.x, use torch.jit.script.
    else:
        # Attempt to script. If it fails, return the original.
        test_input = torch.ones(1, 3, 224, 224)  # expect: DL202
        try:
            mjit = torch.jit.script(model)
            with torch.no_grad():
                mjit(test_input)
        except Exception:
            warnings.warn(w)
            return noncompiled
        # Now that we have scripted the model, try to optimize it further. If that
        # fails, return the scripted model.
        try:
            mjit_frozen = torch.jit.freeze(mjit)
            mjit_opt = torch.jit.optimize_for_inference(mjit_frozen)
            with torch.no_grad():
                mjit_opt(test_input)
            return mjit_opt
        except Exception:
            return mjit


class Weights:
    """Stand-in for wsinfer._modellib.models.Weights: builds the patch classifier."""

    def load_model(self) -> torch.nn.Module:
        return torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, stride=2), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 2),
        )


def run_inference(
    weights: Weights,
    batch_size: int = 32,
    num_workers: int = 0,
    speedup: bool = False,
) -> None:
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model = weights.load_model()
    model.eval()
    model.to(device)

    if speedup:
        if typing.TYPE_CHECKING:
            model = typing.cast(torch.nn.Module, jit_compile(model))
        else:
            model = jit_compile(model)

    loader = [(torch.rand(batch_size, 3, 224, 224), torch.zeros(batch_size, 4)) for _ in range(2)]
    for batch_imgs, batch_coords in loader:
        assert batch_imgs.shape[0] == batch_coords.shape[0], "length mismatch"
        with torch.no_grad():
            logits: torch.Tensor = model(batch_imgs.to(device)).detach().cpu()
        print(logits.shape)


if __name__ == "__main__":
    run_inference(Weights(), batch_size=4, speedup=True)
