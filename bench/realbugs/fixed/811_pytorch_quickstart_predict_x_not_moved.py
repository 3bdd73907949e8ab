# source: https://github.com/pytorch/tutorials/pull/1657
# fixed twin: the sample is moved to the device before the prediction, as the PR does.
import torch
from torch import nn
from torch.utils.data import TensorDataset

device = "cuda" if torch.cuda.is_available() else "cpu"

test_data = TensorDataset(torch.rand(16, 1, 28, 28), torch.randint(0, 10, (16,)))
classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(nn.Linear(28 * 28, 512), nn.ReLU(), nn.Linear(512, 10))

    def forward(self, x):
        return self.linear_relu_stack(self.flatten(x))


model = NeuralNetwork().to(device)
model.eval()
x, y = test_data[0][0], test_data[0][1]
with torch.no_grad():
    x = x.to(device)
    pred = model(x)
    predicted, actual = classes[pred[0].argmax(0)], classes[y]
    print(f'Predicted: "{predicted}", Actual: "{actual}"')
