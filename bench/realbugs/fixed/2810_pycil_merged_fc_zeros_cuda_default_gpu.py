# source: https://github.com/LAMDA-CL/PyCIL/issues/60
# fixed twin: the zero block of the merged classifier is moved to self._device, the network's device, instead of .cuda().
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvNet(nn.Module):
    def __init__(self, out_dim=8):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, out_dim, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.out_dim = out_dim

    def forward(self, x):
        return {"features": self.body(x)}


class BEEFISONet(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.convnets = nn.ModuleList()
        self._device = args["device"][0]
        self.out_dim = None
        self.old_fc = None
        self.new_fc = None
        self.task_sizes = []

    @property
    def feature_dim(self):
        return self.out_dim * len(self.convnets)

    def update_fc(self, nb_classes):
        self.convnets.append(ConvNet())
        if self.out_dim is None:
            self.out_dim = self.convnets[-1].out_dim
        new_task_size = nb_classes - sum(self.task_sizes)
        self.task_sizes.append(new_task_size)
        if self.new_fc is not None:
            self.old_fc = self.merged_fc()
        self.new_fc = nn.Linear(self.out_dim, new_task_size)

    def merged_fc(self):
        fc = nn.Linear(self.feature_dim - self.out_dim, sum(self.task_sizes[:-1]))
        return fc

    def forward(self, x):
        features = torch.cat([convnet(x)["features"] for convnet in self.convnets], 1)
        if self.old_fc is None:
            return {"logits": self.new_fc(features)}
        new_task_size = self.task_sizes[-1]
        fc_weight = torch.cat([self.old_fc.weight, torch.zeros((self.old_fc.out_features, self.out_dim)).to(self._device)], dim=1)
        new_fc_weight = torch.cat([torch.zeros(new_task_size, self.feature_dim - self.out_dim, device=x.device), self.new_fc.weight], dim=1)
        weight = torch.cat([fc_weight, new_fc_weight], dim=0)
        bias = torch.cat([self.old_fc.bias, self.new_fc.bias])
        return {"logits": F.linear(features, weight, bias)}


def incremental_train(args, tasks):
    network = BEEFISONet(args)
    seen = 0
    for task_classes in tasks:
        seen += task_classes
        network.update_fc(seen)
        network.to(args["device"][0])
        x = torch.randn(4, 3, 8, 8).to(args["device"][0])
        y = torch.randint(0, seen, (4,)).to(args["device"][0])
        loss = F.cross_entropy(network(x)["logits"], y)
        loss.backward()
        print(seen, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    if torch.cuda.device_count() > 1:
        device = torch.device("cuda:1")
    elif torch.cuda.is_available():
        device = torch.device("cuda:0")
    else:
        device = torch.device("cpu")
    incremental_train({"device": [device]}, tasks=[4, 2])
