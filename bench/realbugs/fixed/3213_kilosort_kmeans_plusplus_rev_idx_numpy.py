# source: https://github.com/MouseLand/Kilosort/issues/956
# fixed twin: commit 68592a5 turns the reverse map into a tensor on the sorting device,
#             rev_idx = torch.from_numpy(rev_idx).to(device), right after subsample_idx.
import numpy as np
import torch


def kmeans_plusplus(Xg, niter=200, seed=1, device=torch.device('cuda'), verbose=False):
    vtot = torch.norm(Xg, 2, dim=1)**2

    n1 = vtot.shape[0]
    if n1 > 2**24:
        # torch.multinomial doesn't allow more than 2**24 elements
        n2 = n1 - 2**24   # number of spikes to remove before sampling
        idx, rev_idx = subsample_idx(n1, n2)
        rev_idx = torch.from_numpy(rev_idx).to(device)
        subsample = True
    else:
        subsample = False

    torch.manual_seed(seed)
    np.random.seed(seed)

    ntry = 100
    n_spikes, n_features = Xg.shape
    mu = torch.zeros((niter, n_features), device = device)
    vexp0 = torch.zeros(n_spikes, device = device)
    iclust = torch.zeros((n_spikes,), dtype = torch.int, device = device)

    for j in range(niter):
        v2 = torch.relu(vtot - vexp0)
        if subsample:
            isamp = rev_idx[torch.multinomial(v2[idx], ntry)]
        else:
            isamp = torch.multinomial(v2, ntry)

        Xc = Xg[isamp]
        vexp = 2 * Xg @ Xc.T - (Xc**2).sum(1)
        dexp = torch.relu(vexp - vexp0.unsqueeze(1))
        vsum = dexp.sum(0)
        imax = torch.argmax(vsum)
        ix = dexp[:, imax] > 0
        iclust[ix] = j
        mu[j] = Xc[imax]
        vexp0[ix] = vexp[ix, imax]
        del(vexp)
        del(dexp)

    return iclust


def subsample_idx(n1, n2):
    """Boolean mask and reverse mapping (NumPy arrays) for an evenly distributed subsample."""
    remove = np.round(np.linspace(0, n1 - 1, n2)).astype(int)
    idx = np.ones(n1, dtype=bool)
    idx[remove] = False
    rev_idx = idx.nonzero()[0]
    return idx, rev_idx


def cluster(Xd, nclust=20, seed=1, device=torch.device('cuda'), verbose=False):
    Xg = Xd.to(device)
    iclust_init = kmeans_plusplus(Xg, niter=nclust, seed=seed, device=device, verbose=verbose)
    iclust = iclust_init.clone()
    _, iclust = torch.unique(iclust, return_inverse=True)
    return iclust.cpu().numpy(), iclust_init


if __name__ == "__main__":
    device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')
    Xd = torch.randn(5000, 6)
    iclust, _ = cluster(Xd, nclust=10, device=device)
    print(iclust[:20])
