"""The fact "every object of this module class stays on the host" (analysis/host_test_modules):
given for a CPU unit test's model, withheld wherever anything in the file could move one."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from devicelint.analysis.function_text import FunctionTexts
from devicelint.analysis.host_test_modules import HostTestModules

HEADER = "import pytest\nimport torch\nfrom torch import nn\n\n"
MODEL = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(2, 2)

    def forward(self, x):
        return self.layer(x + torch.rand(2))
"""


def verdicts(code: str, path: str = "tests/test_model.py") -> dict[str, bool]:
    """Each class of the file by name (the last one where a name repeats): does it stay on the host?"""
    text = HEADER + textwrap.dedent(code)
    module = cst.parse_module(text)
    facts = HostTestModules(module, path, text, FunctionTexts(module, text))
    found: dict[str, bool] = {}

    class Classes(cst.CSTVisitor):
        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            found[node.name.value] = facts.stays_on_host(node)

    module.visit(Classes())
    return found


def test_a_model_built_and_called_by_cpu_tests_stays_on_the_host():
    code = MODEL + """
@pytest.mark.parametrize("size", [1, 2])
def test_forward(size, tmp_path):
    model = Model()
    assert model(torch.ones(size, 2)).shape == (size, 2)

def test_summary():
    assert summarize(Model()).total == 6
"""
    assert verdicts(code) == {"Model": True}
    assert verdicts(code, "tests/model_test.py") == {"Model": True}


def test_a_class_defined_in_a_test_with_a_wrapper_of_the_test_stays_on_the_host():
    code = """
def test_wrapped():
    class Inner(nn.Module):
        def __init__(self):
            super(Inner, self).__init__()
            self.layer = nn.Linear(2, 3)

        def method(self):
            return self.layer(torch.rand(2, 2))

    class Wrapper(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.wrapped = module

    wrapper = Wrapper(Inner())
    assert _FabricModule(wrapper, strategy=Mock()).module is wrapper
"""
    assert verdicts(code) == {"Inner": True, "Wrapper": True}


def test_a_submodule_built_by_a_host_class_of_the_file_stays_on_the_host():
    code = MODEL + """
class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Model()

def test_outer():
    assert Outer()(torch.ones(1, 2)) is not None
"""
    assert verdicts(code) == {"Model": True, "Outer": True}


def test_only_for_pytest_test_files():
    code = MODEL + "\ndef test_forward():\n    Model()(torch.ones(1, 2))\n"
    assert verdicts(code, "src/model.py") == {"Model": False}
    assert verdicts(code, "tests/test_model.py") == {"Model": True}
    text = "import torch\nfrom torch import nn\n" + MODEL + "\ndef test_forward():\n    Model()(torch.ones(1, 2))\n"
    module = cst.parse_module(text)
    no_test_framework = HostTestModules(module, "tests/test_model.py", text, FunctionTexts(module, text))
    assert not no_test_framework.stays_on_host(next(s for s in module.body if isinstance(s, cst.ClassDef)))


@pytest.mark.parametrize(
    "test",
    [
        # moved, in any spelling
        "def test_gpu():\n    model = Model().cuda()\n",
        "def test_x():\n    model = Model()\n    model.to(dev)\n",
        "def test_x():\n    model = Model()\n    model.to_empty(dev)\n",
        "def test_x():\n    model = Model()\n    model.xpu()\n",
        "def test_x():\n    model = Model()\n    run(model, device='cpu')\n",
        "def test_x():\n    model = Model()\n    helper(model, accelerator='auto')\n",
        # handed to a framework that places the model itself
        "def test_x(tmp_path):\n    model = Model()\n    Trainer(default_root_dir=tmp_path).fit(model)\n",
        "def test_x():\n    model = Model()\n    trainer = make()\n    trainer.fit(model)\n",
        "def test_x():\n    model = Model()\n    fabric = Fabric()\n",
        "def test_x():\n    model = Model()\n    f = make()\n    f.setup(model)\n",
        "def test_x():\n    model = Model()\n    acc = make()\n    acc.prepare(model)\n",
        "def test_x():\n    run_model_test(trainer_options, Model())\n",
        # gated on a GPU, or parametrised over devices
        "@RunIf(min_cuda_gpus=1)\ndef test_x():\n    Model()\n",
        "@require_torch_gpu\ndef test_x():\n    Model()\n",
        "@pytest.mark.skipif(not torch.cuda.is_available(), reason='no GPU')\ndef test_x():\n    Model()\n",
        "@pytest.mark.parametrize('where', ['cpu', 'cuda:0'])\ndef test_x(where):\n    Model()\n",
        "@pytest.mark.parametrize('where', ['cpu', pytest.param('mps', marks=RunIf(mps=True))])\ndef test_x(where):\n    Model()\n",
        # a fixture can hand the test anything, a global hands the object to anything
        "def test_x(harness):\n    harness(Model())\n",
        "def test_x(request):\n    request.getfixturevalue('harness')(Model())\n",
        "def test_x(*args):\n    Model()\n",
        "def test_x():\n    global MODEL\n    MODEL = Model()\n",
        # a helper of the file that moves what it is handed
        "def check(model):\n    model.cuda()\n\ndef test_x():\n    check(Model())\n",
        "def check(model):\n    inner(model)\n\ndef inner(model):\n    model.to('cuda')\n\ndef test_x():\n    check(Model())\n",
        # objects built outside a test, or the class handed on as a class
        "@pytest.fixture\ndef model():\n    return Model()\n\ndef test_x(model):\n    pass\n",
        "MODEL = Model()\n\ndef test_x():\n    MODEL(torch.ones(1, 2))\n",
        "@pytest.mark.parametrize('cls', [Model])\ndef test_x(cls):\n    cls()\n",
        "def test_x():\n    Model()\n\ndef test_y():\n    assert isinstance(make(), Model)\n",
        "class TestModel:\n    def test_x(self):\n        Model()\n",
        "def make():\n    return Model()\n\ndef test_x():\n    make()\n",
        # subclassed: the class's methods run on objects of the subclass too
        "class Sub(Model):\n    pass\n\ndef test_x():\n    Model()\n",
        # never built at all: nothing shows where its objects are
        "def test_x():\n    pass\n",
    ],
)
def test_anything_that_can_move_an_object_withholds_the_fact(test):
    assert verdicts(MODEL + "\n" + test)["Model"] is False
    if "Model()" in test and "cls" not in test:
        # the same file without the placing part keeps the fact
        assert verdicts(MODEL + "\ndef test_plain():\n    Model()(torch.ones(1, 2))\n")["Model"] is True


def test_a_class_that_moves_itself_or_inherits_a_placing_base_is_not_on_the_host():
    moves_itself = MODEL.replace("self.layer = nn.Linear(2, 2)", "self.layer = nn.Linear(2, 2)\n        self.to('cuda')")
    assert verdicts(moves_itself + "\ndef test_x():\n    Model()\n")["Model"] is False
    placing_base = """
class Base(nn.Module):
    def place(self):
        return self.cuda()

class Model(Base):
    def forward(self, x):
        return x + torch.rand(2)

def test_x():
    Model()
"""
    assert verdicts(placing_base) == {"Base": False, "Model": False}


def test_a_submodule_of_a_moved_class_is_not_on_the_host():
    code = MODEL + """
class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Model()

def test_outer():
    Outer().cuda()
"""
    assert verdicts(code) == {"Model": False, "Outer": False}


def test_classes_of_one_name_in_different_tests_are_judged_apart():
    code = """
def test_host():
    class Model(nn.Module):
        def forward(self, x):
            return x + torch.rand(2)

    Model()(torch.ones(2))


def test_moved():
    class Model(nn.Module):
        def forward(self, x):
            return x + torch.rand(2)

    Model().cuda()
"""
    text = HEADER + textwrap.dedent(code)
    module = cst.parse_module(text)
    facts = HostTestModules(module, "tests/test_model.py", text, FunctionTexts(module, text))
    classes = [statement.body.body[0] for statement in module.body if isinstance(statement, cst.FunctionDef)]
    assert [facts.stays_on_host(node) for node in classes] == [True, False]
