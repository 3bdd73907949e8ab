# source: https://github.com/meta-pytorch/torchrec/pull/4342
# error: RuntimeError: Expected all tensors to be on the same device (the next update() after a checkpoint restore)
# bug: the CPU-offloaded metric module keeps every metric computation on the host and copies the
#      model's outputs there before updating. Metric states are plain attributes (set with
#      setattr, not buffers), and restoring them writes the loaded tensors as they come: a
#      checkpoint taken from the GPU metric module of the trainer puts CUDA state into the
#      offloaded computations, and the next update adds host values to it. The fix (the PR shows
#      closed, with Differential Revision D108029503; whether it landed is not in the stored
#      text) registers a load_state_dict post-hook in the offloaded module that re-pins every
#      non-CPU state to the CPU. The fix only inserts code; the accumulation line the
#      traceback points to is marked (DL201: host values meeting state restored onto the GPU).
import torch
import torch.nn as nn


class RecMetricComputation(nn.Module):
    def __init__(self):
        super().__init__()
        self._reductions = []
        self._add_state("weighted_sum", torch.zeros(1))
        self._add_state("weighted_num_samples", torch.zeros(1))

    def _add_state(self, name, default):
        self._reductions.append(name)
        setattr(self, name, default)

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        for name in self._reductions:
            setattr(self, name, state_dict[prefix + name])

    def state_dict(self, *args, **kwargs):
        return {name: getattr(self, name) for name in self._reductions}

    def update(self, predictions, weights):
        self.weighted_sum += (predictions * weights).sum()  # expect: DL201
        self.weighted_num_samples += weights.sum()

    def compute(self):
        return self.weighted_sum / self.weighted_num_samples


class RecMetricModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.ne = RecMetricComputation()

    def update(self, model_out):
        self.ne.update(model_out["prediction"].detach(), model_out["weight"])


class CPUOffloadedRecMetricModule(RecMetricModule):
    def update(self, model_out):
        host_out = {k: v.detach().to("cpu") for k, v in model_out.items()}
        super().update(host_out)


def move_states(module, device):
    for name in module.ne._reductions:
        setattr(module.ne, name, getattr(module.ne, name).to(device))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Linear(8, 1).to(device)
    train_metrics = RecMetricModule()
    move_states(train_metrics, device)
    for _ in range(3):
        x = torch.randn(16, 8, device=device)
        out = {"prediction": torch.sigmoid(model(x)).squeeze(1), "weight": torch.ones(16, device=device)}
        train_metrics.update(out)
    checkpoint = {"ne." + k: v for k, v in train_metrics.ne.state_dict().items()}

    eval_metrics = CPUOffloadedRecMetricModule()
    eval_metrics.load_state_dict(checkpoint)
    x = torch.randn(16, 8, device=device)
    eval_metrics.update({"prediction": torch.sigmoid(model(x)).squeeze(1), "weight": torch.ones(16, device=device)})
    print(float(eval_metrics.ne.compute()))
