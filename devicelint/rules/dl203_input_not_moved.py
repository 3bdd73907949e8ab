from __future__ import annotations

import re
from typing import Callable, Optional

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis import walk
from devicelint.analysis.events import BinaryEvent, CallEvent
from devicelint.analysis.helpers import argument_parameters, parameter_read_through
from devicelint.analysis.names import bound_names, is_static_or_class_method
from devicelint.analysis.facts import ClassInfo
from devicelint.analysis.values import UNKNOWN, Kind, Role, Value, item_field
from devicelint.findings import Severity
from devicelint.rules._inputs_moved_beside import unmoved_beside_moved
from devicelint.rules._messages import where
from devicelint.rules.base import Example, Rule


class InputNotMoved(Rule):
    """
    ## What it does
    Flags a model that was moved to a device and is then called on batch tensors - from a
    `DataLoader`, a dataset or numpy - that were never moved there. Inputs moved anywhere on
    the way (`x = x.to(device)`, `model(x.to(device))`), loaders with a `collate_fn` (unless
    it is a function of the file that returns a tensor it builds on the host), datasets
    that place their own data, and parallel wrappers (which scatter CPU inputs themselves) are
    left alone. Tokenized text too: a transformers tokenizer called (or its `encode`,
    `encode_plus`, `batch_encode_plus`) with `return_tensors="pt"` returns host tensors (so does
    any call asked for `return_tensors="pt"` - a processor, a feature extractor, a tokenizer
    object of unknown class, or one of the file's own whose result holds the host tensors it
    was built with, `Encoding(torch.tensor(ids))` - unless the analysis knows it returns
    something else), and
    `model.generate(ids)` runs the model on them; that finding is on the tokenizer call, where
    `.to(device)` belongs (on the `torch.cat` that joins them to host constants, where it does).
    Images too: a torchvision transform that turns an image into a tensor
    (`transforms.ToTensor()`, a `transforms.Compose` whose list holds one, `TF.to_tensor`) gives a
    host tensor, as `torchvision.io.read_image` and `torchaudio.load` do. Losses too: a criterion (`nn.CrossEntropyLoss()`, `F.cross_entropy`) given the
    model's output and a target batch that was never moved. A list or tuple of batches handed
    whole to the model (`model([ids, mask])`, unpacked by its `forward`) too, unless one of its
    entries is already on the device. AllenNLP's too: an iterator's batches are built on the host
    (unless its call is given a `cuda_device`), and `load_archive(path, cuda_device)` puts the
    archive's model on that device; so are torchtext's legacy iterators' batches where no `device=`
    is given. A dict batch some entries of which were stored back moved (`data["text"] =
    data["text"].cuda()`) and then handed whole to a moved model of the file is reported where
    the model's `forward` reads an entry left on the host (`data["video"]`). The message names what to move: for `model(inputs - center)` with `center`
    already on the device, `inputs.to(...)`; where every operand is on the host, the whole
    argument, `(inputs - inputs.mean()).to(...)`. An entry that an assignment takes out of the
    batch (`label = batch["label"]`, also a slice of one: `image = batch["image"][0:1]`) and
    that reaches the model or a loss unmoved is reported once, at that assignment, where
    `.to(device)` belongs, naming the line that uses it; in a call written over several lines
    the finding is on the line of the input to move. Data includes `torch.tensor(x)` /
    `torch.as_tensor(x)` of a numpy array or of what the function was handed, and a model that
    an object's `fit()`/`setup()` builds and moves (or `prepare()` moves in place) is moved
    for the object's other methods. So is a model that a helper of the file moves in place
    (`def place(model, device): model.to(device)`), or a plain class whose `__init__` keeps
    `self.model = model.to(device)`: the caller's model is on that device after the call.
    A batch handed as it is to a helper of the file (a graph tracer, a loss wrapper) that gives
    it to the moved model or a loss is reported at the caller's argument - or at the caller's
    assignment that took it out of a batch - where the move belongs, not inside the helper.

    ## Why is this bad?
    The first forward raises `RuntimeError: Expected all tensors to be on the same device` on a
    GPU machine - usually after the data pipeline has spent minutes warming up.

    ## Example
    ```python
    model = Net().to(device)
    for x, y in loader:
        out = model(x)
    ```

    ## Use instead
    ```python
    model = Net().to(device)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        out = model(x)
    ```
    """

    code = "DL203"
    name = "input-not-moved"
    severity = Severity.ERROR
    follows_call_sites = True
    summary = "A model moved to a device is called on batches that never were."
    valid = (
        # the transformed image moved where the model is
        "import torch\nfrom PIL import Image\nfrom torchvision import models, transforms\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = models.resnet18(weights=None).to(device).eval()\npreprocess = transforms.Compose([transforms.Resize(256), transforms.ToTensor()])\ndef predict(path):\n    x = preprocess(Image.open(path).convert('RGB')).unsqueeze(0)\n    return model(x.to(device))\n",
        # `model.forward(x)` on an input moved on the way
        "import torch\nfrom torch import nn\ndef predict(model, image_bytes, device):\n"
        "    x = torch.frombuffer(bytearray(image_bytes), dtype=torch.uint8).float()\n"
        "    return model.forward(x.to(device))\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "predict(nn.Linear(3, 2).to(device), b'abc', device)\n",
        # the encoder's `forward` hands `lengths` to `pack_padded_sequence`, which reads it on the
        # host: a batch's lengths left on the CPU are what it needs
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\n"
        "class Encoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.gru = nn.GRU(8, 8)\n"
        "    def forward(self, x, lengths):\n        return self.gru(nn.utils.rnn.pack_padded_sequence(x, lengths))\n"
        "encoder = Encoder().to('cuda')\nfor x, lengths in DataLoader(ds, batch_size=4):\n    out = encoder(x.cuda(), lengths)\n",
        # a list moved entry by entry; and one whose other entries were moved: the lengths stay
        # on the host on purpose (pack_padded_sequence takes them there)
        "import torch\nfrom torch.utils.data import DataLoader\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.embed = torch.nn.Embedding(9, 4)\n    def forward(self, x):\n        ids, mask = x\n        return self.embed(ids) * mask.unsqueeze(-1)\nmodel = Net().to('cuda')\n"
        "for ids, mask, labels in DataLoader(ds, batch_size=8):\n"
        "    out = model([ids.to('cuda'), mask.to('cuda')])\n",
        "import torch\nfrom torch.utils.data import DataLoader\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.embed = torch.nn.Embedding(9, 4)\n    def forward(self, x):\n        ids, mask = x\n        return self.embed(ids) * mask.unsqueeze(-1)\nmodel = Net().to('cuda')\n"
        "for ids, lengths in DataLoader(ds, batch_size=8):\n"
        "    out = model([ids.to('cuda'), lengths])\n",
        # the model's forward moves the entries of the dict batch it reads itself; a deep copy
        # of that model is a model of the same class
        "import copy\nimport torch\nfrom torch.utils.data import DataLoader\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = torch.nn.Linear(8, 2)\n"
        "    def forward(self, batch):\n        return self.fc(batch['features'].to(self.fc.weight.device))\n"
        "model = Net().to('cuda')\nshadow = copy.deepcopy(model)\nfor batch in DataLoader(ds, batch_size=4):\n    out = model(batch) + shadow(batch)\n",
        # a model handed to the function: its caller may keep it on the host, with the batches
        "import torch\nfrom torch.utils.data import DataLoader\ndef evaluate(model, ds):\n"
        "    print(sum(p.numel() for p in model.parameters()))\n    for x, y in DataLoader(ds):\n"
        "        loss = torch.nn.functional.cross_entropy(model(x), y)\n",
        "import torch\nfrom torch.utils.data import DataLoader\nmodel = torch.nn.Linear(4, 2).to('cuda')\n"
        "for x, y in DataLoader(ds):\n    x = x.to('cuda')\n    out = model(x)\n",
        "import torch\nfrom torch.utils.data import DataLoader\nmodel = torch.nn.Linear(4, 2).to('cuda')\n"
        "for x, y in DataLoader(ds, collate_fn=to_gpu):\n    out = model(x)\n",
        "import torch\nfrom torch.utils.data import DataLoader\nmodel = torch.nn.DataParallel(torch.nn.Linear(4, 2)).cuda()  # noqa: DL405\n"
        "for x, y in DataLoader(ds):\n    out = model(x)\n",
        "import torch\nfrom torch.utils.data import DataLoader\nmodel = torch.nn.Linear(4, 2)\n"
        "for x, y in DataLoader(ds):\n    out = model(x)\n",
        # a tokenized batch moved whole (BatchEncoding.to returns it), or entry by entry
        "import torch\nfrom transformers import AutoModel, AutoTokenizer\ntokenizer = AutoTokenizer.from_pretrained('bert-base-uncased')\n"
        "model = AutoModel.from_pretrained('bert-base-uncased').to('cuda')\n"
        "inputs = tokenizer(texts, return_tensors='pt', padding=True).to('cuda')\nout = model(**inputs)\n",
        "import torch\nfrom transformers import AutoModel, AutoTokenizer\ntokenizer = AutoTokenizer.from_pretrained('bert-base-uncased')\n"
        "model = AutoModel.from_pretrained('bert-base-uncased').to('cuda')\nbatch = tokenizer(texts, return_tensors='pt')\n"
        "out = model(input_ids=batch.input_ids.to('cuda'), attention_mask=batch['attention_mask'].to('cuda'))\n",
        "import torch\nfrom transformers import GPT2LMHeadModel, GPT2Tokenizer\ntokenizer = GPT2Tokenizer.from_pretrained('gpt2')\n"
        "model = GPT2LMHeadModel.from_pretrained('gpt2').cuda()\n"
        "ids = tokenizer.encode(text, return_tensors='pt').cuda()\nout = model.generate(ids, max_length=20)\n",
        # a BatchEncoding's `to` moves it in place
        "import torch\nfrom transformers import AutoModel, AutoTokenizer\ntokenizer = AutoTokenizer.from_pretrained('bert-base-uncased')\n"
        "model = AutoModel.from_pretrained('bert-base-uncased').to('cuda')\n"
        "inputs = tokenizer(texts, return_tensors='pt')\ninputs.to('cuda')\nout = model(**inputs)\n",
        # an AllenNLP iterator given the model's cuda_device moves its batches (AllenNLP 0.x);
        # an archive loaded without one keeps its model on the CPU
        "from allennlp.data.iterators import BucketIterator\nfrom allennlp.models.archival import load_archive\n"
        "def evaluate(model, instances, iterator, cuda_device):\n    for batch in iterator(instances, num_epochs=1, cuda_device=cuda_device):\n        out = model(**batch)\n"
        "archive = load_archive('model.tar.gz', cuda_device=0)\nevaluate(archive.model, [], BucketIterator(batch_size=8), 0)\n",
        "from allennlp.data.iterators import BucketIterator\nfrom allennlp.models.archival import load_archive\n"
        "archive = load_archive('model.tar.gz')\nfor batch in BucketIterator(batch_size=8)(instances, num_epochs=1):\n    out = archive.model(**batch)\n",
        # without return_tensors="pt" a tokenizer returns lists, which the model call itself refuses
        "import torch\nfrom transformers import AutoModel, AutoTokenizer\ntokenizer = AutoTokenizer.from_pretrained('bert-base-uncased')\n"
        "model = AutoModel.from_pretrained('bert-base-uncased').to('cuda')\nout = model(**tokenizer(texts))\n",
        # the image made a tensor and moved on the way
        "import torch\nfrom torch import nn\ndef predict(model, image, device):\n"
        "    x = torch.tensor(image).permute(2, 0, 1).to(device) / 255\n    return model(x.unsqueeze(0))\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "predict(nn.Conv2d(3, 8, 3).to(device), [[[0.0, 0.0, 0.0]]], device)\n",
        # a trainer object that builds and places its model in `fit()` and moves each batch
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\nclass Forecaster:\n"
        "    def __init__(self):\n        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n        self.model = None\n"
        "    def fit(self):\n        self.model = nn.Linear(4, 1).to(self.device)\n"
        "    def predict(self, dataset):\n        for x in DataLoader(dataset, batch_size=8):\n            out = self.model(x.to(self.device))\n",
        # a method that brings the model back to the host: the others cannot tell where it is
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\nclass Runner:\n"
        "    def __init__(self):\n        self.net = nn.Linear(4, 1)\n"
        "    def to_gpu(self):\n        self.net.cuda()\n    def to_host(self):\n        self.net.cpu()\n"
        "    def score(self, dataset):\n        for x in DataLoader(dataset, batch_size=8):\n            out = self.net(x)\n",
        # helpers that move the model and then hand it to code the analysis cannot see (no
        # device is known for it after the call), or bring it back to the host
        (
            'import numpy as np\nimport torch\nfrom torch import nn\ndef benchmark(model, device, runner):\n'
            '    model.to(device)\n    runner.profile(model)\ndef offload_after(model, device):\n    model.to(device)\n'
            '    model.cpu()\ndef predict(rows, device, runner):\n    model = nn.Linear(4, 1)\n    benchmark(model, device, runner)\n'
            '    return model(torch.from_numpy(np.asarray(rows)))\ndef evaluate(rows, device):\n    model = nn.Linear(4, 1)\n'
            "    offload_after(model, device)\n    return model(torch.from_numpy(np.asarray(rows)))\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            'predict([[0.0] * 4], device, None)\nevaluate([[0.0] * 4], device)\n'
        ),
    )
    invalid = (
        # an image turned into a tensor by a torchvision transform is on the host
        Example(
            "import torch\nfrom PIL import Image\nfrom torchvision import models, transforms\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = models.resnet18(weights=None).to(device).eval()\npreprocess = transforms.Compose([transforms.Resize(256), transforms.ToTensor()])\ndef predict(path):\n    x = preprocess(Image.open(path).convert('RGB')).unsqueeze(0)\n    return model(x)  # expect: DL203\n"
        ),
        # a helper that moves the model it is handed (`model.to(device)`, in place), and a plain
        # class whose `__init__` keeps `self.model = model.to(device)`: the caller's model is on
        # the device after the call
        Example(
            'import numpy as np\nimport torch\nfrom torch import nn\ndef place(model, device):\n    model.to(device)\n'
            'class Trainer:\n    def __init__(self, model, device):\n        self.model = model.to(device)\n'
            'def predict(rows, device):\n    model = nn.Linear(4, 1)\n    place(model, device)\n    return model(torch.from_numpy(np.asarray(rows)))  # expect: DL203\n'
            'def evaluate(rows, device):\n    model = nn.Linear(4, 1)\n    trainer = Trainer(model, device)\n'
            "    return model(torch.from_numpy(np.asarray(rows)))  # expect: DL203\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            'predict([[0.0] * 4], device)\nevaluate([[0.0] * 4], device)\n'
        ),
        # `torch.tensor(image)` of what the function was handed, and `torch.as_tensor` of a numpy
        # array: the program's data on the host, as `torch.from_numpy` makes it
        Example(
            "import numpy as np\nimport torch\nfrom torch import nn\ndef predict(model, image):\n"
            "    x = torch.tensor(image).permute(2, 0, 1) / 255\n    return model(x.unsqueeze(0))  # expect: DL203\n"
            "def embed(model, images):\n    pages = np.stack([np.asarray(image) for image in images])\n"
            "    return model(torch.as_tensor(pages).float())  # expect: DL203\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nnet = nn.Conv2d(3, 8, 3).to(device)\n"
            "predict(net, [[[0.0, 0.0, 0.0]]])\nembed(net, [])\n"
        ),
        # a trainer object that builds and places its model in `fit()` (None until then): its
        # other methods, which run once it is fitted, find the model there
        Example(
            "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\nclass Forecaster:\n"
            "    def __init__(self):\n        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n        self.model = None\n"
            "    def fit(self):\n        self.model = nn.Linear(4, 1).to(self.device)\n"
            "    def predict(self, dataset):\n        for x in DataLoader(dataset, batch_size=8):\n"
            "            out = self.model(x)  # expect: DL203\n"
        ),
        # a text encoder built in `__init__` and moved in place by `prepare()`
        Example(
            "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\nclass Trainer:\n"
            "    def __init__(self, device):\n        self.device = device\n        self.encoder = nn.Linear(4, 2)\n"
            "    def prepare(self):\n        self.encoder.to(self.device)\n"
            "    def step(self, dataset):\n        for x in DataLoader(dataset, batch_size=8):\n"
            "            out = self.encoder(x)  # expect: DL203\n"
            "Trainer(torch.device('cuda')).prepare()\n"
        ),
        # `model.forward(x)` runs the model on `x` as `model(x)` does (a serving demo's input)
        Example(
            "import torch\nfrom torch import nn\ndef predict(model, image_bytes):\n"
            "    x = torch.frombuffer(bytearray(image_bytes), dtype=torch.uint8).float()\n"
            "    return model.forward(x)  # expect: DL203\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "predict(nn.Linear(3, 2).to(device), b'abc')\n"
        ),
        # pix2pix's BaseModel driven from outside: `set_input` keeps the host batch on the object,
        # `optimize_parameters` runs `self.forward()`, which feeds it to the moved generator (an
        # evaluation method that moves its input also writes `real_A`)
        Example(
            "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\nclass Pix2Pix:\n"
            "    def __init__(self, device):\n        self.device = device\n        self.netG = nn.Conv2d(3, 3, 1).to(device)\n"
            "    def set_input(self, data):\n        self.real_A = data[0]\n"
            "    def set_test_input(self, data):\n        self.real_A = data[0].to(self.device)\n"
            "    def forward(self):\n        self.fake_B = self.netG(self.real_A)  # expect: DL203\n"
            "    def optimize_parameters(self):\n        self.forward()\n        self.fake_B.mean().backward()\n"
            "model = Pix2Pix(torch.device('cuda' if torch.cuda.is_available() else 'cpu'))\n"
            "for data in DataLoader(ds, batch_size=2):\n    model.set_input(data)\n    model.optimize_parameters()\n"
        ),
        # an entry taken out of the batch by an assignment and never moved: one finding, at the
        # assignment, where the move belongs, for the model call and the loss that use it
        # (BertPractice's labels)
        Example(
            "import torch\nfrom torch.utils.data import DataLoader\nmodel = torch.nn.Linear(4, 2).to('cuda')\n"
            "criterion = torch.nn.CrossEntropyLoss()\nfor batch in DataLoader(ds, batch_size=8):\n"
            "    label = batch['label']  # expect: DL203\n    features = batch['features'].to('cuda')\n"
            "    out = model(features, label)\n    loss = criterion(out, label.view(-1))\n"
        ),
        # a loss function meeting the model's output and an unmoved target: this rule's, not
        # also DL201's (one bug, one finding)
        Example(
            "import torch\nimport torch.nn.functional as F\nfrom torch.utils.data import DataLoader\n"
            "model = torch.nn.Embedding(10, 4).to('cuda')\nfor x, y in DataLoader(ds, batch_size=8):\n"
            "    logits = model(x.to('cuda'))\n    loss = F.cross_entropy(logits, y)  # expect: DL203\n"
        ),
        # a host constant joined to tokenized text is still the unmoved input: the move belongs
        # on the concatenation (not DL202's: the constant is no factory meeting the model)
        Example(
            "import torch\nfrom transformers import T5ForConditionalGeneration, T5Tokenizer\ntokenizer = T5Tokenizer.from_pretrained('t5-base')\n"
            "model = T5ForConditionalGeneration.from_pretrained('t5-base').to('cuda')\ndef summarize(text):\n"
            "    ids = tokenizer.encode(text, return_tensors='pt')\n    prefix = torch.tensor([[21603, 10]])\n"
            "    ids = torch.cat([prefix, ids], dim=-1)  # expect: DL203\n    return model.generate(ids, max_length=20)\n"
        ),
        Example(
            "import torch\nfrom torch.utils.data import DataLoader\nmodel = torch.nn.Linear(5, 2).to('cuda')\n"
            "for x, y in DataLoader(ds, batch_size=8):\n    x = torch.cat([torch.ones(x.size(0), 1), x], dim=1)\n"
            "    out = model(x)  # expect: DL203\n"
        ),
        # a list of batch tensors handed whole to the model, which unpacks it in `forward`
        Example(
            "import torch\nfrom torch.utils.data import DataLoader\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.embed = torch.nn.Embedding(9, 4)\n    def forward(self, x):\n        ids, mask = x\n        return self.embed(ids) * mask.unsqueeze(-1)\nmodel = Net().to('cuda')\n"
            "for ids, mask, labels in DataLoader(ds, batch_size=8):\n"
            "    out = model([ids, mask])  # expect: DL203\n"
        ),
        # the file's collate_fn builds each batch on the host: the labels reach the loss unmoved
        Example(
            "import torch\nimport torch.nn.functional as F\nfrom torch.utils.data import DataLoader\ndef collate(items):\n    return torch.tensor(items)\n"
            "def train(model, data, device):\n    for ids in DataLoader(data, collate_fn=collate):\n        logits = model(ids.to(device))\n"
            "        loss = F.cross_entropy(logits, ids)  # expect: DL203\nmodel = torch.nn.Embedding(10, 4)\nmodel.to('cuda')\ntrain(model, [], 'cuda')\n"
        ),
        Example(
            "import torch\nfrom torch.utils.data import DataLoader\ndevice = torch.device('cuda')\n"
            "model = torch.nn.Linear(4, 2).to(device)\nloader = DataLoader(ds, batch_size=32)\n"
            "for x, y in loader:\n    out = model(x)  # expect: DL203\n"
        ),
        Example(
            "import torch\nfrom torch.utils.data import DataLoader\nmodel = torch.nn.Linear(4, 2).cuda()\n"
            "for step, batch in enumerate(DataLoader(ds)):\n    out = model(**batch)  # expect: DL203\n"
        ),
        # AllenNLP: `load_archive` puts the model on `cuda_device`, an iterator's batches are
        # built on the host and the evaluation helper never moves them
        Example(
            "import argparse\nfrom allennlp.common.tqdm import Tqdm\nfrom allennlp.data.iterators import DataIterator\n"
            "from allennlp.models.archival import load_archive\ndef evaluate(model, instances, data_iterator):\n"
            "    for batch in Tqdm.tqdm(data_iterator(instances, num_epochs=1)):\n        output = model(**batch)  # expect: DL203\n"
            "def main(args):\n    archive = load_archive(args.archive_file, args.cuda_device)\n"
            "    iterator = DataIterator.from_params(archive.config.pop('iterator'))\n    evaluate(archive.model, [], iterator)\n"
        ),
        # a tokenizer's tensors are on the host: the finding is on the call that made them
        Example(
            "import torch\nfrom transformers import AutoModel, AutoTokenizer\ntokenizer = AutoTokenizer.from_pretrained('bert-base-uncased')\n"
            "model = AutoModel.from_pretrained('bert-base-uncased').to('cuda')\n"
            "batch = tokenizer(texts, return_tensors='pt', padding=True)  # expect: DL203\nout = model(**batch)\n"
        ),
        Example(
            "import torch\nfrom transformers import AutoModel, BertTokenizer\ntokenizer = BertTokenizer('vocab.txt')\n"
            "model = AutoModel.from_pretrained('bert-base-uncased').to('cuda')\n"
            "batch = tokenizer.batch_encode_plus(texts, return_tensors='pt')  # expect: DL203\n"
            "out = model(input_ids=batch['input_ids'], attention_mask=batch.attention_mask)\n"
        ),
        Example(
            "import torch\nfrom transformers import GPT2LMHeadModel, GPT2Tokenizer\ntokenizer = GPT2Tokenizer.from_pretrained('gpt2')\n"
            "model = GPT2LMHeadModel.from_pretrained('gpt2').cuda()\n"
            "ids = tokenizer.encode(text, return_tensors='pt')  # expect: DL203\nout = model.generate(ids, max_length=20)\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: the operands of the tensor operations seen so far, by node: for a model called on
        #: `inputs - center`, the suggestion moves the operand that is on the host
        self._operations: dict[int, BinaryEvent] = {}
        #: the calls of a transformers tokenizer with `return_tensors="pt"` seen in this file, by
        #: node: the move of what they return belongs there (`tokenizer(...).to(device)`)
        self._tokenizer_calls: set[int] = set()
        #: (function, name) -> the statement that last bound the name to an entry read out of
        #: a batch (``label = batch["label"]``) and the origin of the batch it read, or None
        #: where the name's last binding was something else
        self._entry_reads: dict[tuple[int, str], Optional[tuple[cst.CSTNode, cst.BaseExpression, Optional[cst.CSTNode]]]] = {}
        #: (function, name) -> the statement that last bound the name to a method chain on
        #: itself (``rxn_fp = rxn_fp.view(1, -1)``), None where its last binding was anything else
        self._last_bindings: dict[tuple[int, str], Optional[cst.CSTNode]] = {}
        #: id of a call node -> id of the function it is made in (None: the module's top level):
        #: where a pass of one call site finds the caller's entry reads
        self._call_functions: dict[int, int] = {}

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        """Remember where names are bound to entries of a batch: the move of an entry that
        never moves belongs there (``label = batch["label"].to(device)``)."""
        function = id(self.ctx.current_function.node)
        if isinstance(target, cst.Name):
            chain = value_node
            while isinstance(chain, cst.Call) and isinstance(chain.func, cst.Attribute):
                chain = chain.func.value
            reshaped = chain is not value_node and isinstance(chain, cst.Name) and chain.value == target.value
            self._last_bindings[(function, target.value)] = statement if reshaped else None
            pairs = [(target, value_node, value)]
        elif (
            isinstance(target, (cst.Tuple, cst.List)) and isinstance(value_node, (cst.Tuple, cst.List))
            and len(target.elements) == len(value_node.elements)
            and not any(isinstance(element, cst.StarredElement) for element in (*target.elements, *value_node.elements))
        ):
            items = value.info if value.kind == Kind.CONTAINER and isinstance(value.info, tuple) and len(value.info) == len(target.elements) else None
            pairs = [
                (bound.value, read.value, items[index] if items is not None else None)
                for index, (bound, read) in enumerate(zip(target.elements, value_node.elements))
            ]
        else:
            for name in bound_names(target):
                self._entry_reads[(function, name)] = None
            return
        for bound, read, read_value in pairs:
            if not isinstance(bound, cst.Name):
                for name in bound_names(bound):
                    self._entry_reads[(function, name)] = None
                continue
            entry = isinstance(read, (cst.Subscript, cst.Attribute)) and isinstance(_read_root(read), cst.Name)
            origin = read_value.origin.node if read_value is not None and read_value.origin is not None else None
            self._entry_reads[(function, bound.value)] = (statement, read, origin) if entry and origin is not None else None

    def _entry_read_of(self, node: cst.BaseExpression, value: Value) -> Optional[tuple[cst.CSTNode, cst.BaseExpression]]:
        """Where the batch entry ``node`` reads (``label``, ``label.view(-1)``) was taken out of
        the very batch ``value`` comes from, in the function being analysed: that assignment
        and the read it makes; None otherwise."""
        root = node
        while isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute):
            root = root.func.value  # `label.view(-1)`, `label.long()`
        if not isinstance(root, cst.Name) or value.origin is None:
            return None
        found = self._entry_reads.get((id(self.ctx.current_function.node), root.value))
        if found is None or found[2] is not value.origin.node:
            return None
        return found[0], found[1]

    def _report_at_entry_read(self, event: CallEvent, node: cst.BaseExpression, value: Value, reaches: str) -> bool:
        """A batch entry taken out of the batch by an assignment of this function and never
        moved: reported once, there, where `.to(device)` belongs, naming the call it reaches."""
        found = self._entry_read_of(node, value)
        if found is None:
            return False
        statement, read = found
        self.ctx.report(
            statement,
            f"`{self.ctx.source_of(read)}` is taken out of a batch {where(value, self.ctx)} and never moved, but line "
            f"{self.ctx.line(event.node)} hands it to {reaches}; move it here (`{self.ctx.source_of(read)}.to(...)`)",
            related=((event.node, "where it is used"),),
        )
        return True

    def _moved_beside_by_caller(self, node: cst.BaseExpression) -> bool:
        """In a pass of one call site: ``node`` reads a parameter as it came in, and the call
        that handed it moves another of its arguments right there (``generate(input_ids=
        ids.to(model.device), attention_mask=mask)``): the caller moves the inputs it hands on
        itself, and the move of this one belongs beside the other's."""
        context = self.ctx.current_function
        function = context.node
        call = self.ctx.call_context or (self.ctx.analyzer.sole_call_of(function) if function is not None else None)
        if function is None or call is None:
            return False
        parameter = parameter_read_through(function, node)
        if parameter is None:
            return False
        skip_first = context.class_info is not None and not is_static_or_class_method(function)
        names = argument_parameters(function, tuple((arg, UNKNOWN) for arg in call.args), skip_first)
        handed = [arg for arg, name in zip(call.args, names) if name == parameter and not arg.star]
        if len(handed) != 1 or _moves(handed[0].value):
            return False
        return any(arg is not handed[0] and not arg.star and _moves(arg.value) for arg in call.args)

    def _report_at_caller(
        self,
        node: cst.BaseExpression,
        value: Value,
        reaches: str,
        other: Optional[tuple[cst.BaseExpression, Value]] = None,
    ) -> bool:
        """In a pass of one call site (see Rule.follows_call_sites): a batch that the function
        was handed, as it came in (``target``, ``target.long()``), and never moves. The function
        does what it is for with what it is given (a loss helper, a graph tracer); the caller
        handed it a batch it never moved, and the move belongs there: reported once, at the
        caller's argument - or, where the caller took that argument out of a batch by an
        assignment (``meta_target = meta_batch["labels"]``), at that assignment."""
        context = self.ctx.current_function
        function = context.node
        if function is None or value.origin is None:
            return False
        call = self.ctx.call_context or self.ctx.analyzer.sole_call_of(function)
        if call is None:
            return False
        parameter = parameter_read_through(function, node)
        if parameter is None or walk.contains(function, value.origin.node):
            return False  # not a parameter, or a value the function made (or moved) itself
        skip_first = context.class_info is not None and not is_static_or_class_method(function)
        names = argument_parameters(function, tuple((arg, UNKNOWN) for arg in call.args), skip_first)
        handed = [arg for arg, name in zip(call.args, names) if name == parameter and not arg.star]
        if len(handed) != 1:
            return False
        argument = handed[0].value
        caller = self._call_functions.get(id(call))
        root = argument
        while isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute):
            root = root.func.value
        found = self._entry_reads.get((caller, root.value)) if caller is not None and isinstance(root, cst.Name) else None
        callee = f"`{self.ctx.source_of(call.func)}()`"
        where_else = f", {where(other[1], self.ctx)}" if other is not None else ""
        also = f" with `{self.ctx.source_of(other[0])}`" if other is not None else ""
        if found is not None and found[2] is value.origin.node:
            statement, read = found[0], found[1]
            shown = self.ctx.source_of(read)
            self.ctx.report(
                statement,
                f"`{shown}` is taken out of a batch {where(value, self.ctx)} and never moved, but line {self.ctx.line(call)} "
                f"hands it to {callee}, which gives it to {reaches}{also}{where_else}; move it here (`{shown}.to(...)`)",
                related=((call, "the call"),),
            )
            return True
        shown = self.ctx.source_of(argument)
        moved = f"({shown})" if _needs_parentheses(argument) else shown
        self.ctx.report(
            argument,
            f"`{shown}` is a batch {where(value, self.ctx)} that was never moved, but {callee} gives it to "
            f"{reaches}{also}{where_else}; move the batch first (`{moved}.to(...)`)",
            related=((node, "where it is used"),),
        )
        return True

    def on_binary(self, event: BinaryEvent) -> None:
        self._operations[id(event.node)] = event

    def on_call(self, event: CallEvent) -> None:
        self._call_functions[id(event.node)] = id(self.ctx.current_function.node)
        made = event.result.origin
        if made is not None and made.tokenized and made.node is event.node:
            self._tokenizer_calls.add(id(event.node))
        elif event.result.fields is not None and any(
            held.origin is not None and held.origin.tokenized and held.origin.node is event.node for _, held in event.result.fields
        ):
            self._tokenizer_calls.add(id(event.node))  # an encoding object of the file holding them
        module = event.callee
        if module.kind == Kind.CRITERION or event.qualname in api.FUNCTIONAL_LOSSES:
            self._check_loss(event)
            return
        # a module, or an object of unknown class that was moved and is called like one
        if module.kind not in (Kind.MODULE, Kind.UNKNOWN) or module.device is None or not module.device.may_be_accelerator:
            return
        if module.kind == Kind.UNKNOWN and not module.is_bare:
            return
        if module.device.argument:
            return  # a model handed to the function: the caller may keep it, and its batches, on the host
        if module.role in (Role.PARALLEL_WRAPPER, Role.INFERRED_MODULE):
            # wrappers scatter their inputs; an object of unknown class that only moved in place
            # may be a pipeline, which takes prompts
            return
        # a `forward` of the file that moves an input itself, or reads it on the host (the
        # lengths of `pack_padded_sequence`), takes it where it is
        placed_anywhere = self.ctx.analyzer.inputs_placed_by_module(module, event.args) if module.kind == Kind.MODULE else [False] * len(event.args)
        for (arg, value), anywhere in zip(event.args, placed_anywhere):
            if anywhere:
                continue
            if value.kind == Kind.CONTAINER and not arg.star:
                found = _host_batch_in_sequence(arg.value, value)
                if found is not None:
                    self._report_unmoved(event, *found, within=arg.value)
                    return
                continue
            if value.kind not in (Kind.TENSOR, Kind.BATCH) and not (arg.star == "**" and value.kind == Kind.BATCH):
                continue
            if value.kind == Kind.BATCH and value.has_items:
                # `batch["text"] = batch["text"].cuda()`, then the batch handed whole: the
                # entries left as they were matter only where the model reads them
                unstored = None if arg.star else _unstored_entry_read(self.ctx.analyzer.body_text, module, event.args, arg, value)
                if unstored is None:
                    continue
                self._report_unstored_entry(event, arg.value, value, unstored)
                return
            if not arg.star and self._report_at_model_entry(event, arg.value, value):
                return
            if self._report_unmoved_beside_moved(event, arg, value):
                return
            if value.device is not None and not value.device.is_cpu and not arg.star:
                # `model(inputs - center)` with `center` on the device: the result is where a GPU
                # run would put it, and the batch it was computed from is what never moved
                operand_node, operand = self._operand_to_move(arg.value, value)
                if operand_node is not arg.value and operand.origin is not None and operand.origin.from_data:
                    self._report_unmoved(event, operand_node, operand)
                    return
                continue
            if value.device is None or not value.device.is_cpu or not (value.origin is not None and value.origin.from_data):
                continue
            if value.origin.tokenized and id(value.origin.node) in self._tokenizer_calls:
                module = event.callee
                moved_how = f"`{self.ctx.source_of(event.callee_node)}` (" + (module.origin.how if module.origin else "moved") + (
                    f" at line {self.ctx.line(module.origin.node)})" if module.origin else ")"
                )
                if self._moved_beside_by_caller(arg.value) and self._report_at_caller(
                    arg.value, value, f"{moved_how} at line {self.ctx.line(event.node)}, while the call moves its other inputs itself"
                ):
                    return
                self._report_at_tokenizer(event, arg, value)
                return
            self._report_unmoved(event, *self._operand_to_move(arg.value, value))
            return

    def _report_unmoved(
        self, event: CallEvent, node: cst.BaseExpression, value: Value, within: Optional[cst.BaseExpression] = None
    ) -> None:
        """``node``, a batch on the host (an entry of the list ``within`` where given), reaches
        the moved model ``event`` calls."""
        module = event.callee
        moved_how = f"`{self.ctx.source_of(event.callee_node)}` (" + (module.origin.how if module.origin else "moved") + (
            f" at line {self.ctx.line(module.origin.node)})" if module.origin else ")"
        )
        found = self._entry_read_of(node, value) if within is None else None
        if (
            found is not None and self.ctx.current_function.node is not None
            and parameter_read_through(self.ctx.current_function.node, found[1]) is not None
            and self._report_at_caller(found[1], value, f"{moved_how} at line {self.ctx.line(event.node)}")
        ):
            return  # `idx_cond = idx[:, -n:]` of a parameter `idx`: the caller handed it unmoved
        if within is None and self._report_at_entry_read(event, node, value, moved_how):
            return
        if within is None and self._report_at_caller(node, value, f"{moved_how} at line {self.ctx.line(event.node)}"):
            return
        shown = self.ctx.source_of(node)
        moved = f"({shown})" if _needs_parentheses(node) else shown
        entry = f" (in `{_short(self.ctx.source_of(within))}`, which the model gets whole)" if within is not None and within is not node else ""
        # a call written over several lines: on the line of the input to move
        at = node if "\n" in self.ctx.module.code_for_node(event.node) else event.node
        self.ctx.report(
            at,
            f"`{shown}`{entry} is a batch {where(value, self.ctx)} that was never moved, but "
            f"`{self.ctx.source_of(event.callee_node)}` was {module.origin.how if module.origin else 'moved'}"
            + (f" at line {self.ctx.line(module.origin.node)}" if module.origin else "")
            + f"; move the batch first (`{moved}.to(...)`)",
        )

    def _report_unstored_entry(self, event: CallEvent, node: cst.BaseExpression, value: Value, entry: str) -> None:
        """``node``, a host batch some entries of which were replaced (moved), reaches the moved
        model ``event`` calls, whose ``forward`` reads the entry ``entry`` left on the host."""
        if value.device is None or not value.device.is_cpu or value.origin is None or not value.origin.from_data:
            return
        module = event.callee
        shown = self.ctx.source_of(node)
        at = node if "\n" in self.ctx.module.code_for_node(event.node) else event.node
        self.ctx.report(
            at,
            f"`{shown}` is a batch {where(value, self.ctx)} whose entry {entry!r} was never moved (only the entries "
            f"stored back into it were), but `{self.ctx.source_of(event.callee_node)}` was "
            f"{module.origin.how if module.origin else 'moved'}"
            + (f" at line {self.ctx.line(module.origin.node)}" if module.origin else "")
            + " and its `forward` reads that entry; move it too",
        )

    def _report_unmoved_beside_moved(self, event: CallEvent, arg: cst.Arg, value: Value) -> bool:
        """A function that moves the other inputs it hands the moved model itself
        (``input_solvents.to(self.device)``) hands it one that came in on the host, unmoved (see
        _inputs_moved_beside): reported at the statement that last reshaped it
        (``rxn_fp = rxn_fp.unsqueeze(0)``), where the move belongs, or at the argument."""
        function = self.ctx.current_function.node
        parameter = unmoved_beside_moved(function, event, arg, value)
        if parameter is None:
            return False
        at: cst.CSTNode = arg.value
        binding = self._last_bindings.get((id(function), parameter))
        if binding is not None and isinstance(arg.value, cst.Name) and arg.value.value == parameter:
            at = binding
        self.ctx.report(
            at,
            f"`{parameter}` comes in {where(value, self.ctx)} and reaches `{self.ctx.source_of(event.callee_node)}` at line "
            f"{self.ctx.line(event.node)} never moved, while this function moves the model's other inputs there itself; "
            f"move it too (`.to(...)`)",
            related=((event.node, "the model call"),),
        )
        return True

    def _report_at_model_entry(self, event: CallEvent, node: cst.BaseExpression, value: Value) -> bool:
        """A host tensor a caller handed to one of the model's own methods (``predict(batch)``),
        which hands it on within the model (``self.score(batch)``) to where a layer takes it:
        reported once, in that entry method, at the call that hands it on - where the move
        belongs (see Summaries.model_input_hand_off). Whether it reported."""
        function = self.ctx.current_function.node
        if function is None:
            return False
        found = self.ctx.analyzer.model_input_hand_off(function, node, value)
        if found is None:
            return False
        call, arg, entry, parameter = found
        shown = self.ctx.source_of(arg.value)
        moved = f"({shown})" if _needs_parentheses(arg.value) else shown
        self.ctx.report(
            arg.value,
            f"`{parameter}` comes into the model's `{entry.name.value}()` {where(value, self.ctx)}, and `{entry.name.value}()` hands it "
            f"on to `{self.ctx.source_of(call.func)}()`, where `{self.ctx.source_of(event.callee_node)}` (on the model's device) "
            f"takes it at line {self.ctx.line(event.node)}; the model never moves its input: move it here (`{moved}.to(...)`)",
            related=((event.node, "where a layer of the model takes it"),),
        )
        return True

    def _report_at_tokenizer(self, event: CallEvent, arg: cst.Arg, value: Value) -> None:
        """A tokenizer's host tensors reach the moved model unmoved: the finding goes on the
        tokenizer call, where `.to(device)` belongs, and names the model call."""
        assert value.origin is not None
        tokenizer_call = value.origin.node
        assert isinstance(tokenizer_call, cst.Call)
        module = event.callee
        self.ctx.report(
            tokenizer_call,
            f"`{self.ctx.source_of(tokenizer_call.func)}` returns host tensors, and `{self.ctx.source_of(arg.value)}` "
            f"reaches `{self.ctx.source_of(event.node.func)}` at line {self.ctx.line(event.node)} never moved, but "
            f"`{self.ctx.source_of(event.callee_node)}` was {module.origin.how if module.origin else 'moved'}"
            + (f" at line {self.ctx.line(module.origin.node)}" if module.origin else "")
            + "; append `.to(device)` to this call",
            related=((event.node, "the model call"),),
        )

    def _check_loss(self, event: CallEvent) -> None:
        """``criterion(model(x), y)`` with ``y`` a batch never moved: the loss meets the
        model's output, on the accelerator, and the CPU target ("Expected all tensors to be on
        the same device")."""
        # (not a value on the device of an argument: the caller may keep that on the host)
        on_device = [
            (arg, value) for arg, value in event.args
            if value.kind == Kind.TENSOR and value.device is not None and value.device.may_be_accelerator and not value.device.argument
        ]
        if not on_device:
            return
        for arg, value in event.args:
            if value.kind not in (Kind.TENSOR, Kind.BATCH) or value.device is None or not value.device.is_cpu:
                continue
            if not (value.origin is not None and value.origin.from_data) or value.scalar is True:
                continue
            shown = self.ctx.source_of(arg.value)
            other_node, other = on_device[0]
            loss = f"the loss `{self.ctx.source_of(event.node.func)}` with `{self.ctx.source_of(other_node.value)}`, {where(other, self.ctx)}"
            if self._report_at_entry_read(event, arg.value, value, loss):
                return
            if self._report_at_caller(arg.value, value, f"the loss `{self.ctx.source_of(event.node.func)}` at line {self.ctx.line(event.node)}", other=(other_node.value, other)):
                return
            self.ctx.report(
                event.node,
                f"`{shown}` is a batch {where(value, self.ctx)} that was never moved, but the loss "
                f"`{self.ctx.source_of(event.node.func)}` also takes `{self.ctx.source_of(other_node.value)}`, "
                f"{where(other, self.ctx)}; move the batch first (`{shown}.to(...)`)",
            )
            return

    def _operand_to_move(self, node: cst.BaseExpression, value: Value) -> tuple[cst.BaseExpression, Value]:
        """The part of a model's argument that is off the model's device: in `inputs - center`
        with `center` already moved, `inputs`. An operation descends into its host operand
        while the other operand is a number or may be on the accelerator; when both are on
        the host, or one is not known, the whole expression is the thing to move."""
        while True:
            operation = self._operations.get(id(node))
            if operation is None:
                return node, value
            sides = ((operation.left_node, operation.left, operation.right), (operation.right_node, operation.right, operation.left))
            host = [(side_node, side) for side_node, side, other in sides if _on_host(side) and _stays_put(other)]
            if len(host) != 1:
                return node, value
            node, value = host[0]


def _unstored_entry_read(
    body_text: Callable[[cst.FunctionDef], str], module: Value, args: tuple[tuple[cst.Arg, Value], ...], arg: cst.Arg, batch: Value) -> Optional[str]:
    """The first constant key at which the ``forward`` of ``module`` (a class the analysis has
    read) reads the parameter ``arg`` binds (``data['video']``) where ``batch``, the argument,
    has no entry stored back (see Value.with_item); None where there is none or the forward or
    its reads cannot be told."""
    info = module.info
    if module.kind != Kind.MODULE or not isinstance(info, ClassInfo):
        return None
    found = info.find_method("forward")
    if found is None:
        return None
    forward = found[0]
    names = argument_parameters(forward, args, skip_first=True)
    position = next((i for i, (given, _) in enumerate(args) if given is arg), None)
    name = names[position] if position is not None else None
    if name is None:
        return None
    for found_key in re.finditer(r"(?<![\w.])" + re.escape(name) + r"\[\s*(['\"])(\w+)\1\s*\]", body_text(forward)):
        if batch.field_value(item_field(found_key.group(2))) is None:
            return found_key.group(2)
    return None


def _host_batch_in_sequence(node: cst.BaseExpression, value: Value) -> Optional[tuple[cst.BaseExpression, Value]]:
    """A list or tuple of known entries handed to the model whole (``model([ids, lengths,
    mask])``, unpacked by its ``forward``): the first entry that is a batch on the host, with
    its node where the list is written out there. None where no entry is one, and where an
    entry is a tensor that may be on the accelerator: a list that mixes them was partly moved
    on purpose (sequence lengths stay on the host for ``pack_padded_sequence``)."""
    if not isinstance(value.info, tuple):
        return None
    entries = value.info
    if any(entry.kind == Kind.TENSOR and entry.device is not None and entry.device.may_be_accelerator for entry in entries):
        return None
    written = (
        [element.value for element in node.elements]
        if isinstance(node, (cst.List, cst.Tuple)) and len(node.elements) == len(entries) and not any(isinstance(element, cst.StarredElement) for element in node.elements)
        else None
    )
    for position, entry in enumerate(entries):
        if not isinstance(entry, Value) or entry.kind not in (Kind.TENSOR, Kind.BATCH) or not _on_host(entry):
            continue
        if entry.origin is None or not entry.origin.from_data or entry.scalar is True:
            continue
        return (written[position] if written is not None else node), entry
    return None


def _read_root(read: cst.BaseExpression) -> cst.BaseExpression:
    """What an entry read starts from: ``batch`` in ``batch["image"]``, and in a slice of an
    entry (``batch["image"][0:1]``, ``batch.x[:, :4]``), which is still that entry's tensor
    (an element picked by an integer, ``test_data[0][0]``, is one item of it: not followed)."""
    while isinstance(read, cst.Subscript) and any(isinstance(element.slice, cst.Slice) for element in read.slice):
        read = read.value
    if isinstance(read, (cst.Subscript, cst.Attribute)):
        read = read.value
    return read


def _on_host(value: Value) -> bool:
    return value.is_tensor_like and value.device is not None and value.device.is_cpu


def _stays_put(value: Value) -> bool:
    """Needs no move next to the model: a number, or a tensor that may be on the accelerator."""
    if value.kind == Kind.NUMBER:
        return True
    return value.kind == Kind.TENSOR and value.device is not None and value.device.may_be_accelerator


#: expressions that `.to(...)` appended to would bind to their last operand
_LOOSER_THAN_ATTRIBUTE = (
    cst.BinaryOperation,
    cst.UnaryOperation,
    cst.BooleanOperation,
    cst.Comparison,
    cst.IfExp,
    cst.Lambda,
    cst.NamedExpr,
    cst.Await,
)


def _needs_parentheses(node: cst.BaseExpression) -> bool:
    return isinstance(node, _LOOSER_THAN_ATTRIBUTE) and not node.lpar


def _short(text: str, limit: int = 40) -> str:
    """``text`` on one line, cut to ``limit`` characters for a message."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _moves(node: cst.BaseExpression) -> bool:
    """``x.to(...)``, ``x.cuda()``: an argument moved where it is handed."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("to", "cuda")
