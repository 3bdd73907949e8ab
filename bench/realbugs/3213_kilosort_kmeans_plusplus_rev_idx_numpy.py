# source: https://github.com/MouseLand/Kilosort/issues/956
# error: kilosort/clustering_qr.py line 488 run -> line 149 cluster -> iclust_init = kmeans_plusplus(Xg, ...) ->
#        line 222 isamp = rev_idx[torch.multinomial(v2[idx], ntry)] -> torch/_tensor.py __array__ -> return self.numpy()
#        TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: cluster() moves the spike features to the sorting device (Xg = Xd.to(device), CUDA by default) and calls
#      kmeans_plusplus on them. With more than 2**24 spikes torch.multinomial cannot sample all of them, so the function
#      subsamples: subsample_idx returns a NumPy boolean mask idx and a NumPy reverse map rev_idx, and each iteration
#      indexes the NumPy rev_idx with the CUDA sample from torch.multinomial, which makes NumPy convert the CUDA
#      tensor. Commit 68592a5 ("Fixed bug in kmeans_plusplus for greater than 2**24 spikes") inserts
#      rev_idx = torch.from_numpy(rev_idx).to(device) after subsample_idx; the fix only adds a line, so the indexing
#      line of the traceback is marked (DL204: NumPy converts the GPU index; DL207 the other candidate). Reductions:
#      cluster()'s neighbour/isub refinement and run()'s driver are a call on random features; the OOM logging is
#      dropped. The driver's data is far below 2**24 spikes, so it does not take the subsample branch; the bug needs a
#      recording with more than 2**24 spikes on a GPU. Needs NumPy (upstream; absent on this machine).
import numpy as np
import torch


def kmeans_plusplus(Xg, niter=200, seed=1, device=torch.device('cuda'), verbose=False):
    vtot = torch.norm(Xg, 2, dim=1)**2

    n1 = vtot.shape[0]
    if n1 > 2**24:
        # torch.multinomial doesn't allow more than 2**24 elements
        n2 = n1 - 2**24   # number of spikes to remove before sampling
        idx, rev_idx = subsample_idx(n1, n2)
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
            isamp = rev_idx[torch.multinomial(v2[idx], ntry)]  # expect: DL204
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
