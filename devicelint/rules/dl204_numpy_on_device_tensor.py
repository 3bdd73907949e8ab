from __future__ import annotations

from typing import Optional

import libcst as cst

from devicelint.analysis import helpers
from devicelint.analysis.events import BinaryEvent, CallEvent
from devicelint.analysis.values import Homogeneous, Kind, Value
from devicelint.rule_api import FixSpec, NodeEdit
from devicelint.findings import Severity
from devicelint.rules._flag_paths import FlagPaths, flag_paths
from devicelint.rules.base import Example, Rule


def _on_accelerator(value: Value, called_numpy: bool = False) -> bool:
    # `.numpy()` itself says the receiver is a tensor, also one the analysis could not type
    if value.kind == Kind.TENSOR or called_numpy and value.kind == Kind.UNKNOWN and value.is_bare:
        # a free function's tensor argument may be on the host: its caller decides
        return value.device is not None and value.device.may_be_accelerator and not value.device.argument
    if value.kind == Kind.CONTAINER and isinstance(value.info, tuple) and value.info:
        return any(_on_accelerator(item) for item in value.info)
    if value.kind == Kind.CONTAINER and isinstance(value.info, Homogeneous):
        # a list built by `append` or a comprehension: `losses.append(loss)`, then `np.mean(losses)`;
        # numpy converts every element, so one GPU tensor appended among others is enough
        return _on_accelerator(value.info.element) or value.info.some is not None and _on_accelerator(value.info.some)
    return False


#: operators torch hands to the other operand when that is a numpy array (comparisons raise a
#: TypeError of their own)
_ARITHMETIC = (
    cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power,
)


def _appended_metric(value: Value) -> Optional[cst.CSTNode]:
    """The ``append`` that put a 0-dim GPU tensor - a metric kept for logging or plotting -
    into a list numpy reads: the place to take its ``.item()``. None for other lists (a list of
    batched results is better converted where numpy reads it)."""
    if value.kind != Kind.CONTAINER or not isinstance(value.info, Homogeneous) or value.info.put_by is None:
        return None
    for element in (value.info.element, value.info.some):
        if element is not None and element.kind == Kind.CONTAINER:
            # a row of metrics appended to a history (`history.append([errors[k] for k in names])`):
            # the metric was put into the row (or the dict it was picked from) where `.item()` belongs
            inner = _appended_metric(element)
            if inner is not None:
                return inner
        elif element is not None and _on_accelerator(element):
            return value.info.put_by if element.scalar is True else None
    return None


def _cpu_after(node: cst.BaseExpression, value: Value) -> Optional[FixSpec]:
    """``.cpu()`` after a plain name or attribute holding a tensor (not after a list of them)."""
    if value.kind == Kind.TENSOR and isinstance(node, (cst.Name, cst.Attribute)):
        return FixSpec("Insert `.cpu()`", (NodeEdit(node, "after", ".cpu()"),))
    return None


class NumpyOnDeviceTensor(Rule):
    """
    ## What it does
    Flags `.numpy()` on a tensor known to live on a GPU, and numpy functions (`np.array`,
    `np.asarray`, `np.sum`, `np.concatenate`, ...) and matplotlib calls (`plt.plot`,
    `plt.scatter(..., c=labels)`, `plt.imshow`) applied to such tensors or to lists of them
    (also a list an object keeps on `self` that one method fills, `ev.add(model(x))` doing
    `self.preds.append(out)`, and another converts, `np.concatenate(self.preds)` in `ev.result()`),
    scikit-learn's metrics (`accuracy_score(y, preds)`) and the data methods of its estimators
    (`TSNE(2).fit_transform(x)`, `km.fit(x)`: `check_array`), `scipy.stats` and `scipy.special` functions and `linear_sum_assignment`, pandas'
    `DataFrame`/`Series` and imageio's writers, which read their arrays with numpy too, audio
    writers that take host memory only (`torchaudio.save`, `soundfile.write`), and such a tensor
    stored into an element of a numpy array
    (`losses[i] = loss.data`). A
    0-dim GPU tensor appended to a list that numpy reads later (a loss or error-rate history)
    is flagged at the `append`, where `.item()` belongs; a call of a helper of the file that
    hands its parameter to numpy or matplotlib on every path (`plot_img(codes)` where
    `plot_img` calls `plt.imshow(img)`, `roc_curve(labels, scores)` where `roc_curve` starts
    with `y_true = np.asarray(y_true)`) is flagged where the GPU tensor goes in, once: the
    helper is written for numpy data. A helper written for torch tensors, which brings them to
    the host itself (`X = X.cpu()`, `predictions.numpy()`), is flagged inside, at the tensor
    it does not move.

    A GPU tensor on the left of an arithmetic operator whose right operand is a numpy array
    (`bound * np.ones(shape)`) is flagged too: torch takes no array operand, so Python hands the
    operation to numpy, which converts the tensor and fails the same way.

    The same holds for a 0-dim GPU tensor put among the values of a dict of metrics
    (`OrderedDict([("loss", loss.item()), ("acc", acc)])`) whose values are collected into a
    history that numpy reads: it is flagged at the dict's entry.

    ## Why is this bad?
    numpy reads host memory: `TypeError: can't convert cuda:0 device type tensor to numpy. Use
    Tensor.cpu() to copy the tensor to host memory first.`

    ## Example
    ```python
    predictions = model(x.to(device)).argmax(1).numpy()
    ```

    ## Use instead
    ```python
    predictions = model(x.to(device)).argmax(1).cpu().numpy()
    ```
    The fix inserts `.cpu()` before `.numpy()` (or after the tensor passed to numpy when it is
    a plain name). It is safe: the call could only raise.
    """

    code = "DL204"
    name = "numpy-on-device-tensor"
    severity = Severity.ERROR
    follows_call_sites = True
    summary = "`.numpy()` / `np.asarray` on a tensor that lives on a GPU."
    fix_safety = "safe"
    valid = (
        # the output's logits brought to the host first
        "import torch\nfrom transformers import AutoModelForSequenceClassification\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased').to(device)\ndef predict(batch):\n    outputs = model(**batch)\n    return outputs.logits.argmax(-1).cpu().numpy()\n",
        # moved under a flag, converted on the path where the flag is off (the CIFAR tutorials)
        "import numpy as np\nimport torch\ntrain_on_gpu = torch.cuda.is_available()\nmodel = torch.nn.Linear(4, 2)\n"
        "images = torch.rand(8, 4)\nif train_on_gpu:\n    model.cuda()\n    images = images.cuda()\n"
        "_, preds = torch.max(model(images), 1)\n"
        "labels = np.squeeze(preds.numpy()) if not train_on_gpu else np.squeeze(preds.cpu().numpy())\n",
        "import torch\nx = torch.randn(3, device='cuda')\ny = x.cpu().numpy()\n",
        "import torch\nx = torch.randn(3)\ny = x.numpy()\n",
        "import numpy as np\nimport torch\ndef f(x):\n    return np.asarray(x)\n",
        # the helper reaches numpy only with what is not a tensor, or after moving it
        "import numpy as np\nimport torch\ndef to_numpy(x):\n    if torch.is_tensor(x):\n        return x.detach().cpu().numpy()\n"
        "    return np.asarray(x)\ncodes = torch.eye(4, device='cuda')\narr = to_numpy(codes)\n",
        "import torch\nfrom matplotlib import pyplot as plt\ndef show(img):\n    img = img.cpu()\n    plt.imshow(img)\n"
        "codes = torch.eye(4, device='cuda')\nshow(codes)\n",
        # a moved model's outputs live on its device, but an output nothing uses as a tensor may
        # be a Python float (`kl_div.item()` returned by its forward): numpy reads that fine
        "import numpy as np\nimport torch\nfrom vae import VAE\nmodel = VAE(3).cuda()\nfor batch in range(3):\n"
        "    loss, kl_div, acc = model(batch)\n    loss.backward()\n    meters = np.array([kl_div, loss.item(), acc.cpu() * 100])\n",
        # every metric of the dict taken with `.item()`: the history holds Python numbers
        "from collections import OrderedDict\nimport numpy as np\nimport torch\nhistory = []\nfor step in range(3):\n"
        "    loss = torch.randn(8, device='cuda').pow(2).mean()\n    acc = (torch.randn(8, device='cuda') > 0).float().mean()\n"
        "    errors = {'loss': loss.item(), 'acc': acc.item()}\n"
        "    history.append([errors[k] for k in ('loss', 'acc')])\nprint(np.array(history))\n",
        # a model wrapper driven from outside: `to_host()` left a host copy in `fake_B` before
        # `show()` reads it
        "import torch\nfrom torch import nn\nfrom matplotlib import pyplot as plt\n"
        "class Pix2Pix:\n    def __init__(self, device):\n        self.device = device\n"
        "        self.netG = nn.Conv2d(3, 3, 1).to(device)\n    def set_input(self, data):\n"
        "        self.real_A = data.to(self.device)\n    def forward(self):\n        self.fake_B = self.netG(self.real_A)\n"
        "    def to_host(self):\n        self.fake_B = self.fake_B.cpu()\n"
        "    def show(self):\n        plt.imshow(self.fake_B[0, 0].detach())\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = Pix2Pix(device)\n"
        "model.set_input(torch.randn(1, 3, 8, 8))\nmodel.forward()\nmodel.to_host()\nmodel.show()\n",
        # the state_dict of a model that was never moved holds host tensors
        "import torch\nfrom torch import nn\nmodel = nn.Linear(4, 2)\nweights = model.state_dict()\n"
        "arrays = {key: weights[key].numpy() for key in weights}\n",
        # the helper moves what it is given before numpy reads it; and a helper called with host
        # arrays only is fine whatever it does
        "import numpy as np\nimport torch\ndef roc_curve(y_true, y_score):\n    if torch.is_tensor(y_true):\n"
        "        y_true, y_score = y_true.cpu(), y_score.cpu()\n    y_true, y_score = np.asarray(y_true), np.asarray(y_score)\n"
        "    return np.argsort(-y_score), y_true\ndef auc(x, y):\n    x = np.asarray(x)\n    return np.trapz(np.asarray(y), x)\n"
        "scores = torch.rand(8, device='cuda')\nprint(roc_curve(torch.zeros(8, device='cuda'), scores))\n"
        "print(auc(scores.cpu().numpy(), [0.5] * 8))\n",
        # the trainer brings the predictions to the host before its metric callback reads them
        "import torch\nfrom torch import nn\nclass Trainer:\n    def __init__(self, model, metric):\n"
        "        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n        self.model = model.to(self.device)\n"
        "        self.metric = metric\n    def evaluate(self, x, y):\n        y_pred = self.model(x.to(self.device)).argmax(1)\n"
        "        return self.metric(y_pred.cpu(), y)\ndef accuracy(predictions, labels):\n"
        "    return (predictions.numpy() == labels).mean()\n"
        "trainer = Trainer(nn.Linear(4, 3), accuracy)\nprint(trainer.evaluate(torch.randn(2, 4), [0, 1]))\n",
        # every metric of the merged dict is a Python number, or is brought to the host first
        "import numpy as np\nimport torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "def metrics(x):\n    order = torch.argsort(x.to(device))\n    return dict(mse=x.pow(2).mean().item(), order=order.tolist())\n"
        "def tensors(x):\n    return dict(mse=x.pow(2).mean().item(), order=torch.argsort(x.to(device)))\n"
        "def dump(found):\n    for name, val in found.items():\n        print(name, np.asarray(val).tolist())\n"
        "def dump_tensors(found):\n    for name, val in found.items():\n        if torch.is_tensor(val):\n            val = val.cpu()\n"
        "        print(name, np.asarray(val).tolist())\n"
        "dump(dict(**metrics(torch.randn(8)), size=8))\ndump_tensors(dict(**tensors(torch.randn(8)), size=8))\n",
        # a running total of `.item()` values is a Python number
        "import numpy as np\nimport torch\nclass Stats:\n    def __init__(self):\n        self.loss = 0\n"
        "    def add(self, loss):\n        self.loss += loss.item()\n    def perplexity(self):\n        return np.exp(self.loss)\n"
        "stats = Stats()\nstats.add(torch.ones(2, device='cuda').sum())\nprint(stats.perplexity())\n",
    )
    invalid = (
        # scikit-learn's metrics read their arrays with numpy
        Example(
            "import torch\nfrom sklearn.metrics import accuracy_score\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = torch.nn.Linear(4, 2).to(device)\ndef evaluate(x, y):\n    preds = model(x.to(device)).argmax(1)\n    return accuracy_score(y, preds)  # expect: DL204\n",
            "import torch\nfrom sklearn.metrics import accuracy_score\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = torch.nn.Linear(4, 2).to(device)\ndef evaluate(x, y):\n    preds = model(x.to(device)).argmax(1)\n    return accuracy_score(y, preds.cpu())  # expect: DL204\n",
        ),
        # a field of a transformers model's output (`.logits`) is where the model is
        Example(
            "import torch\nfrom transformers import AutoModelForSequenceClassification\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased').to(device)\ndef predict(batch):\n    outputs = model(**batch)\n    return outputs.logits.argmax(-1).numpy()  # expect: DL204\n",
            "import torch\nfrom transformers import AutoModelForSequenceClassification\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased').to(device)\ndef predict(batch):\n    outputs = model(**batch)\n    return outputs.logits.argmax(-1).cpu().numpy()  # expect: DL204\n",
        ),
        Example(
            "import numpy as np\nimport torch\nlosses = np.zeros((100, 1))\nloss = torch.ones(1, device='cuda').mean()\n"
            "losses[3] = loss.data  # expect: DL204\n",
            "import numpy as np\nimport torch\nlosses = np.zeros((100, 1))\nloss = torch.ones(1, device='cuda').mean()\n"
            "losses[3] = loss.data.cpu()  # expect: DL204\n",
        ),
        Example(
            "import torch\nx = torch.randn(3, device='cuda')\ny = x.numpy()  # expect: DL204\n",
            "import torch\nx = torch.randn(3, device='cuda')\ny = x.cpu().numpy()  # expect: DL204\n",
        ),
        Example(
            "import torch\nfrom matplotlib import pyplot as plt\nlabels = torch.zeros(3, device='cuda')\n"
            "plt.scatter([0, 1, 2], [1, 2, 3], c=labels)  # expect: DL204\n",
            "import torch\nfrom matplotlib import pyplot as plt\nlabels = torch.zeros(3, device='cuda')\n"
            "plt.scatter([0, 1, 2], [1, 2, 3], c=labels.cpu())  # expect: DL204\n",
        ),
        Example(
            # a helper of the file that hands its parameter to matplotlib: flagged where the GPU
            # tensor goes in (once: not again where the helper's numpy reads it)
            "import torch\nfrom matplotlib import pyplot as plt\ndef show(img, path):\n"
            "    plt.imshow(img, cmap='gray')\n    plt.savefig(path)\n"
            "codes = torch.eye(4, device='cuda')\nshow(codes.t(), 'codes.png')  # expect: DL204\n"
        ),
        Example(
            # a helper that brings some of its tensors to the host itself takes device tensors by
            # design: the one it forgot is its own bug, flagged there (not at its call)
            "import torch\nfrom matplotlib import pyplot as plt\ndef plot_data(X, y):\n    X = X.cpu()\n"
            "    plt.scatter(X.numpy()[:, 0], X.numpy()[:, 1], c=y)  # expect: DL204\n"
            "X = torch.zeros(30, 2, device='cuda')\ny = torch.zeros(30, device='cuda')\nplot_data(X, y)\n",
            "import torch\nfrom matplotlib import pyplot as plt\ndef plot_data(X, y):\n    X = X.cpu()\n"
            "    plt.scatter(X.numpy()[:, 0], X.numpy()[:, 1], c=y.cpu())  # expect: DL204\n"
            "X = torch.zeros(30, 2, device='cuda')\ny = torch.zeros(30, device='cuda')\nplot_data(X, y)\n",
        ),
        Example(
            # a dict of metrics, floats but for one GPU tensor, merged into another and iterated:
            # the iteration that comes to the tensor hands it to numpy
            "import numpy as np\nimport torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "def metrics(x):\n    order = torch.argsort(x.to(device))\n    return dict(mse=x.pow(2).mean().item(), order=order)\n"
            "def report(x):\n    return dict(**metrics(x), size=len(x))\n"
            "def dump(found):\n    for name, val in found.items():\n        print(name, np.asarray(val).tolist())  # expect: DL204\n"
            "dump(report(torch.randn(8)))\n"
        ),
        Example(
            # the outputs of a moved model of unknown class, collected in a loop and joined by
            # `torch.cat`: a tensor on the model's device
            "import torch\nfrom nets import WaveNet\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "model = WaveNet().to(device)\nmeans = []\nfor batch in [torch.zeros(2, 3)]:\n"
            "    mean, std = model(batch.to(device))\n    means.append(mean)\n"
            "all_means = torch.cat(means).numpy()  # expect: DL204\n",
            "import torch\nfrom nets import WaveNet\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "model = WaveNet().to(device)\nmeans = []\nfor batch in [torch.zeros(2, 3)]:\n"
            "    mean, std = model(batch.to(device))\n    means.append(mean)\n"
            "all_means = torch.cat(means).cpu().numpy()  # expect: DL204\n",
        ),
        Example(
            # a metric callback kept on a trainer, handed the moved model's predictions: the
            # callback, written for tensors, calls `.numpy()` on a GPU one
            "import torch\nfrom torch import nn\nclass Trainer:\n    def __init__(self, model, metric):\n"
            "        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n        self.model = model.to(self.device)\n"
            "        self.metric = metric\n    def evaluate(self, x, y):\n        y_pred = self.model(x.to(self.device)).argmax(1)\n"
            "        return self.metric(y_pred, y)\ndef accuracy(predictions, labels):\n"
            "    return (predictions.numpy() == labels).mean()  # expect: DL204\n"
            "trainer = Trainer(nn.Linear(4, 3), accuracy)\nprint(trainer.evaluate(torch.randn(2, 4), [0, 1]))\n",
            "import torch\nfrom torch import nn\nclass Trainer:\n    def __init__(self, model, metric):\n"
            "        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n        self.model = model.to(self.device)\n"
            "        self.metric = metric\n    def evaluate(self, x, y):\n        y_pred = self.model(x.to(self.device)).argmax(1)\n"
            "        return self.metric(y_pred, y)\ndef accuracy(predictions, labels):\n"
            "    return (predictions.cpu().numpy() == labels).mean()  # expect: DL204\n"
            "trainer = Trainer(nn.Linear(4, 3), accuracy)\nprint(trainer.evaluate(torch.randn(2, 4), [0, 1]))\n",
        ),
        Example(
            # a plotting helper that unnormalises what it is handed first (`img / 2 + 0.5` keeps
            # a tensor where it is): the call that hands it GPU images is the bug
            "import numpy as np\nimport torch\nfrom matplotlib import pyplot as plt\ndef imshow(img):\n"
            "    img = img / 2 + 0.5\n    plt.imshow(np.transpose(img, (1, 2, 0)))\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "images = torch.rand(4, 3, 8, 8).to(device)\nimshow(images[0])  # expect: DL204\n"
        ),
        Example(
            # a scikit-learn-like helper that converts its parameters as its first step
            # (`y_true = np.asarray(y_true)`): the call that hands it GPU scores is the bug
            "import numpy as np\nimport torch\ndef roc_curve(y_true, y_score):\n"
            "    y_true, y_score = np.asarray(y_true), np.asarray(y_score)\n    return np.argsort(-y_score), y_true\n"
            "def roc(labels, scores):\n    return roc_curve(labels, scores)  # expect: DL204\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "print(roc(torch.zeros(8, device=device), torch.rand(8, device=device)))\n"
        ),
        Example(
            # a 0-dim GPU metric appended to a history that numpy reads: flagged at the append
            "import numpy as np\nimport torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "losses = []\nfor step in range(10):\n    loss = torch.randn(8, device=device).pow(2).mean()\n"
            "    losses.append(loss)  # expect: DL204\nprint(np.mean(losses))\n"
        ),
        Example(
            # unpacking what a moved model of unknown class returns: each output is on its device
            "import torch\nfrom vae import VAE\nmodel = VAE(3).cuda()\nfor batch in range(3):\n    loss, scores = model(batch)\n"
            "    probs = scores.numpy()  # expect: DL204\n",
            "import torch\nfrom vae import VAE\nmodel = VAE(3).cuda()\nfor batch in range(3):\n    loss, scores = model(batch)\n"
            "    probs = scores.cpu().numpy()  # expect: DL204\n",
        ),
        Example(
            # a dict of metrics whose accuracy stays a 0-dim GPU tensor, its values collected into
            # a history that numpy reads: flagged at the dict's entry
            "from collections import OrderedDict\nimport numpy as np\nimport torch\nhistory = []\nfor step in range(3):\n"
            "    loss = torch.randn(8, device='cuda').pow(2).mean()\n    acc = (torch.randn(8, device='cuda') > 0).float().mean()\n"
            "    errors = OrderedDict([('loss', loss.item()), ('acc', acc)])  # expect: DL204\n"
            "    history.append([errors[k] for k in ('loss', 'acc')])\nprint(np.array(history))\n"
        ),
        Example(
            # a moved model's state_dict holds its own tensors, on its device
            "import torch\nfrom torch import nn\nmodel = nn.Linear(4, 2).cuda()\nweights = model.state_dict()\n"
            "for key in weights:\n    array = weights[key].numpy()  # expect: DL204\n",
            "import torch\nfrom torch import nn\nmodel = nn.Linear(4, 2).cuda()\nweights = model.state_dict()\n"
            "for key in weights:\n    array = weights[key].cpu().numpy()  # expect: DL204\n",
        ),
        Example(
            # an attribute reset to 0 and accumulating a GPU loss holds a GPU tensor after a step
            "import numpy as np\nimport torch\nclass Stats:\n    def __init__(self):\n        self.loss = 0\n"
            "    def add(self, loss):\n        self.loss += loss\n    def perplexity(self):\n"
            "        return np.exp(self.loss)  # expect: DL204\n"
            "stats = Stats()\nstats.add(torch.ones(2, device='cuda').sum())\nprint(stats.perplexity())\n",
            "import numpy as np\nimport torch\nclass Stats:\n    def __init__(self):\n        self.loss = 0\n"
            "    def add(self, loss):\n        self.loss += loss\n    def perplexity(self):\n"
            "        return np.exp(self.loss.cpu())  # expect: DL204\n"
            "stats = Stats()\nstats.add(torch.ones(2, device='cuda').sum())\nprint(stats.perplexity())\n",
        ),
        Example(
            # a model wrapper driven from outside (pix2pix's BaseModel): what `forward()` left on
            # the object is what `show()` reads next, a GPU image
            "import torch\nfrom torch import nn\nfrom matplotlib import pyplot as plt\n"
            "class Pix2Pix:\n    def __init__(self, device):\n        self.device = device\n"
            "        self.netG = nn.Conv2d(3, 3, 1).to(device)\n    def set_input(self, data):\n"
            "        self.real_A = data.to(self.device)\n    def forward(self):\n        self.fake_B = self.netG(self.real_A)\n"
            "    def to_host(self):\n        self.fake_B = self.fake_B.cpu()\n"
            "    def show(self):\n        plt.imshow(self.fake_B[0, 0].detach())  # expect: DL204\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = Pix2Pix(device)\n"
            "model.set_input(torch.randn(1, 3, 8, 8))\nmodel.forward()\nmodel.show()\nmodel.to_host()\n"
        ),
        Example(
            "import numpy as np\nimport torch\nx = torch.ones(3, device='cuda')\nm = np.mean(x)  # expect: DL204\n",
            "import numpy as np\nimport torch\nx = torch.ones(3, device='cuda')\nm = np.mean(x.cpu())  # expect: DL204\n",
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: numpy calls in helpers of the file whose GPU argument was reported at the helper's
        #: call (see _handed_to_numpy_by_helper): one bug, reported where the caller can fix it
        self._reported_at_calls: set[cst.Call] = set()
        #: the flags each call of the file runs under (see _flag_paths), walked on demand
        self._flags: Optional[FlagPaths] = None

    def on_ndarray_store(self, target: cst.Subscript, value_node: cst.BaseExpression, value: Value) -> None:
        """``losses[i] = loss.data``: numpy converts the stored tensor with ``__array__``."""
        if not _on_accelerator(value):
            return
        fix = _cpu_after(value_node, value)
        self.ctx.report(
            target,
            f"`{self.ctx.source_of(value_node)}` lives on {value.device.describe()}: storing it into a numpy array "
            "raises \"can't convert cuda:0 device type tensor to numpy\"; store `.item()` or move it with `.cpu()` first",
            fix=fix,
        )

    def on_index(self, node: cst.Subscript, base: Value, index_node: cst.BaseExpression, index: Value) -> None:
        """``array[gpu_index]``: numpy converts a tensor index with ``__array__`` - which fails on
        a GPU (a host index is fine)."""
        if base.kind != Kind.NDARRAY or index.kind != Kind.TENSOR or index.scalar is True or not _on_accelerator(index):
            # (a 0-dim index is read with `__index__`, which copies the one number: fine)
            return
        self.ctx.report(
            node,
            f"`{self.ctx.source_of(index_node)}` lives on {index.device.describe()} and indexes the numpy array "
            f"`{self.ctx.source_of(node.value)}`: numpy converts the index and raises \"can't convert cuda:0 device type tensor "
            "to numpy\"; move the index with `.cpu()` (or make the array a tensor on its device)",
        )

    def on_binary(self, event: BinaryEvent) -> None:
        """``gpu_tensor * array``: torch takes no ndarray operand, so Python hands the operation
        to the array, and numpy converts the tensor (``__array__``) - which fails on a GPU.
        (``array * gpu_tensor`` fails too, with a TypeError that names no device: left alone.)"""
        operator = getattr(event.node, "operator", None)
        if not isinstance(operator, _ARITHMETIC) or event.right.kind != Kind.NDARRAY:
            return
        if event.left.kind != Kind.TENSOR or not _on_accelerator(event.left):
            return
        if isinstance(event.node, cst.AugAssign):
            return  # `t *= array`: not seen to fail this way
        self.ctx.report(
            event.node,
            f"`{self.ctx.source_of(event.left_node)}` lives on {event.left.device.describe()} and "
            f"`{self.ctx.source_of(event.right_node)}` is a numpy array: torch does not take the array, "
            "so numpy converts the tensor and raises \"can't convert cuda:0 device type tensor to numpy\"; "
            "move the tensor with `.cpu()` first (or make the array a tensor on its device)",
        )

    def _placed_on_another_path(self, call: cst.Call, value: Value) -> bool:
        """Was ``value`` put on the accelerator by a call that runs only under the opposite
        setting of a flag ``call`` runs under (``if train_on_gpu: images = images.cuda()``, then
        ``x.numpy() if not train_on_gpu else x.cpu().numpy()``)? Then on the path that reaches
        ``call`` it is where it was before, on the host."""
        origin = value.origin
        if origin is None or not isinstance(origin.node, cst.Call):
            return False
        if self._flags is None:
            self._flags = flag_paths(self.ctx.module)
        return self._flags.exclusive(call, origin.node)

    def on_call(self, event: CallEvent) -> None:
        if event.method == "numpy" and event.receiver is not None and _on_accelerator(event.receiver, called_numpy=True):
            if self._placed_on_another_path(event.node, event.receiver):
                return
            func = event.node.func
            assert isinstance(func, cst.Attribute)
            self.ctx.report(
                event.node,
                f"`{self.ctx.source_of(func.value)}` lives on {event.receiver.device.describe()}: `.numpy()` "
                "raises \"can't convert cuda:0 device type tensor to numpy\"; call `.cpu()` first",
                fix=FixSpec("Insert `.cpu()`", (NodeEdit(func.value, "after", ".cpu()"),)),
            )
            return
        if event.qualname is None:
            estimator = self._sklearn_estimator(event)
            if estimator is not None:
                self._check_estimator_input(event, estimator)
                return
            self._handed_to_numpy_by_helper(event)
            return
        for arg, value in event.args:
            if helpers.numpy_reads(event.qualname, arg.keyword.value if arg.keyword is not None else None) and _on_accelerator(value):
                if event.node in self._reported_at_calls or self._said_at_the_call(arg.value):
                    return
                put_by = _appended_metric(value)
                if put_by is not None:
                    self._report_append(put_by, event, arg.value)
                    return
                fix = _cpu_after(arg.value, value)
                reader = (
                    f"`{event.qualname}` writes from host memory only" if event.qualname in helpers.HOST_MEMORY_WRITERS
                    else "numpy cannot read them (\"can't convert cuda:0 device type tensor to numpy\")"
                )
                self.ctx.report(
                    event.node,
                    f"`{self.ctx.source_of(arg.value)}` holds GPU tensors: {reader}; move them with `.cpu()` first",
                    fix=fix,
                )
                return

    def _sklearn_estimator(self, event: CallEvent) -> Optional[str]:
        """The scikit-learn class of the object whose input-checking method is called
        (``TSNE(n_components=2).fit_transform(x)``, ``km = KMeans(3)`` then ``km.fit(x)``): the
        class whose construction the analysis traced the receiver to (see
        devicelint.analysis.constructions); None where the receiver is not known to be one."""
        receiver = event.receiver
        if event.method not in _ESTIMATOR_METHODS or receiver is None or receiver.kind != Kind.UNKNOWN:
            return None
        origin = receiver.origin
        if origin is None or not origin.construction or not isinstance(origin.node, cst.Call):
            return None
        name = self.ctx.analyzer.qualname_of(origin.node.func, event.state) or ""
        return name if name.startswith("sklearn.") and "array_api_dispatch" not in self.ctx.source else None

    def _check_estimator_input(self, event: CallEvent, estimator: str) -> None:
        """scikit-learn's estimators check the data they are given (``X``, ``y``) with
        ``check_array``, which converts it with ``np.asarray``: a GPU tensor fails there."""
        positional = 0
        for arg, value in event.args:
            if arg.star:
                return
            if arg.keyword is None:
                positional += 1
                if positional > 2:
                    continue
            elif arg.keyword.value not in ("X", "y"):
                continue
            if not _on_accelerator(value) or self._said_at_the_call(arg.value):
                continue
            self.ctx.report(
                event.node,
                f"`{self.ctx.source_of(arg.value)}` holds GPU tensors: `{estimator.rsplit('.', 1)[-1]}.{event.method}` checks its "
                "input with numpy, which cannot read them (\"can't convert cuda:0 device type tensor to numpy\"); move them with "
                "`.cpu()` first",
                fix=_cpu_after(arg.value, value),
            )
            return

    def _said_at_the_call(self, read: cst.BaseExpression) -> bool:
        """In a pass of one call of the function (see Rule.follows_call_sites), numpy reads a
        parameter as it came in: that call is where this rule reports it (the helper hands it
        to numpy, see _handed_to_numpy_by_helper) - one bug, one finding."""
        function = self.ctx.current_function.node
        if self.ctx.call_context is None or function is None:
            return False
        return self.ctx.analyzer.parameter_read_unchanged(function, read) is not None

    def _report_append(self, put_by: cst.CSTNode, event: CallEvent, list_node: cst.BaseExpression) -> None:
        """A 0-dim GPU tensor (a metric) appended to a history list that numpy reads later:
        flagged at the ``append``, where ``.item()`` keeps the list on the host."""
        if isinstance(put_by, cst.Call):
            appended = self.ctx.source_of(put_by.args[0].value) if put_by.args else "the value"
            kept = "appended to"
        else:
            appended = self.ctx.source_of(put_by)  # an entry of a dict or list display
            kept = "kept among the values of"
        self.ctx.report(
            put_by,
            f"`{appended}` is a 0-dim GPU tensor, {kept} `{self.ctx.source_of(list_node)}`, which "
            f"`{self.ctx.source_of(event.node.func)}` reads with numpy at line {self.ctx.line(event.node)}: it raises "
            f"\"can't convert cuda:0 device type tensor to numpy\"; {'append' if isinstance(put_by, cst.Call) else 'put'} "
            "`.item()` (or `.cpu()`) instead",
            related=((event.node, "numpy reads the list here"),),
        )

    def _handed_to_numpy_by_helper(self, event: CallEvent) -> None:
        """``plot_img(codes)`` where ``plot_img`` hands its parameter to ``plt.imshow``: the
        helper fails on the GPU tensor given to it; the call is where to move it."""
        if not any(_on_accelerator(value) for _, value in event.args):
            return  # spare the look into the callee
        read = [
            (arg, value, parameter, numpy_call)
            for arg, value, parameter, numpy_call in self.ctx.analyzer.arguments_read_by_numpy(event.node, event.callee, event.args)
            if _on_accelerator(value)
        ]
        # the helper's own numpy calls on these parameters are this bug too: said here only
        self._reported_at_calls.update(numpy_call for _, _, _, numpy_call in read)
        if not read:
            return
        arg, value, parameter, numpy_call = read[0]
        helper = self.ctx.source_of(event.node.func)
        self.ctx.report(
            event.node,
            f"`{helper}()` hands `{parameter}` to `{self.ctx.source_of(numpy_call.func)}` (line "
            f"{self.ctx.line(numpy_call)}), which reads it with numpy, but `{self.ctx.source_of(arg.value)}` "
            f"holds GPU tensors (\"can't convert cuda:0 device type tensor to numpy\"); move it with `.cpu()` first",
            fix=_cpu_after(arg.value, value),
            related=((numpy_call, "numpy reads it here"),),
        )


#: scikit-learn estimator methods that check their data (``X``, ``y``) with ``check_array``
_ESTIMATOR_METHODS = frozenset({
    "fit", "fit_transform", "transform", "predict", "predict_proba", "predict_log_proba", "fit_predict",
    "decision_function", "score", "partial_fit", "inverse_transform", "kneighbors", "score_samples",
})
