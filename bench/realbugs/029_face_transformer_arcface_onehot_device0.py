# source: https://github.com/zhongyy/Face-Transformer/issues/37
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:1! (when checking argument for argument index in method wrapper_CUDA_scatter__value)
# bug: the ArcFace head pins its cosine logits and one-hot buffer to the stored device_id[0],
#      but the ViT that owns it is wrapped in nn.DataParallel, so on the replica running on
#      cuda:1 the labels live on cuda:1 and scatter_ gets an index on another GPU.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import Parameter


class ArcFace(nn.Module):
    def __init__(self, in_features, out_features, device_id, s=64.0, m=0.50):
        super(ArcFace, self).__init__()
        self.device_id = device_id
        self.s = s
        self.weight = Parameter(torch.FloatTensor(out_features, in_features))
        nn.init.xavier_uniform_(self.weight)
        self.cos_m = math.cos(m)
        self.sin_m = math.sin(m)
        self.th = math.cos(math.pi - m)
        self.mm = math.sin(math.pi - m) * m

    def forward(self, input, label):
        if self.device_id == None:
            cosine = F.linear(F.normalize(input), F.normalize(self.weight))
        else:
            sub_weights = torch.chunk(self.weight, len(self.device_id), dim=0)
            temp_x = input.cuda(self.device_id[0])
            weight = sub_weights[0].cuda(self.device_id[0])
            cosine = F.linear(F.normalize(temp_x), F.normalize(weight))
            for i in range(1, len(self.device_id)):
                temp_x = input.cuda(self.device_id[i])
                weight = sub_weights[i].cuda(self.device_id[i])
                cosine = torch.cat((cosine, F.linear(F.normalize(temp_x), F.normalize(weight)).cuda(self.device_id[0])), dim=1)
        sine = torch.sqrt(1.0 - torch.pow(cosine, 2))
        phi = cosine * self.cos_m - sine * self.sin_m
        phi = torch.where(cosine > self.th, phi, cosine - self.mm)
        one_hot = torch.zeros(cosine.size())
        if self.device_id != None:
            one_hot = one_hot.cuda(self.device_id[0])
        one_hot.scatter_(1, label.view(-1, 1).long(), 1)  # expect: DL207
        output = (one_hot * phi) + ((1.0 - one_hot) * cosine)
        return output * self.s


class ViT_face(nn.Module):
    def __init__(self, dim, num_class, GPU_ID):
        super().__init__()
        self.backbone = nn.Sequential(nn.Flatten(), nn.Linear(3 * 112 * 112, dim))
        self.loss = ArcFace(in_features=dim, out_features=num_class, device_id=GPU_ID)

    def forward(self, img, label=None):
        emb = self.backbone(img)
        if label is not None:
            return self.loss(emb, label), emb
        return emb


GPU_ID = [0, 1]
DEVICE = torch.device("cuda:%d" % GPU_ID[0])
BACKBONE = ViT_face(dim=512, num_class=10000, GPU_ID=GPU_ID)
BACKBONE = nn.DataParallel(BACKBONE, device_ids=GPU_ID)
BACKBONE = BACKBONE.to(DEVICE)


def train_one_epoch(trainloader, LOSS, OPTIMIZER):
    for inputs, labels in iter(trainloader):
        inputs = inputs.to(DEVICE)
        labels = labels.to(DEVICE).long()
        outputs, emb = BACKBONE(inputs.float(), labels)
        loss = LOSS(outputs, labels)
        OPTIMIZER.zero_grad()
        loss.backward()
        OPTIMIZER.step()
