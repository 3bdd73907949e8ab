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
    # a call the analysis does not follow may change any entry
    code = textwrap.dedent(_CODE.format(opts='{"device": torch.device("cuda")}', after="return made.numpy()")).replace(
        "made = torch.zeros", "configure(opts)\n    made = torch.zeros"
    )
    assert [f.code for f in lint(code) if f.code == "DL204"] == []


def test_a_dict_updated_with_a_device_keyword_holds_that_device():
    # `opts.update(device=device)` stores the argument at "device", as `opts["device"] = device`
    # does: the tensor is made where `torch.zeros(3, device=device)` would be
    code = textwrap.dedent(_CODE.format(opts='{"device": "cpu"}', after="return made.numpy()")).replace(
        "made = torch.zeros", "opts.update(device=device)\n    made = torch.zeros"
    )
    written_out = textwrap.dedent(_CODE.format(opts="{}", after="return made.numpy()")).replace("3, **opts", "3, device=device")
    found = [f.code for f in lint(code) if f.code == "DL204"]
    assert found == [f.code for f in lint(written_out) if f.code == "DL204"] == ["DL204"]
