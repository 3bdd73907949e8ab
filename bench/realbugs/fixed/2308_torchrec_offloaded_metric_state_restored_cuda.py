# source: https://github.com/meta-pytorch/torchrec/pull/4342
# fixed twin: the offloaded module registers a load_state_dict post-hook that re-pins every restored non-CPU metric state to the CPU, as the fix does.
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
        self.weighted_sum += (predictions * weights).sum()
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
    def __init__(self):
        super().__init__()
        self.register_load_state_dict_post_hook(self._repin_states_to_cpu)

    @staticmethod
    def _repin_states_to_cpu(module, incompatible_keys):
        for name in module.ne._reductions:
            state = getattr(module.ne, name)
            if state.device.type != "cpu":
                setattr(module.ne, name, state.cpu())

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
