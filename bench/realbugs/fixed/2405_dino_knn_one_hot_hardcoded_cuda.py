# source: https://github.com/facebookresearch/dino/issues/135
# fixed twin: the one-hot buffer is made on train_features.device (the reporter's fix, as later eval_knn.py has it), so it follows --use_cuda.
import argparse

import torch
import torch.nn as nn


@torch.no_grad()
def extract_features(model, data, use_cuda=True):
    features = None
    for start in range(0, data.size(0), 8):
        samples = data[start:start + 8]
        feats = model(samples).clone()
        if features is None:
            features = torch.zeros(data.size(0), feats.shape[-1])
            if use_cuda:
                features = features.cuda(non_blocking=True)
        features[start:start + 8] = feats.to(features.device)
    return features


@torch.no_grad()
def knn_classifier(train_features, train_labels, test_features, test_labels, k, T, num_classes=10):
    top1, total = 0.0, 0
    train_features = train_features.t()
    num_test_images, num_chunks = test_labels.shape[0], 4
    imgs_per_chunk = num_test_images // num_chunks
    retrieval_one_hot = torch.zeros(k, num_classes).to(train_features.device)
    for idx in range(0, num_test_images, imgs_per_chunk):
        features = test_features[idx:min(idx + imgs_per_chunk, num_test_images), :]
        targets = test_labels[idx:min(idx + imgs_per_chunk, num_test_images)]
        batch_size = targets.shape[0]
        similarity = torch.mm(features, train_features)
        distances, indices = similarity.topk(k, largest=True, sorted=True)
        candidates = train_labels.view(1, -1).expand(batch_size, -1)
        retrieved_neighbors = torch.gather(candidates, 1, indices)
        retrieval_one_hot.resize_(batch_size * k, num_classes).zero_()
        retrieval_one_hot.scatter_(1, retrieved_neighbors.view(-1, 1), 1)
        distances_transform = distances.clone().div_(T).exp_()
        probs = torch.sum(retrieval_one_hot.view(batch_size, -1, num_classes)
                          * distances_transform.view(batch_size, -1, 1), 1)
        _, predictions = probs.sort(1, True)
        correct = predictions.eq(targets.view(-1, 1))
        top1 += correct.narrow(1, 0, 1).sum().item()
        total += targets.size(0)
    return top1 * 100.0 / total


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--use_cuda", default=False, type=lambda s: s == "True")
    parser.add_argument("--nb_knn", default=[5, 10], nargs="+", type=int)
    args = parser.parse_args([])
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 8)).to(device).eval()
    train_features = extract_features(model, torch.randn(64, 12, device=device), args.use_cuda)
    test_features = extract_features(model, torch.randn(32, 12, device=device), args.use_cuda)
    train_features = nn.functional.normalize(train_features, dim=1, p=2)
    test_features = nn.functional.normalize(test_features, dim=1, p=2)
    train_labels = torch.randint(0, 10, (64,))
    test_labels = torch.randint(0, 10, (32,))
    if args.use_cuda:
        train_features, test_features = train_features.cuda(), test_features.cuda()
        train_labels, test_labels = train_labels.cuda(), test_labels.cuda()
    for k in args.nb_knn:
        print(k, knn_classifier(train_features, train_labels, test_features, test_labels, k, 0.07))
