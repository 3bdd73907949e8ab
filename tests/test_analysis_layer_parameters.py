"""The analysis: ``layer.weight`` / ``layer.bias`` of a torch layer (``nn.Linear``,
``nn.Embedding``) are its registered parameters, where the layer is; a tensor made on that
device in a method the code calls before moving the module is made on the host (DL103)."""

from __future__ import annotations

import textwrap

from conftest import lint


def _codes(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint(textwrap.dedent(source)) if f.severity.name in ("ERROR", "WARNING"))


_TABLE = """
    import torch
    from torch import nn

    class Lookup(nn.Module):
        def __init__(self, rows):
            super().__init__()
            self.table = nn.Embedding(rows, 3)

        def export(self):
            return self.table.weight.detach(){tail}

    if __name__ == "__main__":
        lookup = Lookup(5).to("cuda" if torch.cuda.is_available() else "cpu")
        lookup.export()
"""


def test_a_layers_weight_handed_to_numpy_is_where_the_model_is():
    assert _codes(_TABLE.replace("{tail}", ".numpy()")) == [(11, "DL204")]


def test_the_weight_copied_to_the_host_first_stays_quiet():
    assert _codes(_TABLE.replace("{tail}", ".cpu().numpy()")) == []


_ANCHORS = """
    import torch
    from torch import nn

    class Boxes(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = nn.Linear(4, 4)

        def set_priors(self, values):
            self.priors = torch.tensor(values, device=self.head.weight.device)

        def forward(self, x):
            return self.head(x) + self.priors

    if __name__ == "__main__":
        dev = "cuda" if torch.cuda.is_available() else "cpu"
        boxes = Boxes()
        boxes.set_priors([0.1, 0.2, 0.3, 0.4])
        boxes.to(dev)
        {after}
"""


def test_a_plain_tensor_made_on_the_weights_device_before_the_move_stays_behind():
    assert _codes(_ANCHORS.replace("{after}", "")) == [(11, "DL103")]


def test_a_plain_tensor_made_on_the_weights_device_after_the_move_stays_quiet():
    source = _ANCHORS.replace("        boxes.set_priors([0.1, 0.2, 0.3, 0.4])\n", "").replace("{after}", "boxes.set_priors([0.1, 0.2, 0.3, 0.4])")
    assert _codes(source) == []
