"""DL301: ``torch.jit.load`` restores a scripted module's tensors onto the devices they were saved
from, as ``torch.load`` does, unless it is given a ``map_location``."""

from __future__ import annotations

import textwrap

from conftest import lint

_CODE = """
    import torch

    def serve(path):
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = {load}
        model.to(device)
        return model
"""


def _dl301(load: str) -> list[int]:
    return [f.line for f in lint(textwrap.dedent(_CODE.replace("{load}", load))) if f.code == "DL301"]


def test_a_scripted_module_loaded_without_a_location_is_reported():
    assert _dl301("torch.jit.load(path)") == [6]


def test_a_scripted_module_mapped_to_the_chosen_device_is_silent():
    assert _dl301("torch.jit.load(path, map_location=device)") == []


def test_a_scripted_module_saved_by_the_same_run_is_silent():
    code = textwrap.dedent(
        """
        import torch

        def round_trip(model, path):
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            torch.jit.save(torch.jit.script(model), path)
            restored = torch.jit.load(path)
            return restored.to(device)
        """
    )
    assert [f.line for f in lint(code) if f.code == "DL301"] == []
