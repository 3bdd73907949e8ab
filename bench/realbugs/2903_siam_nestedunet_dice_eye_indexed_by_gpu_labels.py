# source: https://github.com/likyoo/Siam-NestedUNet/issues/40
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
#        (train.py, cd_loss = criterion(cd_preds, labels) -> hybrid_loss -> dice_loss, utils/metrics.py line 75:
#        true_1_hot = torch.eye(num_classes)[true.squeeze(1)])
# bug: train.py moves the image pairs and the change labels to dev (cuda:0 when a GPU exists) and the model's
#      predictions are there too, but the hybrid loss's dice_loss one-hot encodes the labels by indexing a host
#      identity matrix, torch.eye(num_classes), with the GPU label tensor; recent PyTorch rejects a CPU tensor
#      indexed by CUDA indices. The issue is open with no fix (no twin); the cause is read from the repository's
#      train.py, utils/losses.py and utils/metrics.py. The marker is on the line the traceback points to (DL207: a
#      host tensor indexed with a GPU index).
import torch
import torch.nn as nn
import torch.nn.functional as F


class FocalLoss(nn.Module):
    def __init__(self, gamma=0, alpha=None, size_average=True):
        super(FocalLoss, self).__init__()
        self.gamma = gamma
        self.alpha = alpha
        self.size_average = size_average

    def forward(self, input, target):
        if input.dim() > 2:
            input = input.view(input.size(0), input.size(1), -1)
            input = input.transpose(1, 2)
            input = input.contiguous().view(-1, input.size(2))
        target = target.view(-1, 1)
        logpt = F.log_softmax(input, dim=1)
        logpt = logpt.gather(1, target).view(-1)
        pt = logpt.detach().exp()
        loss = -1 * (1 - pt) ** self.gamma * logpt
        return loss.mean() if self.size_average else loss.sum()


def dice_loss(logits, true, eps=1e-7):
    num_classes = logits.shape[1]
    true_1_hot = torch.eye(num_classes)[true.squeeze(1)]  # expect: DL207
    true_1_hot = true_1_hot.permute(0, 3, 1, 2).float()
    probas = F.softmax(logits, dim=1)
    true_1_hot = true_1_hot.type(logits.type())
    dims = (0,) + tuple(range(2, true.ndimension()))
    intersection = torch.sum(probas * true_1_hot, dims)
    cardinality = torch.sum(probas + true_1_hot, dims)
    dice_loss = (2. * intersection / (cardinality + eps)).mean()
    return 1 - dice_loss


def hybrid_loss(predictions, target, bce_weight=0.5):
    loss = 0
    pos = 0
    focal = FocalLoss()
    loss_weight = torch.tensor([0.5, 0.5, 0.75, 0.75, 1.0], dtype=torch.float)
    for prediction in predictions:
        bce = focal(prediction, target)
        dice = dice_loss(prediction, target)
        loss += (bce + dice * (1 - bce_weight)) * loss_weight[pos]
        pos += 1
    return loss


class SNUNet_ECAM(nn.Module):
    def __init__(self, in_ch=3, out_ch=2, width=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(in_ch, width, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(2 * width, out_ch, 1)

    def forward(self, xA, xB):
        return (self.head(torch.cat([self.encoder(xA), self.encoder(xB)], dim=1)),)


def get_loaders(batch_size=4, patch_size=16, n=3):
    return [(torch.randn(batch_size, 3, patch_size, patch_size), torch.randn(batch_size, 3, patch_size, patch_size),
             torch.randint(0, 2, (batch_size, patch_size, patch_size))) for _ in range(n)]


def load_model(dev):
    return SNUNet_ECAM(3, 2).to(dev)


def get_criterion():
    return hybrid_loss


if __name__ == "__main__":
    dev = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(108)
    train_loader = get_loaders()
    model = load_model(dev)
    criterion = get_criterion()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(2):
        model.train()
        for batch_img1, batch_img2, labels in train_loader:
            batch_img1 = batch_img1.float().to(dev)
            batch_img2 = batch_img2.float().to(dev)
            labels = labels.long().to(dev)
            optimizer.zero_grad()
            cd_preds = model(batch_img1, batch_img2)
            cd_loss = criterion(cd_preds, labels)
            loss = cd_loss
            loss.backward()
            optimizer.step()
            cd_preds = cd_preds[-1]
            _, cd_preds = torch.max(cd_preds, 1)
        print(epoch, loss.item())
