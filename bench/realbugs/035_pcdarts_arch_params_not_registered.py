# source: https://github.com/yuhuixu1993/PC-DARTS/issues/57
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:1!
# bug: the architecture weights are plain Variables created with .cuda() (i.e. on cuda:0) and
#      kept as ordinary attributes, not nn.Parameters; nn.DataParallel therefore does not
#      replicate them, and the replica on cuda:1 multiplies cuda:0 weights with its cuda:1
#      feature maps.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

PRIMITIVES = ["none", "max_pool_3x3", "skip_connect", "sep_conv_3x3"]


class MixedOp(nn.Module):
    def __init__(self, C):
        super(MixedOp, self).__init__()
        self._ops = nn.ModuleList([nn.Conv2d(C, C, 3, padding=1, bias=False) for _ in PRIMITIVES])

    def forward(self, x, weights):
        return sum(w * op(x) for w, op in zip(weights, self._ops))


class Network(nn.Module):
    def __init__(self, C, num_classes, steps=4):
        super(Network, self).__init__()
        self._steps = steps
        self.stem = nn.Sequential(nn.Conv2d(3, C, 3, padding=1, bias=False), nn.BatchNorm2d(C))
        self.cells = nn.ModuleList([MixedOp(C) for _ in range(steps)])
        self.global_pooling = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(C, num_classes)
        self._initialize_alphas()

    def forward(self, input):
        s = self.stem(input)
        weights = F.softmax(self.alphas_normal, dim=-1)
        weights2 = F.softmax(self.betas_normal, dim=-1)
        for i, cell in enumerate(self.cells):
            s = weights2[i] * cell(s, weights[i])
        out = self.global_pooling(s)
        return self.classifier(out.view(out.size(0), -1))

    def _initialize_alphas(self):
        k = self._steps
        num_ops = len(PRIMITIVES)
        self.alphas_normal = Variable(1e-3 * torch.randn(k, num_ops).cuda(), requires_grad=True)  # expect: DL103
        self.betas_normal = Variable(1e-3 * torch.randn(k).cuda(), requires_grad=True)  # expect: DL103
        self._arch_parameters = [self.alphas_normal, self.betas_normal]

    def arch_parameters(self):
        return self._arch_parameters


model = Network(16, 10).cuda()
model = nn.DataParallel(model)
logits = model(torch.randn(64, 3, 32, 32).cuda())
