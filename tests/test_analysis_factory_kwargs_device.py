"""``torch.zeros(n, **opts)`` where ``opts`` is a dict whose ``"device"`` entry is known
(``opts = {"dtype": torch.float32, "device": dev}``): the tensor is made on that device, as
with ``device=dev`` written out. Where the dict holds no known device entry, the device stays
unknown (it may be among entries the analysis does not see)."""

from __future__ import annotations

import textwrap

from conftest import lint

_CODE = """
    import torch

    def run(x, device):
        opts = {opts}
        made = torch.zeros(3, **opts)
        {after}
"""


def _codes(opts: str, after: str) -> list[tuple[str, int]]:
    code = textwrap.dedent(_CODE.format(opts=opts, after=after))
    return [(f.code, f.line) for f in lint(code) if f.severity in ("error", "warning")]


def test_a_gpu_device_entry_places_the_tensor():
    assert _codes('{"dtype": torch.float32, "device": torch.device("cuda")}', "return made.numpy()") == [("DL204", 7)]


def test_a_host_device_entry_meets_a_moved_tensor_as_device_written_out():
    after = "return x.to(torch.device('cuda')) + made"
    assert _codes('{"device": "cpu", "dtype": torch.float32}', after) == [("DL201", 7)]


def test_no_device_entry_says_nothing():
    assert _codes('{"dtype": torch.float32}', "return made.numpy(), x.to(torch.device('cuda')) + made") == []


def test_a_dict_changed_by_a_call_says_nothing():
    code = textwrap.dedent(_CODE.format(opts='{"device": torch.device("cuda")}', after="return made.numpy()")).replace(
        "made = torch.zeros", "opts.update(device=device)\n    made = torch.zeros"
    )
    assert [f.code for f in lint(code) if f.code == "DL204"] == []
