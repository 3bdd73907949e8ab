"""An API matrix of the two ends of a device bug (session 23): SOURCES of host data (a
DataLoader batch, torch.from_numpy, a tokenizer's tensors, torchvision's readers and
transforms, torchaudio.load, default_collate, factories without device=) that meet a model moved
to the run's device unmoved, and SINKS that need host memory (.numpy(), numpy, matplotlib,
pandas, scikit-learn's metrics, scipy) reached by a model output on that device, directly or
through a list of outputs appended in a loop. Each buggy probe must give exactly the findings
listed (rule@line); the fixed twin (the value moved with ``.to(device)``, the output brought to
the host with ``.detach().cpu()``) must stay silent.

Probes that are silent on purpose (the API accepts a GPU tensor, or fails for any tensor):
``json.dump(out.tolist())``, ``save_image(out)``, ``wandb.Image(out)`` (wandb normalises a tensor
through make_grid and ``.cpu()``), ``add_histogram``, ``float(out)``/``.item()``,
``Image.fromarray(out)`` and ``cv2.*(out)`` (Pillow reads ``__array_interface__`` and OpenCV
wants an ndarray: both refuse a CPU tensor too). Still missed: ``torch.load(path,
map_location="cpu")`` handed to a model (what it loads - tensor, state dict, pickled module - is
not known). A list kept on ``self`` (``add(out)`` appends, ``result()`` converts) holds, for the
class's other methods, what the appends of every call site put there."""

from __future__ import annotations

import re
import textwrap

import pytest

from conftest import lint

HDR = '''import torch
import torch.nn as nn
import numpy as np

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)
'''
# Probe bodies mark the value to fix: MOVE(v) (a source value: the twin moves it with
# .to(device)), HOSTIFY(v) (a model output: the twin brings it to the host with .detach().cpu()),
# DEV (a factory's missing device: the twin gives device=device). P: name -> (buggy, fixed).
P = {}


def MV(b, suffix, word="MOVE"):
    """Wrap the argument of each ``word(...)`` mark in parentheses and append ``suffix``."""
    return re.sub(word + r"\(([^()]*(?:\([^()]*\))?[^()]*)\)", lambda m: "(" + m.group(1) + ")" + suffix, b)


def src(name, body, extra_imports=""):
    b = textwrap.dedent(body)
    P["src_" + name] = (HDR + extra_imports + b.replace("MOVE(", "(").replace("DEV", ""),
                        HDR + extra_imports + MV(b, ".to(device)").replace("DEV", ", device=device"))


def snk(name, body, extra_imports=""):
    b = textwrap.dedent(body)
    P["snk_" + name] = (HDR + extra_imports + b.replace("HOSTIFY(", "("),
                        HDR + extra_imports + MV(b, ".detach().cpu()", "HOSTIFY"))

# ---------------- sources ----------------
src("tensordataset_loader", '''
from torch.utils.data import DataLoader, TensorDataset


def main(xs, ys):
    loader = DataLoader(TensorDataset(torch.from_numpy(xs), torch.from_numpy(ys)), batch_size=8)
    for x, y in loader:
        out = model(MOVE(x))
        print(out)
''')
src("custom_dataset_loader", '''
from torch.utils.data import DataLoader, Dataset


class Rows(Dataset):
    def __init__(self, path):
        self.data = np.load(path)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return torch.tensor(self.data[i], dtype=torch.float32)


def main(path):
    loader = DataLoader(Rows(path), batch_size=8, shuffle=True)
    for x in loader:
        print(model(MOVE(x)))
''')
src("imagefolder", '''
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def main(root):
    ds = datasets.ImageFolder(root, transform=transforms.ToTensor())
    loader = DataLoader(ds, batch_size=8)
    for images, labels in loader:
        print(model(MOVE(images)))
''')
src("cifar10", '''
import torchvision
import torchvision.transforms as transforms


def main():
    ds = torchvision.datasets.CIFAR10(root="./data", train=False, download=True, transform=transforms.ToTensor())
    loader = torch.utils.data.DataLoader(ds, batch_size=8)
    for images, labels in loader:
        print(model(MOVE(images)))
''')
src("from_numpy_load", '''
def main(path):
    x = torch.from_numpy(np.load(path)).float()
    print(model(MOVE(x)))
''')
src("tensor_df_values", '''
import pandas as pd


def main(path):
    df = pd.read_csv(path)
    x = torch.tensor(df.values, dtype=torch.float32)
    print(model(MOVE(x)))
''')
src("as_tensor_list", '''
def main(rows):
    x = torch.as_tensor([[1.0, 2.0, 3.0, 4.0]])
    print(model(MOVE(x)))
''')
src("totensor_pil", '''
from PIL import Image
from torchvision import transforms


def main(path):
    img = Image.open(path).convert("RGB")
    x = transforms.ToTensor()(img).unsqueeze(0)
    print(model(MOVE(x)))
''')
src("totensor_compose", '''
from PIL import Image
from torchvision import transforms

tf = transforms.Compose([transforms.Resize(32), transforms.ToTensor()])


def main(path):
    x = tf(Image.open(path)).unsqueeze(0)
    print(model(MOVE(x)))
''')
src("read_image", '''
from torchvision.io import read_image


def main(path):
    x = read_image(path).float().unsqueeze(0)
    print(model(MOVE(x)))
''')
src("tokenizer_pt", '''
from transformers import AutoTokenizer, AutoModel

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
lm = AutoModel.from_pretrained("bert-base-uncased").to(device)


def main(text):
    inputs = tokenizer(text, return_tensors="pt")
    print(lm(**MOVE(inputs)))
''')
src("tokenizer_input_ids", '''
from transformers import AutoTokenizer, AutoModel

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
lm = AutoModel.from_pretrained("bert-base-uncased").to(device)


def main(text):
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    print(lm(MOVE(ids)))
''')
src("tokenizer_attr_input_ids", '''
from transformers import AutoTokenizer, AutoModel

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
lm = AutoModel.from_pretrained("bert-base-uncased").to(device)


def main(text):
    ids = tokenizer(text, return_tensors="pt").input_ids
    print(lm(MOVE(ids)))
''')
src("tokenizer_encode_pt", '''
from transformers import AutoTokenizer, AutoModel

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
lm = AutoModel.from_pretrained("bert-base-uncased").to(device)


def main(text):
    ids = tokenizer.encode(text, return_tensors="pt")
    print(lm(MOVE(ids)))
''')
src("hf_datasets_set_format", '''
from datasets import load_dataset
from torch.utils.data import DataLoader


def main():
    ds = load_dataset("imdb", split="test")
    ds.set_format("torch", columns=["x"])
    for batch in DataLoader(ds, batch_size=8):
        print(model(MOVE(batch["x"])))
''')
src("hf_datasets_with_format", '''
from datasets import load_dataset
from torch.utils.data import DataLoader


def main():
    ds = load_dataset("imdb", split="test").with_format("torch")
    for batch in DataLoader(ds, batch_size=8):
        print(model(MOVE(batch["x"])))
''')
src("default_collate", '''
from torch.utils.data import default_collate


def main(samples):
    batch = default_collate([torch.tensor(s) for s in samples])
    print(model(MOVE(batch)))
''')
src("pad_sequence", '''
from torch.nn.utils.rnn import pad_sequence


def main(rows):
    x = pad_sequence([torch.tensor(r, dtype=torch.float32) for r in rows], batch_first=True)
    print(model(MOVE(x)))
''')
src("torch_load_cpu", '''
def main(path):
    x = torch.load(path, map_location="cpu")
    print(model(MOVE(x)))
''')
src("tensor_np_random", '''
def main():
    x = torch.Tensor(np.random.rand(3, 4))
    print(model(MOVE(x)))
''')
src("float_tensor_np", '''
def main():
    x = torch.FloatTensor(np.random.randn(3, 4))
    print(model(MOVE(x)))
''')
src("randn_in_helper", '''
def noise(n):
    return torch.randn(n, 4DEV)


def main():
    print(model(noise(3)))
''')
src("randn_in_forward", '''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x + torch.randn(x.shape[0], 4DEV))


net = Net().to(device)


def main(x):
    print(net(x.to(device)))
''')
src("next_iter_loader", '''
from torch.utils.data import DataLoader, TensorDataset


def main(xs):
    loader = DataLoader(TensorDataset(torch.from_numpy(xs)), batch_size=8)
    (x,) = next(iter(loader))
    print(model(MOVE(x)))
''')
src("random_split", '''
from torch.utils.data import DataLoader, TensorDataset, random_split


def main(xs, ys):
    ds = TensorDataset(torch.from_numpy(xs), torch.from_numpy(ys))
    train, val = random_split(ds, [0.8, 0.2])
    for x, y in DataLoader(val, batch_size=8):
        print(model(MOVE(x)))
''')
src("dataset_index", '''
from torch.utils.data import TensorDataset


def main(xs, ys):
    ds = TensorDataset(torch.from_numpy(xs), torch.from_numpy(ys))
    x, y = ds[0]
    print(model(MOVE(x.unsqueeze(0))))
''')
src("torch_zeros_plain", '''
def main():
    x = torch.zeros(3, 4DEV)
    print(model(x))
''')

# ---------------- sinks ----------------
SINKS = {
    "numpy_method": ("", "r = HOSTIFY(out).numpy()"),
    "np_array": ("", "r = np.array(HOSTIFY(out))"),
    "np_asarray": ("", "r = np.asarray(HOSTIFY(out))"),
    "np_mean": ("", "r = np.mean(HOSTIFY(out))"),
    "np_argmax": ("", "r = np.argmax(HOSTIFY(out), axis=1)"),
    "np_argpartition": ("", "r = np.argpartition(HOSTIFY(out), 1)"),
    "np_stack_one": ("", "r = np.stack([HOSTIFY(out)])"),
    "plt_plot": ("import matplotlib.pyplot as plt\n", "plt.plot(HOSTIFY(out))"),
    "plt_imshow": ("import matplotlib.pyplot as plt\n", "plt.imshow(HOSTIFY(out))"),
    "plt_scatter": ("import matplotlib.pyplot as plt\n", "plt.scatter(HOSTIFY(out)[:, 0], HOSTIFY(out)[:, 1])"),
    "pd_dataframe": ("import pandas as pd\n", "r = pd.DataFrame(HOSTIFY(out))"),
    "pd_series": ("import pandas as pd\n", "r = pd.Series(HOSTIFY(out)[:, 0])"),
    "sk_accuracy": ("from sklearn.metrics import accuracy_score\n", "r = accuracy_score(labels, HOSTIFY(out).argmax(1))"),
    "sk_roc_auc": ("from sklearn.metrics import roc_auc_score\n", "r = roc_auc_score(labels, HOSTIFY(out)[:, 1])"),
    "sk_confusion": ("from sklearn.metrics import confusion_matrix\n", "r = confusion_matrix(labels, HOSTIFY(out).argmax(1))"),
    "sk_f1": ("from sklearn import metrics\n", "r = metrics.f1_score(labels, HOSTIFY(out).argmax(1))"),
    "pil_fromarray": ("from PIL import Image\n", "r = Image.fromarray(HOSTIFY(out))"),
    "cv2_imwrite": ("import cv2\n", "cv2.imwrite('o.png', HOSTIFY(out))"),
    "cv2_resize": ("import cv2\n", "r = cv2.resize(HOSTIFY(out), (8, 8))"),
    "scipy_softmax": ("from scipy.special import softmax\n", "r = softmax(HOSTIFY(out), axis=1)"),
    "scipy_pearsonr": ("from scipy import stats\n", "r = stats.pearsonr(HOSTIFY(out)[:, 0], labels)"),
    "json_dump_tolist": ("import json\n", "json.dump(out.tolist(), open('o.json', 'w'))"),
    "save_image": ("from torchvision.utils import save_image\n", "save_image(out, 'o.png')"),
    "wandb_image": ("import wandb\n", "wandb.log({'img': wandb.Image(HOSTIFY(out))})"),
    "tb_histogram": ("from torch.utils.tensorboard import SummaryWriter\nwriter = SummaryWriter()\n", "writer.add_histogram('o', out, 0)"),
}
for name, (imp, line) in SINKS.items():
    snk(name, f'''
def main(x, labels):
    out = model(x.to(device))
    {line}
    print(out)
''', imp)
    # list of outputs appended in a loop, then handed to the sink
    if name in ("numpy_method", "json_dump_tolist", "save_image", "tb_histogram", "plt_scatter", "pd_series",
                "sk_roc_auc", "scipy_pearsonr"):
        continue
    lline = line.replace("HOSTIFY(out)", "preds")
    if name == "np_stack_one":
        lline = "r = np.stack(preds)"
    snk("list_" + name, f'''
def main(loader, labels):
    preds = []
    for x in loader:
        out = model(x.to(device))
        preds.append(HOSTIFY(out))
    {lline.replace("preds", "np.concatenate(preds)") if name not in ("np_array", "np_asarray", "np_mean", "np_stack_one", "np_argmax") else lline}
    print(preds)
''', imp)
snk("list_np_concatenate", '''
def main(loader):
    preds = []
    for x in loader:
        out = model(x.to(device))
        preds.append(HOSTIFY(out))
    r = np.concatenate(preds)
    print(r)
''')
snk("list_argmax_append", '''
def main(loader):
    preds = []
    for x in loader:
        out = model(x.to(device))
        preds.append(HOSTIFY(out.argmax(1)))
    r = np.concatenate(preds)
    print(r)
''')
snk("list_extend", '''
def main(loader):
    preds = []
    for x in loader:
        out = model(x.to(device))
        preds.extend(HOSTIFY(out.argmax(1)))
    r = np.array(preds)
    print(r)
''')
snk("list_loss_item_missing", '''
import matplotlib.pyplot as plt


def main(loader, crit):
    losses = []
    for x, y in loader:
        loss = crit(model(x.to(device)), y.to(device))
        losses.append(HOSTIFY(loss))
    plt.plot(losses)
''')
snk("torch_cat_then_numpy", '''
def main(loader):
    preds = []
    for x in loader:
        preds.append(model(x.to(device)))
    r = HOSTIFY(torch.cat(preds)).numpy()
    print(r)
''')


# ---- more probes ----
P2 = P

def snk2(name, body, imp=""):
    b = textwrap.dedent(body)
    P2["snk_" + name] = (HDR + imp + b.replace("HOSTIFY(", "("), HDR + imp + MV(b, ".detach().cpu()", "HOSTIFY"))
def src2(name, body, imp=""):
    b = textwrap.dedent(body)
    P2["src_" + name] = (HDR + imp + b.replace("MOVE(", "(").replace("DEV", ""), HDR + imp + MV(b, ".to(device)").replace("DEV", ", device=device"))
snk2("loss_history_plot", '''
import matplotlib.pyplot as plt

criterion = nn.CrossEntropyLoss()


def main(loader):
    losses = []
    for x, y in loader:
        loss = criterion(model(x.to(device)), y.to(device))
        losses.append(HOSTIFY(loss))
    plt.plot(losses)
''')
snk2("acc_history_np_mean", '''
def main(loader):
    accs = []
    for x, y in loader:
        y = y.to(device)
        acc = (model(x.to(device)).argmax(1) == y).float().mean()
        accs.append(HOSTIFY(acc))
    print(np.mean(accs))
''')
snk2("data_numpy", '''
def main(x):
    out = model(x.to(device))
    print(HOSTIFY(out.data).numpy())
''')
snk2("detach_numpy", '''
def main(x):
    out = model(x.to(device))
    print(HOSTIFY(out.detach()).numpy())
''')
snk2("np_save", '''
def main(x):
    out = model(x.to(device))
    np.save("o.npy", HOSTIFY(out))
''')
snk2("pd_dataframe_dict", '''
import pandas as pd


def main(x):
    out = model(x.to(device))
    df = pd.DataFrame({"p": HOSTIFY(out[:, 0])})
    print(df)
''')
snk2("sk_roc_sigmoid", '''
from sklearn.metrics import roc_auc_score


def main(x, y):
    out = model(x.to(device))
    print(roc_auc_score(y, HOSTIFY(torch.sigmoid(out[:, 1]))))
''')
snk2("linear_sum_assignment", '''
from scipy.optimize import linear_sum_assignment


def main(x):
    cost = torch.cdist(model(x.to(device)), model(x.to(device)))
    rows, cols = linear_sum_assignment(HOSTIFY(cost))
    print(rows, cols)
''')
snk2("helper_numpy_in_self_method", '''
class Evaluator:
    def __init__(self):
        self.preds = []

    def add(self, out):
        self.preds.append(out)

    def result(self):
        return np.concatenate(self.preds)


def main(loader):
    ev = Evaluator()
    for x in loader:
        ev.add(HOSTIFY(model(x.to(device))))
    print(ev.result())
''')
snk2("dict_of_lists", '''
def main(loader):
    res = {"pred": []}
    for x in loader:
        res["pred"].append(HOSTIFY(model(x.to(device))))
    print(np.concatenate(res["pred"]))
''')
snk2("list_comprehension_np", '''
def main(xs):
    outs = [HOSTIFY(model(x.to(device))) for x in xs]
    print(np.stack(outs))
''')
snk2("item_float", '''
def main(x):
    out = model(x.to(device))
    print(float(out.sum()), out.sum().item())
''')
snk2("plt_imshow_permute", '''
import matplotlib.pyplot as plt


def main(x):
    img = model(x.to(device))[0]
    plt.imshow(HOSTIFY(img.permute(1, 0)))
''')
src2("torch_load_tensor", '''
def main(path):
    x = torch.load(path, map_location="cpu")
    print(model(MOVE(x)))
''')
src2("np_random_from_numpy_in_loop", '''
def main():
    for _ in range(3):
        noise = torch.from_numpy(np.random.randn(3, 4).astype(np.float32))
        print(model(MOVE(noise)))
''')
src2("linspace_helper_forward", '''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def grid(self, n):
        return torch.linspace(0, 1, nDEV)

    def forward(self, x):
        return self.fc(x) * self.grid(2)


net = Net().to(device)


def main(x):
    print(net(x.to(device)))
''')
src2("dataset_getitem_direct", '''
from torch.utils.data import Dataset


class Rows(Dataset):
    def __init__(self, arr):
        self.arr = arr

    def __len__(self):
        return len(self.arr)

    def __getitem__(self, i):
        return torch.from_numpy(self.arr[i])


def main(arr):
    ds = Rows(arr)
    print(model(MOVE(ds[0])))
''')
src2("tokenizer_batch_dict_items", '''
from transformers import AutoTokenizer, AutoModel

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
lm = AutoModel.from_pretrained("bert-base-uncased").to(device)


def main(texts):
    enc = tokenizer(texts, padding=True, return_tensors="pt")
    print(lm(input_ids=MOVE(enc["input_ids"]), attention_mask=MOVE(enc["attention_mask"])))
''')
src2("transform_in_dataset", '''
from PIL import Image
from torchvision import transforms
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    def __init__(self, paths):
        self.paths = paths
        self.tf = transforms.Compose([transforms.Resize(8), transforms.ToTensor()])

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return self.tf(Image.open(self.paths[i]))


def main(paths):
    for x in DataLoader(Images(paths), batch_size=4):
        print(model(MOVE(x)))
''')

src2("torchaudio_load", '''
import torchaudio


def main(path):
    wav, sr = torchaudio.load(path)
    print(model(MOVE(wav)))
''')
src2("tf_normalize_after_to_tensor", '''
from torchvision.transforms import functional as TF
from PIL import Image


def main(path):
    x = TF.to_tensor(Image.open(path))
    x = TF.normalize(x, [0.5], [0.5])
    print(model(MOVE(x.unsqueeze(0))))
''')
src2("tf_resize_read_image", '''
import torchvision.transforms.functional as F
from torchvision.io import read_image


def main(path):
    x = F.resize(read_image(path), [8, 8]).float()
    print(model(MOVE(x)))
''')
src2("tiktoken_ids", '''
import tiktoken

enc = tiktoken.get_encoding("gpt2")


def main(text):
    x = torch.tensor(enc.encode(text), dtype=torch.long)[None, ...]
    print(model(MOVE(x)))
''')
src2("cv2_imread_from_numpy", '''
import cv2


def main(path):
    x = torch.from_numpy(cv2.imread(path)).permute(2, 0, 1).float().unsqueeze(0) / 255.0
    print(model(MOVE(x)))
''')
snk2("tf_normalize_on_gpu_then_numpy", '''
from torchvision.transforms import functional as TF


def main(x):
    out = TF.normalize(model(x.to(device)), [0.5], [0.5])
    print(HOSTIFY(out).numpy())
''')


EXPECTED = {
    'snk_acc_history_np_mean': ['DL204@13'],
    'snk_cv2_imwrite': [],
    'snk_cv2_resize': [],
    'snk_data_numpy': ['DL204@10'],
    'snk_detach_numpy': ['DL204@10'],
    'snk_dict_of_lists': ['DL204@12'],
    'snk_helper_numpy_in_self_method': ['DL204@16'],
    'snk_item_float': [],
    'snk_json_dump_tolist': [],
    'snk_linear_sum_assignment': ['DL204@13'],
    'snk_list_argmax_append': ['DL204@13'],
    'snk_list_comprehension_np': ['DL204@10'],
    'snk_list_cv2_imwrite': ['DL204@14'],
    'snk_list_cv2_resize': ['DL204@14'],
    'snk_list_extend': ['DL204@13'],
    'snk_list_loss_item_missing': [],
    'snk_list_np_argmax': ['DL204@13'],
    'snk_list_np_argpartition': ['DL204@13'],
    'snk_list_np_array': ['DL204@13'],
    'snk_list_np_asarray': ['DL204@13'],
    'snk_list_np_concatenate': ['DL204@13'],
    'snk_list_np_mean': ['DL204@13'],
    'snk_list_np_stack_one': ['DL204@13'],
    'snk_list_pd_dataframe': ['DL204@14'],
    'snk_list_pil_fromarray': ['DL204@14'],
    'snk_list_plt_imshow': ['DL204@14'],
    'snk_list_plt_plot': ['DL204@14'],
    'snk_list_scipy_softmax': ['DL204@14'],
    'snk_list_sk_accuracy': ['DL204@14'],
    'snk_list_sk_confusion': ['DL204@14'],
    'snk_list_sk_f1': ['DL204@14'],
    'snk_list_wandb_image': ['DL204@14'],
    'snk_loss_history_plot': ['DL204@17'],
    'snk_np_argmax': ['DL204@10'],
    'snk_np_argpartition': ['DL204@10'],
    'snk_np_array': ['DL204@10'],
    'snk_np_asarray': ['DL204@10'],
    'snk_np_mean': ['DL204@10'],
    'snk_np_save': ['DL204@10'],
    'snk_np_stack_one': ['DL204@10'],
    'snk_numpy_method': ['DL204@10'],
    'snk_pd_dataframe': ['DL204@11'],
    'snk_pd_dataframe_dict': ['DL204@13'],
    'snk_pd_series': ['DL204@11'],
    'snk_pil_fromarray': [],
    'snk_plt_imshow': ['DL204@11'],
    'snk_plt_imshow_permute': ['DL204@13'],
    'snk_plt_plot': ['DL204@11'],
    'snk_plt_scatter': ['DL204@11'],
    'snk_save_image': [],
    'snk_scipy_pearsonr': ['DL204@11'],
    'snk_scipy_softmax': ['DL204@11'],
    'snk_sk_accuracy': ['DL204@11'],
    'snk_sk_confusion': ['DL204@11'],
    'snk_sk_f1': ['DL204@11'],
    'snk_sk_roc_auc': ['DL204@11'],
    'snk_sk_roc_sigmoid': ['DL204@13'],
    'snk_tb_histogram': [],
    'snk_tf_normalize_on_gpu_then_numpy': ['DL204@13'],
    'snk_torch_cat_then_numpy': ['DL204@12'],
    'snk_wandb_image': [],
    'src_as_tensor_list': ['DL201@10'],
    'src_cifar10': ['DL203@16'],
    'src_custom_dataset_loader': ['DL203@25'],
    'src_cv2_imread_from_numpy': ['DL203@13'],
    'src_dataset_getitem_direct': ['DL203@24'],
    'src_dataset_index': ['DL203@14'],
    'src_default_collate': ['DL203@13'],
    'src_float_tensor_np': ['DL202@9'],
    'src_from_numpy_load': ['DL203@10'],
    'src_hf_datasets_set_format': ['DL203@16'],
    'src_hf_datasets_with_format': ['DL203@15'],
    'src_imagefolder': ['DL203@16'],
    'src_linspace_helper_forward': ['DL202@14'],
    'src_next_iter_loader': ['DL203@14'],
    'src_np_random_from_numpy_in_loop': ['DL203@11'],
    'src_pad_sequence': ['DL203@13'],
    'src_randn_in_forward': ['DL202@14'],
    'src_randn_in_helper': ['DL202@9'],
    'src_random_split': ['DL203@15'],
    'src_read_image': ['DL203@13'],
    'src_tensor_df_values': ['DL202@13'],
    'src_tensor_np_random': ['DL202@9'],
    'src_tensordataset_loader': ['DL203@14'],
    'src_tf_normalize_after_to_tensor': ['DL203@15'],
    'src_tf_resize_read_image': ['DL203@14'],
    'src_tiktoken_ids': ['DL203@15'],
    'src_tokenizer_attr_input_ids': ['DL203@15'],
    'src_tokenizer_batch_dict_items': ['DL203@15'],
    'src_tokenizer_encode_pt': ['DL203@15'],
    'src_tokenizer_input_ids': ['DL203@15'],
    'src_tokenizer_pt': ['DL203@15'],
    'src_torch_load_cpu': [],
    'src_torch_load_tensor': [],
    'src_torch_zeros_plain': ['DL202@9'],
    'src_torchaudio_load': ['DL203@13'],
    'src_totensor_compose': ['DL203@16'],
    'src_totensor_pil': ['DL203@15'],
    'src_transform_in_dataset': ['DL203@27'],
}


@pytest.mark.parametrize("name", sorted(P))
def test_probe(name):
    bug, fix = P[name]
    found = sorted(f"{f.code}@{f.line}" for f in lint(bug) if f.code.startswith("DL2"))
    assert found == sorted(EXPECTED[name]), name
    assert [f for f in lint(fix) if f.code.startswith("DL2")] == [], name
