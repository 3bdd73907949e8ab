# source: https://github.com/Shawn1993/cnn-text-classification-pytorch/issues/1
# error: errors when calling cuda() on the model: the convolutions in the list stay on the CPU
# bug: the per-kernel-size convolutions are kept in a plain list comprehension, so
#      model.cuda() does not move them and the CUDA embeddings meet CPU conv weights.
import torch
import torch.nn as nn
import torch.nn.functional as F


class CNN_Text(nn.Module):
    def __init__(self, args):
        super(CNN_Text, self).__init__()
        V = args.embed_num
        D = args.embed_dim
        C = args.class_num
        Ci = 1
        Co = args.kernel_num
        Ks = args.kernel_sizes
        self.embed = nn.Embedding(V, D)
        self.convs1 = nn.ModuleList([nn.Conv2d(Ci, Co, (K, D)) for K in Ks])
        self.dropout = nn.Dropout(args.dropout)
        self.fc1 = nn.Linear(len(Ks) * Co, C)

    def forward(self, x):
        x = self.embed(x)  # (N, W, D)
        x = x.unsqueeze(1)  # (N, Ci, W, D)
        x = [F.relu(conv(x)).squeeze(3) for conv in self.convs1]
        x = [F.max_pool1d(i, i.size(2)).squeeze(2) for i in x]
        x = torch.cat(x, 1)
        x = self.dropout(x)
        return self.fc1(x)


def train(train_iter, model, args):
    if args.cuda:
        model.cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for batch in train_iter:
        feature, target = batch.text, batch.label
        feature.t_()
        if args.cuda:
            feature, target = feature.cuda(), target.cuda()
        optimizer.zero_grad()
        logit = model(feature)
        loss = F.cross_entropy(logit, target)
        loss.backward()
        optimizer.step()
