"""A batch handed, as it is, to a helper of the file that gives it to a moved model or a loss
(a graph tracer, a loss wrapper) was never moved by the caller: DL203 reports it at the
caller's argument - or at the caller's assignment that took it out of a batch - where the
move belongs, not inside the helper, which does what it is for with what it is given."""

from __future__ import annotations

from conftest import lint

_HEAD = (
    "import torch\n"  # 1
    "import torch.nn.functional as F\n"  # 2
    "from torch.utils.data import DataLoader\n"  # 3
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 4
    "net = torch.nn.Linear(8, 3).to(device)\n"  # 5
)


def test_batch_handed_to_a_tracing_helper_is_reported_at_the_call():
    source = _HEAD + (
        "def trace(module, example):\n"  # 6
        "    return torch.jit.trace(module, example)\n"  # 7
        "features, labels = next(iter(DataLoader(ds, batch_size=4)))\n"  # 8
        "traced = trace(net, features.flatten(1))\n"  # 9
    )
    findings = [f for f in lint(source) if f.code == "DL203"]
    assert [f.line for f in findings] == [9]
    assert "`trace()` gives it to `module` (moved to `device` at line 5)" in findings[0].message


def test_entry_taken_out_of_a_batch_and_handed_to_a_loss_helper_is_reported_where_it_is_taken():
    source = _HEAD + (
        "def soft_loss(logits, target):\n"  # 6
        "    return F.cross_entropy(logits, target.long())\n"  # 7
        "def run(loader):\n"  # 8
        "    for batch in loader:\n"  # 9
        "        logits = net(batch['x'].to(device))\n"  # 10
        "        label = batch['y']\n"  # 11
        "        soft_loss(logits, label).backward()\n"  # 12
        "run(DataLoader(ds, batch_size=4))\n"  # 13
    )
    findings = [f for f in lint(source) if f.code == "DL203"]
    assert [f.line for f in findings] == [11]
    assert "hands it to `soft_loss()`" in findings[0].message


def test_batch_moved_before_the_helper_call_stays_quiet():
    source = _HEAD + (
        "def trace(module, example):\n"
        "    return torch.jit.trace(module, example)\n"
        "def soft_loss(logits, target):\n"
        "    return F.cross_entropy(logits, target.long())\n"
        "features, labels = next(iter(DataLoader(ds, batch_size=4)))\n"
        "traced = trace(net, features.flatten(1).to(device))\n"
        "soft_loss(net(features.to(device)), labels.to(device)).backward()\n"
    )
    assert [f for f in lint(source) if f.code in ("DL201", "DL203")] == []


def test_helper_that_draws_its_own_batch_is_still_reported_inside_it():
    # the batch is made in the helper, not handed to it: the move belongs there
    source = _HEAD + (
        "def evaluate(module, data):\n"  # 6
        "    for x, y in DataLoader(data, batch_size=4):\n"  # 7
        "        out = module(x)\n"  # 8
        "evaluate(net, ds)\n"  # 9
    )
    findings = [f for f in lint(source) if f.code == "DL203"]
    assert [f.line for f in findings] == [8]


def test_batch_handed_to_a_helper_that_feeds_its_outputs_back_is_reported_where_it_is_taken():
    # the helper rebinds its parameter to what the model made (an autoregressive loop): its
    # first step still runs the model on the caller's batch as it came in
    source = _HEAD + (
        "def rollout(steps, window):\n"  # 6
        "    outs = []\n"  # 7
        "    for _ in range(steps):\n"  # 8
        "        out = net(window)\n"  # 9
        "        outs.append(out)\n"  # 10
        "        window = torch.cat([window[:, 3:], out], dim=1)\n"  # 11
        "    return outs\n"  # 12
        "def predict(loader):\n"  # 13
        "    for batch in loader:\n"  # 14
        "        window = batch[0]\n"  # 15
        "        rollout(4, window)\n"  # 16
        "predict(DataLoader(ds, batch_size=4))\n"  # 17
    )
    findings = [f for f in lint(source) if f.code == "DL203"]
    assert [f.line for f in findings] == [15]
    assert "hands it to `rollout()`" in findings[0].message


def test_helper_that_moves_what_it_is_handed_stays_quiet():
    source = _HEAD + (
        "def rollout(steps, window):\n"
        "    window = window.to(device)\n"
        "    return [net(window) for _ in range(steps)]\n"
        "def predict(loader):\n"
        "    for batch in loader:\n"
        "        window = batch[0]\n"
        "        rollout(4, window)\n"
        "predict(DataLoader(ds, batch_size=4))\n"
    )
    assert [f for f in lint(source) if f.code in ("DL201", "DL203")] == []
