"""`torch.tensor(x)` / `torch.as_tensor(x)` of a numpy array or of what the function was handed is
the program's data on the host, as `torch.from_numpy` makes it: a model it reaches unmoved is
DL203's, reported once (session 15, tune15data). A literal written out stays a constant."""

from __future__ import annotations

from conftest import line_codes, lint

CODE = (
    "import numpy as np\nimport torch\nfrom torch import nn\n"
    "def predict(model, image):\n    x = {made}\n    return model(x)\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "predict(nn.Linear(3, 2).to(device), [[0.0, 1.0, 2.0]])\n"
)


def codes(made: str) -> list[tuple[int, str]]:
    return line_codes(CODE.format(made=made))


def test_a_tensor_made_from_the_functions_argument_is_a_batch_reaching_the_model():
    assert codes("torch.tensor(image)") == [(6, "DL203")]
    assert codes("torch.as_tensor(np.asarray(image)).float()") == [(6, "DL203")]


def test_a_constant_written_out_is_still_the_factorys():
    assert codes("torch.tensor([[0.0, 1.0, 2.0]])") == [(5, "DL202")]


def test_moved_on_the_way_is_quiet():
    assert codes("torch.tensor(image).to(device)") == []


def test_entries_of_a_dict_handed_to_an_imported_pipeline_are_not_its_inputs():
    code = '''
import torch
from diffusers import SomePipeline
def check(torch_device):
    pipe = SomePipeline.from_pretrained("x")
    pipe.to(torch_device)
    inputs = {"prompt": "a cat", "grid_sizes": torch.tensor([[1, 2, 2]]), "steps": 2}
    return pipe(**inputs)
'''
    # sizes a pipeline reads on the host (`.tolist()`) travel in the dict beside options: not
    # a factory meeting the pipeline's weights
    assert not [f for f in lint(code) if f.code == "DL202"]
