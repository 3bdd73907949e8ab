"""Modules an object's methods place (session 15, tune15data): a trainer object that builds and
moves its model in `fit()` / `setup()`, or moves the one `__init__` built in `prepare()`."""

from __future__ import annotations

from conftest import line_codes as codes

HEAD = (
    "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\n"
    "class Trainer:\n"
    "    def __init__(self):\n"
    "        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "        {init}\n"
)
PREDICT = "    def predict(self, dataset):\n        for x in DataLoader(dataset, batch_size=8):\n            out = self.model({x})\n"


def trainer(init: str, methods: str, x: str = "x") -> str:
    return HEAD.format(init=init) + methods + PREDICT.format(x=x)


def test_a_model_built_and_moved_by_fit_is_there_for_the_other_methods():
    code = trainer("self.model = None", "    def fit(self):\n        self.model = nn.Linear(4, 1).to(self.device)\n")
    assert codes(code) == [(12, "DL203")]
    assert codes(trainer("self.model = None", "    def fit(self):\n        self.model = nn.Linear(4, 1).to(self.device)\n", "x.to(self.device)")) == []


def test_a_model_moved_in_place_by_setup_is_there_for_the_other_methods():
    code = trainer("self.model = nn.Linear(4, 1)", "    def setup(self):\n        self.model.to(self.device)\n")
    assert codes(code) == [(12, "DL203")]


def test_a_method_that_brings_the_model_back_to_the_host_leaves_it_unknown():
    methods = "    def setup(self):\n        self.model.to(self.device)\n    def release(self):\n        self.model.cpu()\n"
    assert codes(trainer("self.model = nn.Linear(4, 1)", methods)) == []


def test_methods_that_place_the_model_on_different_devices_leave_it_unknown():
    methods = (
        "    def fit(self):\n        self.model = nn.Linear(4, 1).to(self.device)\n"
        "    def load(self):\n        self.model = nn.Linear(4, 1).to('cuda:1')\n"
    )
    # (the hard-coded 'cuda:1' beside the class's choice of the CPU without a GPU is DL302's, line 11)
    assert codes(trainer("self.model = None", methods)) == [(11, "DL302")]


def test_a_model_no_method_places_stays_where_init_left_it():
    methods = "    def fit(self):\n        self.model = nn.Linear(4, 1)\n"
    assert codes(trainer("self.model = None", methods)) == []
