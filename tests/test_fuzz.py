"""Property-based fuzzing: whatever the program, devicelint finishes without an exception and
without a DL002, and its fixes parse and are idempotent.

Profiles: "ci" (default: bounded, fixed seed, derandomized) and "soak" for long local runs:
``HYPOTHESIS_PROFILE=soak pytest tests/test_fuzz.py``.
"""

from __future__ import annotations

import os

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hypothesmith

from devicelint.engine import lint_source
from devicelint.fixer import fix_source
from devicelint.rules import all_rules

settings.register_profile(
    "ci", max_examples=150, derandomize=True, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
settings.register_profile(
    "soak", max_examples=5_000, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Generated programs such as ``1()`` make the compiler warn; that is the input, not a finding.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

RULES = all_rules()


def check(source: str) -> None:
    findings = lint_source(source, "fuzz.py", RULES)
    internal = [f.message for f in findings if f.code == "DL002"]
    assert internal == [], internal
    if any(f.code == "DL001" for f in findings):
        return
    fixed, _, _ = fix_source(source, "fuzz.py", RULES)
    cst.parse_module(fixed)
    again, applied, _ = fix_source(fixed, "fuzz.py", RULES)
    assert again == fixed and applied == 0


# --------------------------------------------------------------------------- hypothesmith


@given(hypothesmith.from_grammar())
def test_any_python_program(program):
    check("import torch\n" + program)


@given(hypothesmith.from_node())
def test_any_libcst_shaped_program(program):
    check("import torch as t\nfrom torch import nn\n" + program)


# --------------------------------------------------------------------------- torch-shaped

NAMES = st.sampled_from(["x", "y", "h", "mask", "model", "net", "criterion", "batch", "loader", "device", "w", "self.fc", "self.w"])
DEVICES = st.sampled_from(['"cuda"', '"cuda:1"', '"cpu"', "device", "0", "x.device", "args.device", "torch.float16", "rank"])
IMPORTS = st.lists(
    st.sampled_from(
        [
            "import torch",
            "import torch as t",
            "import torch as torch",
            "from torch import nn",
            "import torch.nn as nn",
            "import torch.nn.functional as F",
            "from torch.nn import CrossEntropyLoss as CE",
            "from torch.utils.data import DataLoader",
            "import os",
            "import numpy as np",
        ]
    ),
    min_size=1,
    max_size=5,
)


def _expressions() -> st.SearchStrategy[str]:
    leaves = st.one_of(
        NAMES,
        st.sampled_from(["1", "2.0", "None", "[1, 2]", "(3, 4)", '"s"']),
        st.sampled_from(
            [
                "torch.zeros(3, 4)", "torch.randn(2, 2)", "torch.tensor([1.0, 2.0])", "torch.tensor(2.0)",
                "t.ones(8)", "nn.Linear(4, 4)", "nn.ReLU()", "CE(weight=torch.ones(2))",
                "DataLoader(ds, batch_size=32)", "torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
                "torch.load('a.pt')", "np.zeros(3)", "torch.from_numpy(a)",
            ]
        ),
    )

    def receiver(text: str) -> str:
        return f"({text})" if text[:1].isdigit() else text  # `1.cuda()` would read as a float

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        inner_receiver = inner.map(receiver)
        return st.one_of(
            st.builds(lambda a, d: f"{a}.to({d})", inner_receiver, DEVICES),
            st.builds(lambda a: f"{a}.cuda()", inner_receiver),
            st.builds(lambda a: f"{a}.cpu()", inner_receiver),
            st.builds(lambda a, b, op: f"({a} {op} {b})", inner, inner, st.sampled_from(["+", "*", "@", "==", "-"])),
            st.builds(lambda a, b: f"torch.cat([{a}, {b}])", inner, inner),
            st.builds(lambda f, a: f"{f}({a})", NAMES, inner),
            st.builds(lambda a: f"{a}[0]", inner_receiver),
            st.builds(lambda a: f"{a}.numpy()", inner_receiver),
            st.builds(lambda a, b: f"({a} if {b} else {a})", inner, inner),
            st.builds(lambda a: f"[v.to(device) for v in {a}]", inner),
            st.builds(lambda a: f"{{k: v.cuda() for k, v in {a}.items()}}", inner_receiver),
        )

    return st.recursive(leaves, extend, max_leaves=6)


EXPRESSIONS = _expressions()
TARGETS = st.one_of(NAMES, st.sampled_from(["x, y", "(a, b)", "batch[0]", "os.environ['CUDA_VISIBLE_DEVICES']"]))


def _indent(block: list[str]) -> list[str]:
    return ["    " + line for line in block] or ["    pass"]


def _blocks(depth: int) -> st.SearchStrategy[list[str]]:
    simple = st.one_of(
        st.builds(lambda target, value: [f"{target} = {value}"], TARGETS, EXPRESSIONS),
        st.builds(lambda value: [value], EXPRESSIONS),
        st.builds(lambda name, op, value: [f"{name} {op} {value}"], NAMES, st.sampled_from(["+=", "*="]), EXPRESSIONS),
        st.just(["pass"]),
    )
    if depth == 0:
        return st.lists(simple, min_size=1, max_size=4).map(lambda parts: [line for part in parts for line in part])
    inner = _blocks(depth - 1)
    compound = st.one_of(
        simple,
        st.builds(lambda target, source, body: [f"for {target} in {source}:", *_indent(body)],
                  st.sampled_from(["x", "x, y", "i, (x, y)", "batch", "_"]),
                  st.sampled_from(["loader", "enumerate(loader)", "range(10)", "DataLoader(ds)", "batch.items()"]), inner),
        st.builds(lambda test, body, orelse: [f"if {test}:", *_indent(body), "else:", *_indent(orelse)], EXPRESSIONS, inner, inner),
        st.builds(lambda body: ["while True:", *_indent(body), "    break"], inner),
        st.builds(lambda context, body: [f"with {context}:", *_indent(body)],
                  st.sampled_from(["torch.no_grad()", "torch.device('cuda')", "open('f') as handle"]), inner),
        st.builds(lambda body, handler: ["try:", *_indent(body), "except Exception:", *_indent(handler)], inner, inner),
        st.builds(lambda name, body: [f"def {name}(self, x, device=None):", *_indent(body + ["return x"])],
                  st.sampled_from(["forward", "helper", "__init__", "step"]), inner),
        st.builds(lambda base, body: [f"class Net({base}):", *_indent(["def __init__(self):", *_indent(["super().__init__()"] + body)]),
                                      *_indent(["def forward(self, x):", *_indent(body + ["return x"])])],
                  st.sampled_from(["nn.Module", "torch.nn.Module", "object", "Base"]), inner),
    )
    return st.lists(compound, min_size=1, max_size=4).map(lambda parts: [line for part in parts for line in part])


PROGRAMS = st.builds(lambda imports, body: "\n".join([*imports, *body]) + "\n", IMPORTS, _blocks(2))


@given(PROGRAMS)
def test_torch_shaped_programs(program):
    cst.parse_module(program)  # the generator only writes valid Python
    check(program)
