# source: https://github.com/Z-Zheng/SimpleCV/pull/30
# error: no message in the PR (title: "configure map_location for resuming checkpoint when ddp training"): resuming a
#        DistributedDataParallel run, every rank restores the last checkpoint onto the GPU rank 0 saved it from
# bug: ddp_train.run gives each process its own GPU (torch.cuda.set_device(local_rank), DDP with
#      device_ids=[local_rank]); Launcher.train_by_config -> init() -> CheckPoint.try_resume loads the last checkpoint
#      with the static CheckPoint.load, a bare torch.load(filepath). The checkpoint was written by rank 0 from
#      cuda:0, so every rank deserializes the model and optimizer state onto cuda:0 (a CUDA context and a copy of the
#      checkpoint per rank on GPU 0) before load_state_dict copies them to its own GPU. The fix, commit fbf9903 (merged
#      as PR #30), loads with map_location=torch.device("cpu"); the line it changed is marked (DL301). The model
#      builder, config files, logger and iterator are reduced; run() takes the --cpu path on a machine without CUDA.
import json
import os
import tempfile
from collections import OrderedDict

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


def get_rank():
    if not dist.is_available() or not dist.is_initialized():
        return 0
    return dist.get_rank()


class CheckPoint(object):
    MODEL = "model"
    OPTIMIZER = "opt"
    GLOBALSTEP = "global_step"
    LASTCHECKPOINT = "last"
    CHECKPOINT_NAME = "checkpoint_info.json"

    def __init__(self, launcher=None):
        self._launcher = launcher
        self._global_step = 0
        self._json_log = {CheckPoint.LASTCHECKPOINT: dict(step=0, name="")}

    @property
    def global_step(self):
        return self._global_step

    def set_global_step(self, value):
        self._global_step = value

    def step(self):
        self._global_step += 1

    def save(self):
        ckpt = OrderedDict({CheckPoint.MODEL: self._launcher.model.state_dict(),
                            CheckPoint.OPTIMIZER: self._launcher.optimizer.state_dict(),
                            CheckPoint.GLOBALSTEP: self.global_step})
        filename = "model-{}.pth".format(self.global_step)
        torch.save(ckpt, os.path.join(self._launcher.model_dir, filename))
        self._json_log[CheckPoint.LASTCHECKPOINT] = dict(step=self.global_step, name=filename)
        with open(os.path.join(self._launcher.model_dir, CheckPoint.CHECKPOINT_NAME), "w") as f:
            json.dump(self._json_log, f)

    @staticmethod
    def load(filepath):
        ckpt = torch.load(filepath)  # expect: DL301
        return ckpt

    def try_resume(self):
        json_path = os.path.join(self._launcher.model_dir, CheckPoint.CHECKPOINT_NAME)
        if not os.path.exists(json_path):
            return
        with open(json_path) as f:
            json_log = json.load(f)
        last_path = os.path.join(self._launcher.model_dir, json_log[CheckPoint.LASTCHECKPOINT]["name"])
        ckpt = self.load(last_path)
        self._launcher.model.load_state_dict(ckpt[CheckPoint.MODEL])
        if self._launcher.optimizer is not None:
            self._launcher.optimizer.load_state_dict(ckpt[CheckPoint.OPTIMIZER])
        self.set_global_step(ckpt[CheckPoint.GLOBALSTEP])


class Launcher(object):
    def __init__(self, model_dir, model, optimizer):
        self._model_dir = model_dir
        self._model = model
        self._optimizer = optimizer
        self._master = get_rank() == 0
        self._device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
        self._ckpt = CheckPoint(self)

    @property
    def model(self):
        return self._model

    @property
    def optimizer(self):
        return self._optimizer

    @property
    def model_dir(self):
        return self._model_dir

    def compute_loss_gradient(self, data):
        x, y = [t.to(self._device) for t in data]
        loss = self._model(x, y)["cls_loss"]
        loss.backward()
        return {"total_loss": loss.item()}

    def apply_gradient(self):
        self._optimizer.step()
        self._optimizer.zero_grad()
        self._ckpt.step()

    def train_iters(self, train_data_loader, num_iters):
        while self._ckpt.global_step < num_iters:
            self._model.train()
            loss_dict = self.compute_loss_gradient(train_data_loader[self._ckpt.global_step % len(train_data_loader)])
            self.apply_gradient()
            if self._master:
                print(self._ckpt.global_step, loss_dict)

    def train_by_config(self, train_data_loader, config):
        if config.get("resume_from_last", True):
            self.init()
        self.train_iters(train_data_loader, config["num_iters"])
        if self._master:
            self._ckpt.save()

    def init(self):
        if self._master:
            os.makedirs(self._model_dir, exist_ok=True)
        self._ckpt.try_resume()


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))

    def forward(self, x, y=None):
        return {"cls_loss": F.cross_entropy(self.net(x), y)}


def run(local_rank, model_dir, num_iters, cpu_mode=False):
    model = Classifier()
    if not cpu_mode:
        if torch.cuda.is_available():
            torch.cuda.set_device(local_rank)
            dist.init_process_group(backend="nccl", init_method="env://")
        model.to(torch.device("cuda"))
        if dist.is_available():
            model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank], output_device=local_rank)
    traindata_loader = [(torch.randn(16, 8), torch.randint(0, 3, (16,))) for _ in range(4)]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    tl = Launcher(model_dir=model_dir, model=model, optimizer=optimizer)
    tl.train_by_config(traindata_loader, config={"num_iters": num_iters})


if __name__ == "__main__":
    torch.manual_seed(0)
    model_dir = tempfile.mkdtemp()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    cpu_mode = not torch.cuda.is_available()
    run(local_rank, model_dir, num_iters=4, cpu_mode=cpu_mode)
    run(local_rank, model_dir, num_iters=8, cpu_mode=cpu_mode)
