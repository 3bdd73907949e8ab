"""The cyclic garbage collector is paused while one file is linted and restored after, and a big
file's pieces do not pile up while it is paused."""

from __future__ import annotations

import gc

import libcst as cst
import pytest

import devicelint.engine as engine
from devicelint import chunking
from devicelint.engine import lint_source
from devicelint.rules import all_rules

RULES = [rule for rule in all_rules() if rule.default_enabled]
SOURCE = "import torch\nx = torch.zeros(3)\nx.cuda()\n"


@pytest.fixture
def gc_state():
    """Run a test with the collector in a known state, and give the process its own back."""
    was_enabled = gc.isenabled()
    yield
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


def _record_gc_during_parse(monkeypatch):
    seen = []
    real_parse = cst.parse_module

    def parse(text, *args, **kwargs):
        seen.append(gc.isenabled())
        return real_parse(text, *args, **kwargs)

    monkeypatch.setattr(engine.cst, "parse_module", parse)
    return seen


def test_the_collector_is_off_while_a_file_is_linted_and_back_on_after(monkeypatch, gc_state):
    gc.enable()
    seen = _record_gc_during_parse(monkeypatch)
    assert [f.code for f in lint_source(SOURCE, "a.py", RULES)] == ["DL101"]
    assert seen == [False]
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off(monkeypatch, gc_state):
    gc.disable()
    lint_source(SOURCE, "a.py", RULES)
    assert not gc.isenabled()


def test_the_collector_is_restored_when_linting_raises(monkeypatch, gc_state):
    gc.enable()

    def interrupted(text, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(engine.cst, "parse_module", interrupted)
    with pytest.raises(KeyboardInterrupt):
        lint_source(SOURCE, "a.py", RULES)
    assert gc.isenabled()


def test_a_file_linted_in_pieces_frees_each_piece_before_the_next(monkeypatch, gc_state):
    gc.enable()
    collected = []
    real_collect = engine._collect_piece

    def collect():
        collected.append(gc.isenabled())
        real_collect()

    monkeypatch.setattr(engine, "_collect_piece", collect)
    monkeypatch.setattr(engine, "CHUNK_CHARACTERS", 2_000)
    # plan_pieces binds its default size at import: hand it the small size explicitly
    monkeypatch.setattr(engine, "plan_pieces", lambda text: chunking.plan_pieces(text, size=2_000))
    source = "import torch\n" + "".join(f"def f{i}():\n    t = torch.zeros(3)\n    t.cuda()\n\n" for i in range(300))
    found = lint_source(source, "big.py", RULES)
    assert len([f for f in found if f.code == "DL101"]) == 300
    assert len(collected) > 5 and not any(collected)
    assert gc.isenabled()


def test_linting_many_files_leaves_no_cyclic_garbage_behind(gc_state):
    """What the paused collector leaves is collectable garbage, not a leak: after a young
    collection nothing of the files is still tracked (bounded memory over a long run)."""
    gc.enable()
    gc.collect()
    body = "".join(f"def f{i}(m):\n    t = torch.zeros(3)\n    t.cuda()\n    return m(t)\n\n" for i in range(40))
    lint_source("import torch\n" + body, "warm.py", RULES)
    gc.collect()
    before = len(gc.get_objects())
    for index in range(20):
        lint_source("import torch\n" + body, f"f{index}.py", RULES)
    gc.collect()
    assert len(gc.get_objects()) - before < 500


def test_a_batch_freezes_what_outlives_each_file_and_unfreezes_at_the_end(tmp_path, monkeypatch, gc_state):
    """The CLI's loop (runner._lint_chunk) freezes what outlives each file, so the collector
    does not walk the project's kept modules again and again; nothing stays frozen after it,
    and the findings are those of an unfrozen run."""
    import devicelint.runner as runner

    gc.enable()
    assert gc.get_freeze_count() == 0
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text("import torch\ndef make():\n    return torch.zeros(3)\n")
    paths = []
    for index in range(3):
        path = tmp_path / f"train{index}.py"
        path.write_text("import torch\nfrom helpers import make\nx = make()\nx.cuda()\n")
        paths.append(str(path))
    frozen_when_linting = []
    real_lint_file = runner.lint_file

    def spying(*args, **kwargs):
        frozen_when_linting.append(gc.get_freeze_count())
        return real_lint_file(*args, **kwargs)

    monkeypatch.setattr(runner, "lint_file", spying)
    results = runner._lint_chunk(paths, [rule.code for rule in RULES], False, str(tmp_path))
    assert frozen_when_linting[0] == 0 and frozen_when_linting[-1] > 0  # frozen after the first file
    assert gc.get_freeze_count() == 0  # and nothing left frozen
    assert [sorted(f.code for f in findings) for _, findings, _, _ in results] == [["DL101"]] * 3


def test_a_batch_leaves_a_callers_frozen_objects_alone(tmp_path, gc_state):
    from devicelint.runner import _lint_chunk

    gc.enable()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        path = tmp_path / "one.py"
        path.write_text(SOURCE)
        _lint_chunk([str(path)], [rule.code for rule in RULES], False)
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


MODEL_FILE = '''import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.scale = torch.ones(2)

    def forward(self, x):
        return self.fc(x) * self.scale


def train(model, loader, device):
    model.to(device)
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x.to(device)), y)
        loss.backward()
        print(loss.cpu().numpy())


train(Net(), [], torch.device("cuda"))
'''


def test_a_linted_file_leaves_no_cyclic_garbage_behind(gc_state):
    """The file's analysis is freed by reference counting as soon as its findings are out
    (engine._release): the collector, which otherwise walks the whole tree and analysis after
    each file, finds (almost) nothing of it."""
    gc.collect()
    gc.disable()
    findings = lint_source(MODEL_FILE, "model.py", RULES)
    assert findings  # the file is analysed in full, rules and all
    unreachable = gc.collect()
    assert unreachable < 200, unreachable
