"""A dataset that places its own data on a device handed to its constructor gives batches on
that device (Summaries._placed_items)."""

from __future__ import annotations

from conftest import lint

from test_analysis import analyse, function_state, place

DATASET = '''
import torch
from torch.utils.data import DataLoader, Dataset


class Frames(Dataset):
    def __init__(self, paths, device=torch.device("cpu")):
        self.paths = paths
        self.device = device

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        frame = torch.tensor(load(self.paths[index]), device=self.device).float()
        return RETURNED


def run(model, paths):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = DataLoader(Frames(paths, device=device), batch_size=4)
    for batch in loader:
        out = model(batch)
        scores = batch.numpy()
'''


def test_batches_of_a_dataset_that_places_its_items_are_on_that_device():
    state = function_state(analyse(DATASET.replace("RETURNED", "frame.permute(2, 0, 1)")), "run")
    assert place(state["batch"]) == "accel"
    # in the caller's terms: the device handed to the constructor, not `self.device`
    assert state["batch"].device == state["device"].device


def test_a_model_built_on_the_host_meets_batches_the_dataset_placed():
    code = DATASET.replace("RETURNED", "frame").replace("def run(model, paths):", "def run(paths):\n    model = PIXOR()\n    model.eval()")
    code = code.replace("import torch\n", "import torch\nfrom pixor import PIXOR\n", 1)
    assert ("DL201", 26) in {(f.code, f.line) for f in lint(code)}


def test_items_brought_back_or_of_several_kinds_leave_the_device_unknown():
    for returned in ("frame.cpu()", "frame, index", "frame if index else frame.cpu()"):
        state = function_state(analyse(DATASET.replace("RETURNED", returned)), "run")
        assert place(state["batch"]) != "accel", returned
