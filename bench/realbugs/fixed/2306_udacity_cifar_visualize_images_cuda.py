# source: https://github.com/udacity/deep-learning-v2-pytorch/pull/243
# fixed twin: each image is copied back to the host before the numpy-based imshow (images.cpu()[idx]), as the merged PR (and the solution notebook) does.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

train_on_gpu = torch.cuda.is_available()
classes = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
shown = []


def imshow(img):
    img = img / 2 + 0.5  # unnormalize
    shown.append(np.transpose(img, (1, 2, 0)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc1 = nn.Linear(32 * 8 * 8, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 32 * 8 * 8)
        return self.fc2(F.relu(self.fc1(x)))


if __name__ == "__main__":
    model = Net()
    if train_on_gpu:
        model.cuda()
    test_batches = [(torch.rand(20, 3, 32, 32) * 2 - 1, torch.randint(0, 10, (20,)))]

    dataiter = iter(test_batches)
    images, labels = next(dataiter)
    if train_on_gpu:
        images = images.cuda()
    output = model(images)
    _, preds_tensor = torch.max(output, 1)
    preds = np.squeeze(preds_tensor.numpy()) if not train_on_gpu else np.squeeze(preds_tensor.cpu().numpy())

    titles = []
    for idx in np.arange(20):
        imshow(images.cpu()[idx])
        titles.append("{} ({})".format(classes[preds[idx]], classes[labels[idx]]))
    print(len(shown), titles[:3])
