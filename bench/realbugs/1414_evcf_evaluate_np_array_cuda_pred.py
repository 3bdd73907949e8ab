# source: https://github.com/psywaves/EVCF/issues/1
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: the VAE recommender's evaluation moves each batch of user rows to the GPU when args.cuda is
#      set, reconstructs them with the model, and then turns both the reconstruction and the input
#      batch into numpy arrays with np.array(...) to mask already-seen items and rank with
#      argpartition; np.array of a CUDA tensor fails. The reporter's fix (issue closed) converts both
#      with .cpu().numpy(): the two marked lines (DL204: numpy conversion of tensors on a GPU).
#      Needs numpy to run.
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn


class VAE(nn.Module):
    def __init__(self, n_items, hidden=16):
        super().__init__()
        self.enc = nn.Linear(n_items, 2 * hidden)
        self.dec = nn.Linear(hidden, n_items)

    def calculate_loss(self, x, average=True):
        mu, logvar = self.enc(x).chunk(2, dim=1)
        logits = self.dec(mu)
        re = (torch.log_softmax(logits, dim=1) * x).sum(dim=1)
        kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(dim=1)
        loss = -re + kl
        return (loss.mean(), re.mean(), kl.mean()) if average else (loss, re, kl)

    def reconstruct_x(self, x):
        mu, _ = self.enc(x).chunk(2, dim=1)
        return torch.softmax(self.dec(mu), dim=1)


def ndcg_binary_at_k_batch(x_pred, heldout_batch, k=5):
    batch_users = x_pred.shape[0]
    idx_topk_part = np.argpartition(-x_pred, k, axis=1)
    topk_part = x_pred[np.arange(batch_users)[:, np.newaxis], idx_topk_part[:, :k]]
    idx_part = np.argsort(-topk_part, axis=1)
    idx_topk = idx_topk_part[np.arange(batch_users)[:, np.newaxis], idx_part]
    tp = torch.tensor(1.0 / np.log2(np.arange(2, k + 2)), dtype=torch.float)
    dcg = (heldout_batch[np.arange(batch_users)[:, np.newaxis], idx_topk].cpu() * tp).sum(dim=1)
    idcg = torch.tensor([tp[: min(int(n), k)].sum() for n in (heldout_batch != 0).sum(dim=1)])
    return dcg / idcg.clamp(min=1e-8)


def evaluate_vae(args, model, data_loader):
    evaluate_loss = 0.0
    ndcg_dist = torch.tensor([], dtype=torch.float)
    model.eval()
    for train, test in data_loader:
        if args.cuda:
            train, test = train.cuda(), test.cuda()
        x = train
        with torch.no_grad():
            loss, RE, KL = model.calculate_loss(x, average=True)
            evaluate_loss += loss.item()
            pred_val = model.reconstruct_x(x)
            pred_val = np.array(pred_val)  # expect: DL204
            x = np.array(x)  # expect: DL204
            pred_val[x.nonzero()] = -np.inf
            ndcg_dist = torch.cat([ndcg_dist, ndcg_binary_at_k_batch(pred_val, test, k=5)])
    return evaluate_loss / len(data_loader), ndcg_dist.mean().item()


if __name__ == "__main__":
    args = SimpleNamespace(cuda=torch.cuda.is_available())
    torch.manual_seed(0)
    model = VAE(n_items=20)
    if args.cuda:
        model.cuda()
    loader = [((torch.rand(8, 20) > 0.7).float(), (torch.rand(8, 20) > 0.8).float()) for _ in range(3)]
    print(evaluate_vae(args, model, loader))
