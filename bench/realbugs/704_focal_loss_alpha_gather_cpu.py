# source: https://github.com/yatengLG/Focal-Loss-Pytorch/issues/17
# error: RuntimeError: Expected object of backend CPU but got backend CUDA for argument #3 'index' (at alpha = self.alpha.gather(0, labels.view(-1)))
# bug: the focal loss keeps its class weights alpha as a plain tensor attribute built in __init__
#      (not a buffer, so moving the loss module does not move it); forward even makes a moved copy
#      but then overwrites it by gathering from the CPU attribute with the CUDA labels. No upstream fix
#      is public; the line the report points to is marked (DL201, the CPU weights indexed by CUDA
#      labels; DL103 would be the rule for the unregistered attribute itself).
import torch
import torch.nn as nn
import torch.nn.functional as F


class FocalLoss(nn.Module):
    def __init__(self, alpha=None, gamma=2, num_classes=3, size_average=True):
        super().__init__()
        self.size_average = size_average
        if alpha is None:
            self.alpha = torch.ones(num_classes)
        elif isinstance(alpha, list):
            assert len(alpha) == num_classes
            self.alpha = torch.Tensor(alpha)
        else:
            assert alpha < 1
            self.alpha = torch.zeros(num_classes)
            self.alpha[0] += alpha
            self.alpha[1:] += 1 - alpha
        self.gamma = gamma

    def forward(self, preds, labels):
        preds = preds.view(-1, preds.size(-1))
        alpha = self.alpha.to(preds.device)
        logsoft = F.log_softmax(preds, dim=1)
        soft = torch.exp(logsoft)
        soft = soft.gather(1, labels.view(-1, 1))
        logsoft = logsoft.gather(1, labels.view(-1, 1))
        alpha = self.alpha.gather(0, labels.view(-1))  # expect: DL201
        loss = -torch.mul(torch.pow(1 - soft, self.gamma), logsoft)
        loss = torch.mul(alpha, loss.t())
        return loss.mean() if self.size_average else loss.sum()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    criterion = FocalLoss(alpha=0.25, num_classes=5).to(device)
    preds = torch.randn(8, 5, device=device, requires_grad=True)
    labels = torch.randint(0, 5, (8,), device=device)
    print(criterion(preds, labels))
