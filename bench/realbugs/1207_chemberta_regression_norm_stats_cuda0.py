# source: https://github.com/seyonechithrananda/bert-loves-chemistry/pull/15
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0! (multi-GPU training, in normalize_logits)
# bug: the multitask regression head keeps the label normalisation statistics as plain tensor
#      attributes and, when the config says GPU, copies them with .cuda() - always to cuda:0. The
#      trainer wraps the model in DataParallel on a multi-GPU machine; the replica on cuda:1 gets
#      its parameters copied but not these attributes, and normalising its labels mixes devices.
#      The fix (commit be860b6, PR 15) registers both as buffers and drops the .cuda() copies; the
#      two attribute lines it turned into register_buffer calls are marked (DL103; the removed
#      .cuda() lines are the hard-coded device that made the attributes "work" on one GPU).
import torch
import torch.nn as nn
from torch.nn import MSELoss


class Config:
    def __init__(self, norm_mean, norm_std, hidden_size=16, vocab_size=30):
        self.norm_mean, self.norm_std = norm_mean, norm_std
        self.num_labels = len(norm_mean)
        self.hidden_size, self.vocab_size = hidden_size, vocab_size
        self.is_gpu = torch.cuda.is_available()


class RegressionHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.out_proj = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, features):
        x = features[:, 0, :]
        return self.out_proj(torch.relu(self.dense(x)))


class RobertaForRegression(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_labels = config.num_labels
        self.norm_mean = torch.tensor(config.norm_mean)  # expect: DL103
        self.norm_std = torch.tensor([s if s != 0 else 1e-8 for s in config.norm_std])  # expect: DL103
        if config.is_gpu:
            self.norm_mean = self.norm_mean.cuda()
            self.norm_std = self.norm_std.cuda()
        self.embeddings = nn.Embedding(config.vocab_size, config.hidden_size)
        self.encoder = nn.TransformerEncoderLayer(config.hidden_size, 2, 32, batch_first=True)
        self.regression = RegressionHead(config)

    def forward(self, input_ids, labels=None):
        sequence_output = self.encoder(self.embeddings(input_ids))
        logits = self.regression(sequence_output)
        if labels is None:
            return self.unnormalize_logits(logits)
        normalized_labels = self.normalize_logits(labels)
        loss = MSELoss()(logits.view(-1), normalized_labels.view(-1))
        return loss, logits

    def normalize_logits(self, tensor):
        return (tensor - self.norm_mean) / self.norm_std

    def unnormalize_logits(self, tensor):
        return (tensor * self.norm_std) + self.norm_mean


def train_step(model, input_ids, labels, device):
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    loss, _ = model(input_ids.to(device), labels=labels.to(device))
    loss = loss.mean()
    loss.backward()
    return loss.item()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    config = Config(norm_mean=[0.5, -1.0, 2.0], norm_std=[1.0, 0.0, 3.0])
    model = RobertaForRegression(config).to(device)
    input_ids = torch.randint(0, 30, (4, 6))
    labels = torch.randn(4, 3)
    print(train_step(model, input_ids, labels, device))
