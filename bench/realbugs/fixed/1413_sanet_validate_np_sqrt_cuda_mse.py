# source: https://github.com/jokermask/SANet/issues/4
# fixed twin: the accumulated squared error is copied to the host before np.sqrt, as the reporter's fix does.
import numpy as np
import torch
import torch.nn as nn


class SANetLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1), nn.ReLU())

    def forward(self, x):
        return self.body(x)


def make_loader(n_images=3, patches=4):
    loader = []
    for _ in range(n_images):
        imgs = [torch.rand(1, 3, 16, 16) for _ in range(patches)]
        targets = [torch.rand(1, 16, 16) * 0.1 for _ in range(patches)]
        loader.append((imgs, targets))
    return loader


def validate(test_loader, model, use_cuda):
    model.eval()
    mae = 0
    mse = 0
    for img_list, target_list in test_loader:
        patch_num = len(img_list)
        for img, target in zip(img_list, target_list):
            if use_cuda:
                img = img.cuda()
            with torch.no_grad():
                output = model(img)
            gt_count = target.sum().type(torch.FloatTensor)
            if use_cuda:
                gt_count = gt_count.cuda()
            et_count = output.data.sum()
            mae += abs(gt_count - et_count)
            mse += (gt_count - et_count) * (gt_count - et_count)
    mae = mae / (len(test_loader) * patch_num)
    mse = mse.cpu().numpy()
    mse = np.sqrt(mse / (len(test_loader) * patch_num))
    print(" * MAE {mae:.3f}--MSE {mse:.3f} ".format(mae=float(mae), mse=float(mse)))
    return mae


if __name__ == "__main__":
    use_cuda = torch.cuda.is_available()
    model = SANetLike()
    if use_cuda:
        model = model.cuda()
    validate(make_loader(), model, use_cuda)
