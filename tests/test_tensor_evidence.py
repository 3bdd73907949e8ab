"""Where a function's own code shows that a local name holds a tensor (analysis.tensor_evidence)."""

from __future__ import annotations

import libcst as cst

from devicelint.analysis.tensor_evidence import scan, takes_tensor_first


def _evidence(code: str):
    module = cst.parse_module(code)
    function = next(node for node in module.body if isinstance(node, cst.FunctionDef))
    imports = {"torch": "torch", "F": "torch.nn.functional"}

    def qualname_of(node):
        parts = []
        while isinstance(node, cst.Attribute):
            parts.append(node.attr.value)
            node = node.value
        if not isinstance(node, cst.Name) or node.value not in imports:
            return None
        return ".".join([imports[node.value], *reversed(parts)])

    return scan(function, qualname_of), module


def test_arithmetic_tensor_methods_and_torch_operands_are_tensor_uses():
    evidence, module = _evidence(
        "def step(sampler, batch):\n"
        "    t, w, m, c, h = sampler.sample(4)\n"
        "    loss = batch * w\n"
        "    u = torch.unique(t)\n"
        "    k = m.unsqueeze(0)\n"
        "    z = torch.cat([c, batch])\n"
        "    return F.softmax(h, -1)\n"
    )
    for name, shown in (("w", "batch * w"), ("t", "torch.unique(t)"), ("m", "m.unsqueeze(0)"), ("c", "torch.cat([c, batch])"), ("h", "F.softmax(h, -1)")):
        use = evidence.tensor_use(name)
        assert use is not None and module.code_for_node(use) == shown


def test_module_like_uses_rebound_names_and_spelling_are_no_evidence():
    evidence, _ = _evidence(
        "def place(builder, device, tensor_x):\n"
        "    head = builder.build()\n"
        "    head.to(device)\n"
        "    out = head(device)\n"
        "    data = builder.data()\n"
        "    n = data.size(0)\n"  # PyG's Data has size() and an in-place .to()
        "    x = builder.x()\n"
        "    x = x * 2\n"
        "    torch.save(head, 'h.pt')\n"
        "    return out, tensor_x\n"
    )
    assert evidence.tensor_use("head") is None
    assert evidence.tensor_use("data") is None
    assert evidence.tensor_use("x") is None  # bound twice
    assert evidence.tensor_use("tensor_x") is None


def test_which_torch_functions_take_a_tensor_first():
    assert takes_tensor_first("torch.unique")
    assert takes_tensor_first("torch.zeros_like")
    assert takes_tensor_first("torch.nn.functional.relu")
    assert takes_tensor_first("torch.linalg.norm")
    for name in ("torch.zeros", "torch.tensor", "torch.from_numpy", "torch.save", "torch.compile", "torch.vmap",
                 "torch.Generator", "torch.device", "torch.is_tensor", "torch.nn.functional", "torch.cuda.is_available"):
        assert not takes_tensor_first(name), name


def test_a_name_unpacked_with_a_tensor_and_never_used_as_an_object_is_a_sibling_tensor():
    evidence, module = _evidence(
        "def split(X, Y, build):\n"
        "    train_x, calib_x, train_y = stratify(X, Y)\n"
        "    train_x.to('cuda')\n"
        "    labels = torch.unique(train_y)\n"
        "    n = calib_x.shape[0]\n"
        "    net, inputs = build()\n"
        "    net.to('cuda')\n"
        "    out = net(inputs) * inputs\n"
        "    model, w = build()\n"
        "    model.eval()\n"
        "    loss = w * 2\n"
        "    a, b = build()\n"
        "    a.to('cuda')\n"
        "    return train_x, calib_x, b\n"
    )
    for name in ("train_x", "calib_x"):
        found = evidence.sibling_tensor_use(name)
        assert found is not None and found[0] == "train_y" and module.code_for_node(found[1]) == "torch.unique(train_y)"
    assert evidence.sibling_tensor_use("net") is None  # called: a model
    assert evidence.sibling_tensor_use("model") is None  # a method other than a move is read
    assert evidence.sibling_tensor_use("a") is None  # no sibling is used as a tensor



def test_an_array_whose_index_is_used_as_a_tensor_is_a_tensor():
    evidence, module = _evidence(
        "def build(self, targets, rows, boxes):\n"
        "    this = targets[targets[:, 0] == 1]\n"
        "    keep = this[:, 1] > 0\n"
        "    ids = this[keep, 0].long()\n"
        "    first = boxes[:, :2].long()\n"
        "    return ids, first, rows\n"
    )
    use = evidence.indexed_tensor_use("targets")
    assert use is not None and module.code_for_node(use) == "this[keep, 0].long()"
    assert evidence.tensor_use("targets") is not None  # DL101's question sees it too
    use = evidence.indexed_tensor_use("boxes")
    assert use is not None and module.code_for_node(use) == "boxes[:, :2].long()"


def test_indexing_without_an_array_index_or_with_numpy_methods_is_no_evidence():
    evidence, _ = _evidence(
        "def build(outputs, table, arrays, again):\n"
        "    first = outputs[0].long()\n"  # a list of tensors indexed by an int gives a tensor
        "    cell = table[1, 2].long()\n"  # a dict keyed by tuples might give one too
        "    col = arrays[:, 0]\n"
        "    top = col.argmax()\n"  # numpy arrays have argmax, squeeze and view
        "    rows = again[:, 0]\n"
        "    again = rows\n"  # bound twice
        "    return again[:, 1].long()\n"
    )
    for name in ("outputs", "table", "arrays", "again"):
        assert evidence.indexed_tensor_use(name) is None, name


def test_an_array_whose_rows_are_used_as_tensors_is_a_tensor():
    evidence, module = _evidence(
        "def nms(prediction, scores, plain, conf_thres):\n"
        "    xc = prediction[..., 4] > conf_thres\n"
        "    for xi, x in enumerate(prediction):\n"
        "        x = x[xc[xi]]\n"  # an index of the row: the same library
        "        if not x.shape[0]:\n"
        "            continue\n"
        "        conf, j = x[:, 5:].max(1, keepdim=True)\n"  # numpy's max takes `keepdims`
        "        x = torch.cat((x, conf), 1)\n"
        "    for s in scores:\n"
        "        s = s.unsqueeze(0)\n"
        "    total = scores[:, 0].sum()\n"
        "    for row in plain:\n"
        "        row.bool()\n"
        "    return plain\n"
    )
    use = evidence.indexed_tensor_use("prediction")
    assert use is not None and module.code_for_node(use) == "x[:, 5:].max(1, keepdim=True)"
    assert evidence.tensor_use("prediction") is not None
    # the row's tensor use is in the value that rebinds it: evidence still
    use = evidence.indexed_tensor_use("scores")
    assert use is not None and module.code_for_node(use) == "s.unsqueeze(0)"
    # rows of a name never indexed like an array: a list of tensors would give them too
    assert evidence.indexed_tensor_use("plain") is None


def test_rows_rebound_to_something_else_are_no_evidence_about_the_array():
    evidence, _ = _evidence(
        "def nms(prediction, other, third, mask):\n"
        "    xc = prediction[..., 4] > 0\n"
        "    for xi, x in enumerate(prediction):\n"
        "        if xi:\n"
        "            x = torch.from_numpy(x)\n"  # one arm binds a tensor whatever x was
        "        x[:, 5:].max(1, keepdim=True)\n"
        "    w = other[:, 0]\n"
        "    for y in other:\n"
        "        while y.shape[0]:\n"
        "            y[:, 0].long()\n"  # the second turn sees the y bound below
        "            y = torch.zeros(3)\n"
        "    v = third[:, 0]\n"
        "    for z in third:\n"
        "        z = np.asarray(z)\n"
        "        z.long()\n"
        "    return mask\n"
    )
    for name in ("prediction", "other", "third"):
        assert evidence.indexed_tensor_use(name) is None, name


def test_sigmoid_is_a_tensor_only_method():
    evidence, module = _evidence(
        "def head(fg_pred, logits):\n"
        "    pxy = fg_pred[:, :2].sigmoid() * 2\n"
        "    return logits.sigmoid_()\n"
    )
    use = evidence.indexed_tensor_use("fg_pred")
    assert use is not None and module.code_for_node(use) == "fg_pred[:, :2].sigmoid()"
    assert evidence.tensor_use("logits") is not None
