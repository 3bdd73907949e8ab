# source: https://github.com/lucidrains/tr-rosetta-pytorch/pull/5
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking arugment for argument tensors in method wrapper__cat)
# bug: preprocess() moves the one-hot MSA and its weights to d() (CUDA when available) and builds
#      the 1d features there; the 2d coupling features come from fast_dca on the same device, but
#      for an alignment of a single sequence (nrow == 1) it substitutes torch.zeros(...), made on
#      the host, and the torch.cat of the pair features fails. The merged fix (commit 20b7dc4)
#      appends .to(d()) to the zeros. The marker is on the line it changed (DL202: a factory
#      without device= meets the GPU features).
import os
import string
import tempfile

import torch
import torch.nn.functional as F

ALPHABET = "ARNDCQEGHILKMFPSTWYV-"


def d(tensor=None):
    if tensor is None:
        return 'cuda' if torch.cuda.is_available() else 'cpu'
    return 'cuda' if tensor.is_cuda else 'cpu'


def parse_a3m(filename):
    table = str.maketrans(dict.fromkeys(string.ascii_lowercase))
    with open(filename) as fh:
        seqs = [line.strip().translate(table) for line in fh if line[0] != '>']
    rows = [[ALPHABET.index(c) if c in ALPHABET else 20 for c in s] for s in seqs]
    return torch.tensor(rows)


def msa2pssm(msa1hot, w):
    beff = w.sum()
    f_i = (w[:, None, None] * msa1hot).sum(dim=0) / beff + 1e-9
    h_i = (-f_i * torch.log(f_i)).sum(dim=1)
    return torch.cat((f_i, h_i[:, None]), dim=1)


def reweight(msa1hot, cutoff):
    id_min = msa1hot.shape[1] * cutoff
    id_mtx = torch.einsum('ikl,jkl->ij', msa1hot, msa1hot)
    return 1. / (id_mtx > id_min).float().sum(dim=-1)


def fast_dca(msa1hot, weights, penalty=4.5):
    device = msa1hot.device
    nr, nc, ns = msa1hot.shape
    x = msa1hot.view(nr, -1)
    num_points = weights.sum() - torch.sqrt(weights.mean())
    mean = (x * weights[:, None]).sum(dim=0, keepdim=True) / num_points
    x = (x - mean) * torch.sqrt(weights[:, None])
    cov = (x.t() @ x) / num_points
    cov_reg = cov + torch.eye(nc * ns).to(device) * penalty / torch.sqrt(weights.sum())
    x1 = torch.inverse(cov_reg).view(nc, ns, nc, ns)
    features = x1.transpose(1, 2).contiguous().reshape(nc, nc, ns * ns)
    x3 = torch.sqrt((x1[:, :-1, :, :-1] ** 2).sum(dim=(1, 3))) * (1 - torch.eye(nc).to(device))
    apc = x3.sum(dim=0, keepdim=True) * x3.sum(dim=1, keepdim=True) / x3.sum()
    contacts = (x3 - apc) * (1 - torch.eye(nc).to(device))
    return torch.cat((features, contacts[:, :, None]), dim=2)


def preprocess(msa_file, wmin=0.8, ns=21):
    a3m = parse_a3m(msa_file).long()
    nrow, ncol = a3m.shape
    msa1hot = F.one_hot(a3m, ns).float().to(d())
    w = reweight(msa1hot, wmin).float().to(d())

    f1d_seq = msa1hot[0, :, :20].float()
    f1d_pssm = msa2pssm(msa1hot, w)
    f1d = torch.cat((f1d_seq, f1d_pssm), dim=1)
    f1d = f1d[None, :, :].reshape((1, ncol, 42))

    f2d_dca = fast_dca(msa1hot, w) if nrow > 1 else torch.zeros((ncol, ncol, 442)).float()  # expect: DL202
    f2d_dca = f2d_dca[None, :, :, :]
    f2d = torch.cat((
        f1d[:, :, None, :].repeat(1, 1, ncol, 1),
        f1d[:, None, :, :].repeat(1, ncol, 1, 1),
        f2d_dca
    ), dim=-1)
    f2d = f2d.view(1, ncol, ncol, 442 + 2 * 42)
    return f2d.permute((0, 3, 2, 1))


if __name__ == "__main__":
    path = os.path.join(tempfile.mkdtemp(), "single.a3m")
    with open(path, "w") as fh:
        fh.write(">query\nMKVLAAGIVGLLLA\n")
    features = preprocess(path)
    print(features.shape, features.device)
