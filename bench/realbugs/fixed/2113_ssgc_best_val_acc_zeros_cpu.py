# source: https://github.com/allenhaozhu/SSGC/pull/7
# fixed twin: the validation accuracy and loss are taken as Python numbers with .item() before the comparisons (PR 7).
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


def accuracy(output, labels):
    preds = output.max(1)[1].type_as(labels)
    correct = preds.eq(labels).double().sum()
    return correct / len(labels)


class SGC(nn.Module):
    def __init__(self, nfeat, nclass):
        super().__init__()
        self.W = nn.Linear(nfeat, nclass)

    def forward(self, x):
        return self.W(x)


def load_citation(n=60, nfeat=12, nclass=3, cuda=False):
    features = torch.randn(n, nfeat)
    adj = torch.softmax(torch.randn(n, n), dim=1)
    labels = torch.randint(0, nclass, (n,))
    idx_train, idx_val = torch.arange(0, 30), torch.arange(30, 45)
    if cuda:
        features, adj, labels = features.cuda(), adj.cuda(), labels.cuda()
        idx_train, idx_val = idx_train.cuda(), idx_val.cuda()
    return adj, features, labels, idx_train, idx_val


def sgc_precompute(features, adj, degree):
    for _ in range(degree):
        features = adj @ features
    return features


def train_regression(model, train_features, train_labels, val_features, val_labels, epochs=20, lr=0.2):
    optimizer = optim.Adam(model.parameters(), lr=lr)
    best_acc_val = torch.zeros((1))
    best_loss_val = 100.0
    best_model = None
    for epoch in range(epochs):
        model.train()
        optimizer.zero_grad()
        loss_train = F.cross_entropy(model(train_features), train_labels)
        loss_train.backward()
        optimizer.step()
        with torch.no_grad():
            model.eval()
            output = model(val_features)
            acc_val = accuracy(output, val_labels).item()
            loss_val = F.cross_entropy(output, val_labels).item()
            if best_acc_val < acc_val:
                best_acc_val = acc_val
            if best_loss_val > loss_val:
                best_loss_val = loss_val
                best_model = model
    return best_model, best_acc_val


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-cuda", action="store_true")
    args = parser.parse_args([])
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    adj, features, labels, idx_train, idx_val = load_citation(cuda=args.cuda)
    model = SGC(features.size(1), int(labels.max()) + 1)
    if args.cuda:
        model.cuda()
    features = sgc_precompute(features, adj, degree=2)
    model, acc_val = train_regression(model, features[idx_train], labels[idx_train], features[idx_val], labels[idx_val])
    print("Validation Accuracy: {:.4f}".format(float(acc_val)))
