# source: https://github.com/lucidrains/vector-quantize-pytorch/issues/37
# error: RuntimeError: X1 and X2 must have the same device type. X1: cuda X2: cpu (torch.cdist in the codebook's forward)
# bug: the user builds the VectorQuantize layer, moves only the input to the GPU (x = x.cuda())
#      and calls the layer; its codebook (a registered buffer) was never moved, so the distance
#      computation meets a GPU input and a host codebook. The maintainer's answer: put the vq
#      instance on CUDA as well (vq = vq.cuda()). That answer inserts one line before the input is
#      moved; the marker is on the call the traceback points to (DL201: operands on different
#      devices - the layer's buffers on the host, the input on the GPU).
import torch
import torch.nn as nn
import torch.nn.functional as F


class EuclideanCodebook(nn.Module):
    def __init__(self, dim, codebook_size, decay=0.8, eps=1e-5):
        super().__init__()
        self.decay = decay
        self.eps = eps
        self.register_buffer("embed", torch.randn(codebook_size, dim))
        self.register_buffer("cluster_size", torch.zeros(codebook_size))
        self.register_buffer("embed_avg", self.embed.clone())

    def forward(self, x):
        shape = x.shape
        flatten = x.reshape(-1, shape[-1])
        dist = -torch.cdist(flatten, self.embed, p=2)
        embed_ind = dist.argmax(dim=-1)
        embed_onehot = F.one_hot(embed_ind, self.embed.size(0)).type(x.dtype)
        quantize = F.embedding(embed_ind, self.embed).view(shape)
        if self.training:
            self.cluster_size.mul_(self.decay).add_(embed_onehot.sum(0), alpha=1 - self.decay)
            embed_sum = flatten.t() @ embed_onehot
            self.embed_avg.mul_(self.decay).add_(embed_sum.t(), alpha=1 - self.decay)
            cluster_size = self.cluster_size + self.eps
            self.embed.copy_(self.embed_avg / cluster_size.unsqueeze(1))
        return quantize, embed_ind.view(shape[:-1])


class VectorQuantize(nn.Module):
    def __init__(self, dim, codebook_size, decay=0.8, commitment_weight=1.0):
        super().__init__()
        self.commitment_weight = commitment_weight
        self._codebook = EuclideanCodebook(dim, codebook_size, decay=decay)

    def forward(self, x):
        quantize, embed_ind = self._codebook(x)
        commit_loss = F.mse_loss(quantize.detach(), x) * self.commitment_weight
        quantize = x + (quantize - x).detach()
        return quantize, embed_ind, commit_loss


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    vq = VectorQuantize(dim=64, codebook_size=128, decay=0.8, commitment_weight=1.0)
    x = torch.randn(1, 256, 64)
    x = x.to(device)
    quantized, indices, commit_loss = vq(x)  # expect: DL201
    print(quantized.shape, indices.shape, float(commit_loss))
