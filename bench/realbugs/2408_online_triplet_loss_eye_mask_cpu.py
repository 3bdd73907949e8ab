# source: https://github.com/NegatioN/OnlineMiningTripletLoss/issues/6
# error: CUDA error on GPU tensors with batch_all_triplet_loss (RuntimeError: Expected all tensors to be on the same device - the distinct-index mask on the CPU, the label mask on the GPU)
# bug: batch_all_triplet_loss builds its 3D mask of valid triplets in _get_triplet_mask; the
#      "i, j, k distinct" part starts from torch.eye(labels.size(0)) made without device=, on the
#      host, and is and-ed with the label-equality mask computed from the GPU labels. Unlike
#      batch_hard_triplet_loss, this function had no device argument at all. The maintainer agreed
#      the incoming tensor's device should be used; PR 7 (commit bd8775d) makes the eye with
#      device=labels.device. The line is marked (DL202: a factory without device= meeting a
#      tensor argument).
import torch
import torch.nn as nn


def _pairwise_distances(embeddings, squared=False):
    dot_product = torch.matmul(embeddings, embeddings.t())
    square_norm = torch.diag(dot_product)
    distances = square_norm.unsqueeze(0) - 2.0 * dot_product + square_norm.unsqueeze(1)
    distances[distances < 0] = 0
    if not squared:
        mask = distances.eq(0).float()
        distances = distances + mask * 1e-16
        distances = (1.0 - mask) * torch.sqrt(distances)
    return distances


def _get_triplet_mask(labels):
    indices_equal = torch.eye(labels.size(0)).bool()  # expect: DL202
    indices_not_equal = ~indices_equal
    i_not_equal_j = indices_not_equal.unsqueeze(2)
    i_not_equal_k = indices_not_equal.unsqueeze(1)
    j_not_equal_k = indices_not_equal.unsqueeze(0)
    distinct_indices = (i_not_equal_j & i_not_equal_k) & j_not_equal_k
    label_equal = labels.unsqueeze(0) == labels.unsqueeze(1)
    i_equal_j = label_equal.unsqueeze(2)
    i_equal_k = label_equal.unsqueeze(1)
    valid_labels = ~i_equal_k & i_equal_j
    return valid_labels & distinct_indices


def batch_all_triplet_loss(labels, embeddings, margin, squared=False):
    pairwise_dist = _pairwise_distances(embeddings, squared=squared)
    anchor_positive_dist = pairwise_dist.unsqueeze(2)
    anchor_negative_dist = pairwise_dist.unsqueeze(1)
    triplet_loss = anchor_positive_dist - anchor_negative_dist + margin
    mask = _get_triplet_mask(labels)
    triplet_loss = mask.float() * triplet_loss
    triplet_loss[triplet_loss < 0] = 0
    valid_triplets = triplet_loss[triplet_loss > 1e-16]
    num_positive_triplets = valid_triplets.size(0)
    num_valid_triplets = mask.sum()
    fraction_positive_triplets = num_positive_triplets / (num_valid_triplets.float() + 1e-16)
    triplet_loss = triplet_loss.sum() / (num_positive_triplets + 1e-16)
    return triplet_loss, fraction_positive_triplets


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    encoder = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 8)).to(device)
    optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
    for step in range(3):
        inputs = torch.randn(16, 20).to(device)
        labels = torch.randint(0, 4, (16,)).to(device)
        loss, fraction = batch_all_triplet_loss(labels, encoder(inputs), margin=0.2)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(float(loss), float(fraction))
