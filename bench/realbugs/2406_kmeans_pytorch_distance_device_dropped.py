# source: https://github.com/subhadarship/kmeans_pytorch/pull/19
# error: (no exception) kmeans(..., device=cuda) says "running k-means on cuda" but every distance matrix is computed on the CPU: X and the centers are copied to the host each iteration (issue #10: "device is always set to CPU when calculating distances")
# bug: kmeans() takes a device and moves X there, but picks its distance helper as the bare
#      function pairwise_distance / pairwise_cosine, whose own device parameter defaults to the
#      CPU; each call copies both operands to the host, so the heavy part runs on the CPU and the
#      cluster ids come back on the host. The merged fix (commit 4f2f945) binds the device:
#      partial(pairwise_distance, device=device). The two selection lines are marked; no rule
#      names a device argument dropped on the way to a helper, so the markers use DL311 (a
#      function that takes a device makes its tensors elsewhere), the closest.
import torch


def initialize(X, num_clusters):
    indices = torch.randperm(len(X))[:num_clusters]
    return X[indices]


def pairwise_distance(data1, data2, device=torch.device("cpu")):
    data1, data2 = data1.to(device), data2.to(device)
    A = data1.unsqueeze(dim=1)
    B = data2.unsqueeze(dim=0)
    dis = (A - B) ** 2.0
    return dis.sum(dim=-1).squeeze()


def pairwise_cosine(data1, data2, device=torch.device("cpu")):
    data1, data2 = data1.to(device), data2.to(device)
    A = data1.unsqueeze(dim=1)
    B = data2.unsqueeze(dim=0)
    A_normalized = A / A.norm(dim=-1, keepdim=True)
    B_normalized = B / B.norm(dim=-1, keepdim=True)
    return 1 - (A_normalized * B_normalized).sum(dim=-1).squeeze()


def kmeans(X, num_clusters, distance="euclidean", tol=1e-4, iter_limit=0, device=torch.device("cpu")):
    print(f"running k-means on {device}..")
    if distance == "euclidean":
        pairwise_distance_function = pairwise_distance  # expect: DL311
    elif distance == "cosine":
        pairwise_distance_function = pairwise_cosine  # expect: DL311
    else:
        raise NotImplementedError
    X = X.float().to(device)
    initial_state = initialize(X, num_clusters)
    iteration = 0
    while True:
        dis = pairwise_distance_function(X, initial_state)
        choice_cluster = torch.argmin(dis, dim=1)
        initial_state_pre = initial_state.clone()
        for index in range(num_clusters):
            selected = torch.nonzero(choice_cluster == index).squeeze().to(device)
            selected = torch.index_select(X, 0, selected)
            if selected.shape[0] == 0:
                selected = X[torch.randint(len(X), (1,))]
            initial_state[index] = selected.mean(dim=0)
        center_shift = torch.sum(torch.sqrt(torch.sum((initial_state - initial_state_pre) ** 2, dim=1)))
        iteration += 1
        if center_shift ** 2 < tol or (iter_limit != 0 and iteration >= iter_limit):
            break
    return choice_cluster.cpu(), initial_state.cpu()


if __name__ == "__main__":
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    data = torch.cat([torch.randn(100, 2) + 4, torch.randn(100, 2) - 4])
    ids, centers = kmeans(data, num_clusters=2, distance="euclidean", device=device)
    ids_cos, _ = kmeans(data, num_clusters=2, distance="cosine", device=device, iter_limit=20)
    print(ids.bincount().tolist(), centers.shape, ids_cos.shape)
