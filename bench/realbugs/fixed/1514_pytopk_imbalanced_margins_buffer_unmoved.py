# source: https://github.com/garcinc/noised-topk/pull/3
# fixed twin: the functional loss moves the margins to the scores' device before the gather, as the PR's commit d85a17e (closed unmerged) does.
import torch
import torch.nn as nn
import torch.nn.functional as F


def noised_topk(x, Z, k, epsilon):
    noised = x.unsqueeze(-1) + epsilon * Z
    return noised.topk(k, dim=1).values[:, -1].mean(dim=-1)


def imbal_noised_topk_loss(s, y, k, m_list, epsilon, softtopk, Z, scale):
    m_list = m_list.to(s.device)
    margins_batch = torch.gather(m_list, dim=0, index=y)
    correct_scores = torch.squeeze(torch.gather(s, 1, y[:, None]))
    skp1 = softtopk(s, Z, k + 1, epsilon)
    return torch.mean(F.relu(scale * (margins_batch + skp1 - correct_scores)))


class ImbalNoisedTopK(nn.Module):
    def __init__(self, k, epsilon, max_m, cls_num_list, scale=50, n_sample=5):
        super().__init__()
        self.k, self.epsilon, self.scale, self.n_sample = k, epsilon, scale, n_sample
        m_list = torch.tensor(cls_num_list, dtype=torch.float32).pow(-0.25)
        m_list = m_list * (max_m / m_list.max())
        self.register_buffer("m_list", m_list)

    def forward(self, s, y):
        n_batch, d = s.shape
        Z = torch.randn(n_batch, d, self.n_sample, device=s.device)
        return imbal_noised_topk_loss(s, y, self.k, self.m_list, self.epsilon, noised_topk, Z, self.scale)


def train_epoch(model, loader, criteria, optimizer, device):
    model.train()
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = criteria(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3)).to(device)
    criteria = ImbalNoisedTopK(k=2, epsilon=0.1, max_m=0.3, cls_num_list=[17, 23, 55])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = [(torch.randn(8, 10), torch.randint(0, 3, (8,))) for _ in range(3)]
    print(train_epoch(model, loader, criteria, optimizer, device))
