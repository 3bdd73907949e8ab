# source: https://github.com/aassxun/SEMICON/issues/2
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
# bug: the hashing trainer samples its training subset with torch.randperm on the CPU and keeps
#      the sampled ids (sample_index); each batch's positions are moved to the GPU with the batch and
#      then used to index that CPU tensor for the loss. Older PyTorch accepted it (the maintainer's
#      server ran it), current releases reject a CUDA index into a CPU tensor. No upstream fix is
#      public; the index expression in the loss call is marked.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def sample_dataloader(data, targets, num_samples, batch_size):
    sample_index = torch.randperm(data.shape[0])[:num_samples]
    subset = TensorDataset(data[sample_index], targets[sample_index], torch.arange(num_samples))
    return DataLoader(subset, batch_size=batch_size, shuffle=True), sample_index


class ADSHLoss(nn.Module):
    def __init__(self, code_length, gamma):
        super().__init__()
        self.code_length, self.gamma = code_length, gamma

    def forward(self, F, B, S, omega):
        hash_loss = ((self.code_length * S - F @ B.t()) ** 2).sum() / (F.shape[0] * B.shape[0])
        quantization_loss = ((F - B[omega, :]) ** 2).sum() / (F.shape[0] * B.shape[0]) * self.gamma
        return hash_loss + quantization_loss


def train(data, targets, code_length=8, num_samples=32, device="cpu"):
    model = nn.Sequential(nn.Linear(data.shape[1], code_length), nn.Tanh()).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = ADSHLoss(code_length, 200)
    B = torch.randn(data.shape[0], code_length).to(device)
    all_targets = nn.functional.one_hot(targets, 4).float().to(device)
    loader, sample_index = sample_dataloader(data, targets, num_samples, 8)
    S = (all_targets[sample_index.to(device)] @ all_targets.t() > 0).float() * 2 - 1
    for batch, (x, y, index) in enumerate(loader):
        x, y, index = x.to(device), y.to(device), index.to(device)
        optimizer.zero_grad()
        F = model(x)
        loss = criterion(F, B, S[index, :], sample_index[index])  # expect: DL207
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(train(torch.randn(100, 12), torch.randint(0, 4, (100,)), device=device))
