# source: https://github.com/WLM1ke/poptimizer/pull/62
# fixed twin: the collected means, variances and labels are copied to the host before .numpy() (commit 7327e06).
import numpy as np
import torch
import torch.nn as nn

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class DescribedDataLoader:
    def __init__(self, n_batches=3, batch_size=4, history=6):
        self.batches = [{"Input": torch.randn(batch_size, history), "Label": torch.randn(batch_size, 1)}
                        for _ in range(n_batches)]

    def __iter__(self):
        for batch in self.batches:
            yield {key: value.to(DEVICE) for key, value in batch.items()}


class WaveNetLite(nn.Module):
    def __init__(self, history=6):
        super().__init__()
        self.mean = nn.Linear(history, 1)
        self.log_std = nn.Linear(history, 1)

    def forward(self, batch):
        x = batch["Input"]
        return self.mean(x), self.log_std(x).exp()


def log_normal_llh(model, batch):
    mean, std = model(batch)
    dist = torch.distributions.Normal(mean, std)
    return -dist.log_prob(batch["Label"]).sum(), mean, std ** 2


def _opt_port(means, variances, labels):
    weights = means / variances
    weights = weights / np.abs(weights).sum()
    return float((weights * labels).sum())


class Model:
    def _eval_llh(self):
        loader = DescribedDataLoader()
        model = WaveNetLite()
        model.to(DEVICE)
        llh_sum, weight_sum = 0.0, 0
        all_means, all_vars, all_labels = [], [], []
        with torch.no_grad():
            model.eval()
            for batch in loader:
                loss, mean, var = log_normal_llh(model, batch)
                llh_sum -= loss.item()
                weight_sum += mean.shape[0]
                all_means.append(mean)
                all_vars.append(var)
                all_labels.append(batch["Label"])
        all_means = torch.cat(all_means).cpu().numpy().flatten()
        all_vars = torch.cat(all_vars).cpu().numpy().flatten()
        all_labels = torch.cat(all_labels).cpu().numpy().flatten()
        return llh_sum / weight_sum, _opt_port(all_means, all_vars, all_labels)


if __name__ == "__main__":
    print(Model()._eval_llh())
