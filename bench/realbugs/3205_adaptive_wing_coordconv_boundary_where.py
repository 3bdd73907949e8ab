# source: https://github.com/SeungyounShin/Adaptive-Wing-Loss-for-Robust-Face-Alignment-via-Heatmap-Regression/issues/2
# error: (python train.py) train.py line 47 out = model(img) -> models/hourglass.py line 179
#        y = self.coordconv[i](x,boundary_pred) -> models/CoordConv.py line 67 ret = self.addcoords(x, boundary_map) ->
#        RuntimeError: Expected tensor to have cpu DeviceType, but got tensor with cuda DeviceType
# bug: train.py moves the hourglass model and each batch with .cuda(). AddCoords.forward builds its coordinate
#      channels with torch.arange(x_dim)/torch.arange(y_dim) on the CPU; the first torch.cat survives because
#      xx_channel.type_as(input_tensor) converts to the input's CUDA tensor type, but on the second and later stacks
#      (with_boundary=True, boundary_pred from the previous stack's score) torch.where meets the CUDA boundary mask
#      with the raw CPU xx_channel/yy_channel. The maintainer's commit b6ffca9 (titled for issue #3, the wrong
#      channels in the boundary torch.cat, which it also fixes) appends .cuda() to the two lines that finish the
#      coordinate channels; both are marked (DL202, the closest: coordinate grids made in forward without the input's
#      device; the torch.where two lines on is where they meet, DL201 the other candidate). Reductions: the residual
#      blocks, hourglass and fc heads are single convs; 2 stacks, 8 classes; the 300W dataset is random images and
#      heatmaps; the Adaptive Wing loss is an MSE; no pretrained load.
import torch
import torch.nn as nn
import torch.optim as optim


class AddCoords(nn.Module):

    def __init__(self, with_r=False, with_boundary=False):
        super().__init__()
        self.with_r = with_r
        self.with_boundary = with_boundary

    def forward(self, input_tensor, boundary_map):
        batch_size, _, x_dim, y_dim = input_tensor.size()

        xx_channel = torch.arange(x_dim).repeat(1, y_dim, 1)
        yy_channel = torch.arange(y_dim).repeat(1, x_dim, 1).transpose(1, 2)

        xx_channel = xx_channel.float() / (x_dim - 1)
        yy_channel = yy_channel.float() / (y_dim - 1)

        xx_channel = xx_channel * 2 - 1
        yy_channel = yy_channel * 2 - 1

        xx_channel = xx_channel.repeat(batch_size, 1, 1, 1).transpose(2, 3)  # expect: DL202
        yy_channel = yy_channel.repeat(batch_size, 1, 1, 1).transpose(2, 3)  # expect: DL202

        ret = torch.cat([
            input_tensor,
            xx_channel.type_as(input_tensor),
            yy_channel.type_as(input_tensor)], dim=1)

        if self.with_r:
            rr = torch.sqrt(torch.pow(xx_channel.type_as(input_tensor) - 0.5, 2) + torch.pow(yy_channel.type_as(input_tensor) - 0.5, 2))
            ret = torch.cat([ret, rr], dim=1)

        if self.with_boundary and (boundary_map is not None):
            boundary_map = boundary_map.view(boundary_map.shape[0], 1, boundary_map.shape[1], boundary_map.shape[2])
            boundary_channel = torch.clamp(boundary_map, 0.0, 1.0)
            zero_tensor = torch.zeros_like(xx_channel)
            xx_boundary_channel = torch.where(boundary_channel>0.05,
                                              xx_channel, zero_tensor)
            yy_boundary_channel = torch.where(boundary_channel>0.05,
                                              yy_channel, zero_tensor)

            ret = torch.cat([ret, xx_channel, yy_channel], dim=1)

        return ret


class CoordConv(nn.Module):

    def __init__(self, in_channels, out_channels, with_r=True, with_boundary=False, **kwargs):
        super().__init__()
        self.addcoords = AddCoords(with_r=with_r, with_boundary=with_boundary)
        in_size = in_channels + 2
        if with_r:
            in_size += 1
        if with_boundary:
            in_size += 2
        self.conv = nn.Conv2d(in_size, out_channels, **kwargs)

    def forward(self, x, boundary_map=None):
        ret = self.addcoords(x, boundary_map)
        ret = self.conv(ret)
        return ret


class HourglassNet(nn.Module):
    def __init__(self, num_stacks=2, num_classes=8, ch=16):
        super(HourglassNet, self).__init__()
        self.num_stacks = num_stacks
        self.coordconv1 = CoordConv(3, ch, kernel_size=7, stride=2, padding=3, bias=True)
        self.bn1 = nn.BatchNorm2d(ch)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(2, stride=2)
        coordconv, hg, score, fc_, score_ = [], [], [], [], []
        for i in range(num_stacks):
            if i == 0:
                coordconv.append(CoordConv(ch, ch, kernel_size=3, padding=1))
            else:
                coordconv.append(CoordConv(ch, ch, kernel_size=3, padding=1, with_boundary=True))
            hg.append(nn.Sequential(nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU()))
            score.append(nn.Conv2d(ch, num_classes, kernel_size=1, bias=True))
            if i < num_stacks - 1:
                fc_.append(nn.Conv2d(ch, ch, kernel_size=1, bias=True))
                score_.append(nn.Conv2d(num_classes, ch, kernel_size=1, bias=True))
        self.coordconv = nn.ModuleList(coordconv)
        self.hg = nn.ModuleList(hg)
        self.score = nn.ModuleList(score)
        self.fc_ = nn.ModuleList(fc_)
        self.score_ = nn.ModuleList(score_)

    def forward(self, x):
        out = []
        x = x.float()
        x = self.relu(self.bn1(self.coordconv1(x)))
        x = self.maxpool(x)
        boundary_pred = None
        for i in range(self.num_stacks):
            y = self.coordconv[i](x, boundary_pred)
            y = self.hg[i](y)
            score = self.score[i](y)
            boundary_pred = score[:, -1]
            out.append(score)
            if i < self.num_stacks - 1:
                x = x + self.fc_[i](y) + self.score_[i](score)
        return out


def hg(**kwargs):
    return HourglassNet(num_stacks=kwargs['num_stacks'], num_classes=kwargs['num_classes'])


class Face300W(torch.utils.data.Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        img = torch.rand(64, 64, 3)
        hmap = torch.rand(8, 16, 16)
        return img, hmap


if __name__ == "__main__":
    batch_size = 8
    model = hg(num_stacks=2, num_classes=8)
    model = model.cuda()
    train_dataset = Face300W()
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=batch_size, shuffle=True, num_workers=0)
    criterion = nn.MSELoss()
    optimizer = optim.RMSprop(model.parameters(), lr=1e-6, weight_decay=1e-5, momentum=0)
    print("train start!")
    for epoch in range(1):
        for iteration, sample in enumerate(train_loader):
            img, hmap = sample
            img = img.permute(0, 3, 1, 2)
            img, hmap = img.cuda(), hmap.cuda()
            out = model(img)
            loss = sum(criterion(o, hmap) for o in out)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(epoch, iteration, loss.item())
