# source: https://github.com/TaoShuchang/G-NIA/issues/2
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
#        (run_gnia.py line 242: train_loss = np.array(loss_arr).sum())
# bug: run_gnia.py trains the injection attack model on `device` (the GPU): for each target node of a batch the
#      victim GCN's margin loss is a one-element GPU tensor appended to loss_arr, and the batch loss is formed with
#      np.array(loss_arr).sum(), which asks numpy to convert every GPU tensor (and would drop the graph needed for
#      backward). The issue is open; a commenter's torch.cat(loss_arr).sum() and the maintainer's ".cpu()" advice
#      were never committed (no fix, so no twin). The marker is on the line the report links (DL204). Needs NumPy; on
#      the CPU, current PyTorch stops at the same line for another reason (numpy() on a tensor that requires grad).
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.data as Data


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass):
        super().__init__()
        self.fc1 = nn.Linear(nfeat, nhid)
        self.fc2 = nn.Linear(nhid, nclass)

    def forward(self, x, adj):
        x = F.relu(adj @ self.fc1(x))
        return adj @ self.fc2(x)


class GNIA(nn.Module):
    def __init__(self, labels, nfeat, W1, W2, discrete, device, feat_max=1.0):
        super().__init__()
        self.labels, self.device, self.feat_max = labels, device, feat_max
        self.W1, self.W2 = W1, W2
        self.add_feat = nn.Linear(3 * W2.shape[1], nfeat)
        self.score = nn.Linear(nfeat + W2.shape[1], 1)

    def forward(self, target, one_order_nei, budget, feat, norm_a_target, node_emb, W_ori, W_wrong, train_flag, eps=0.5):
        tar_emb = node_emb[target].squeeze(0)
        inj_feat = torch.sigmoid(self.add_feat(torch.cat([tar_emb, W_ori, W_wrong]))) * self.feat_max
        nei_score = self.score(torch.cat([feat[one_order_nei], node_emb[one_order_nei] * norm_a_target], 1)).squeeze(1)
        disc_score = torch.sigmoid(nei_score / eps)
        masked_score_idx = torch.as_tensor(one_order_nei, device=feat.device)
        return inj_feat, disc_score, masked_score_idx


def gen_new_adj_tensor(adj_tensor, disc_score, masked_score_idx, device):
    n = adj_tensor.shape[0]
    new_row = torch.zeros(n, device=device).index_put((masked_score_idx,), disc_score)
    top = torch.cat([adj_tensor, new_row.unsqueeze(1)], 1)
    return torch.cat([top, torch.cat([new_row, torch.zeros(1, device=device)]).unsqueeze(0)], 0)


def normalize_tensor(adj):
    adj = adj + torch.eye(adj.shape[0], device=adj.device)
    d = adj.sum(1).pow(-0.5)
    return d.unsqueeze(1) * adj * d.unsqueeze(0)


def main(device, n=30, nfeat=12, nclass=3, batch_size=4, nepochs=2):
    adj = (torch.rand(n, n) < 0.15).float()
    adj = ((adj + adj.t()) > 0).float()
    adj.fill_diagonal_(0)
    adj_tensor = adj.to(device)
    nor_adj_tensor = normalize_tensor(adj_tensor)
    feat = torch.rand(n, nfeat, device=device)
    labels = torch.randint(0, nclass, (n,), device=device)
    labels_np = labels.cpu().numpy()
    victim_net = GCN(nfeat, 16, nclass).to(device)
    W1, W2 = victim_net.fc1.weight.detach(), victim_net.fc2.weight.detach()
    node_emb = (nor_adj_tensor @ F.relu(nor_adj_tensor @ (feat @ W1.t()))).detach()
    logits = victim_net(feat, nor_adj_tensor)
    sec = logits.topk(2, 1)[1][:, 1].cpu().numpy()
    W = W2
    model = GNIA(labels, nfeat, W1, W2, discrete=False, device=device).to(device)
    optimizer = torch.optim.Adam([{"params": model.parameters()}], lr=0.01)
    train_mask = np.arange(n // 2)
    batch_loader = Data.DataLoader(Data.TensorDataset(torch.LongTensor(train_mask), labels[train_mask].cpu()),
                                   batch_size=batch_size)
    for epoch in range(nepochs):
        train_loss_arr = []
        for batch_x, _ in batch_loader:
            loss_arr = []
            for train_batch in batch_x:
                target = np.array([train_batch])
                budget = 1
                best_wrong_label = sec[target[0]]
                ori = labels_np[target].item()
                one_order_nei = adj[target[0]].nonzero().view(-1).numpy()
                if len(one_order_nei) == 0:
                    continue
                norm_a_target = nor_adj_tensor[target.item()][one_order_nei].unsqueeze(1)
                inj_feat, disc_score, masked_score_idx = model(target, one_order_nei, budget, feat, norm_a_target, node_emb,
                                                               W[ori], W[best_wrong_label], train_flag=True)
                new_feat = torch.cat((feat, inj_feat.unsqueeze(0)), 0)
                new_adj_tensor = gen_new_adj_tensor(adj_tensor, disc_score, masked_score_idx, device)
                new_logits = victim_net(new_feat, normalize_tensor(new_adj_tensor))
                loss = F.relu(new_logits[target, ori] - new_logits[target, best_wrong_label])
                loss_arr.append(loss)
            train_loss = np.array(loss_arr).sum()  # expect: DL204
            optimizer.zero_grad()
            train_loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.1)
            optimizer.step()
            train_loss_arr.append((train_loss / len(loss_arr)).detach().cpu().item())
        print("Training set Loss:", np.array(train_loss_arr).mean())


if __name__ == "__main__":
    torch.manual_seed(0)
    np.random.seed(0)
    main(torch.device("cuda" if torch.cuda.is_available() else "cpu"))
