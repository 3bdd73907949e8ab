# source: https://github.com/flwrlabs/flower/pull/1140
# fixed twin: commit a9bea80 (PR #1140) rebinds labels = labels.to(DEVICE) in test() before the criterion call, so
#             the accuracy compares predictions and labels on the same device.
from collections import OrderedDict
import warnings

import torch
from torch.nn import GroupNorm
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore", category=UserWarning)
DEVICE = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


def train(net, trainloader, epochs):
    """Train the model on the training set."""
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    for _ in range(epochs):
        for images, labels in trainloader:
            optimizer.zero_grad()
            criterion(net(images.to(DEVICE)), labels.to(DEVICE)).backward()
            optimizer.step()


def test(net, testloader):
    """Validate the model on the test set."""
    criterion = torch.nn.CrossEntropyLoss()
    correct, total, loss = 0, 0, 0.0
    with torch.no_grad():
        for images, labels in testloader:
            outputs = net(images.to(DEVICE))
            labels = labels.to(DEVICE)
            loss += criterion(outputs, labels).item()
            total += labels.size(0)
            correct += (torch.max(outputs.data, 1)[1] == labels).sum().item()
    return loss / len(testloader.dataset), correct / total


def load_data():
    """Load CIFAR-10 (training and test set) - random stand-in."""
    trainset = TensorDataset(torch.randn(64, 3, 32, 32), torch.randint(0, 10, (64,)))
    testset = TensorDataset(torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,)))
    return DataLoader(trainset, batch_size=32, shuffle=True), DataLoader(testset)


def small_cnn(norm_layer, num_classes=10):
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), norm_layer(8), torch.nn.ReLU(),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, num_classes))


net = small_cnn(norm_layer=lambda x: GroupNorm(2, x), num_classes=10).to(DEVICE)
trainloader, testloader = load_data()


class FlowerClient:
    def get_parameters(self):
        return [val.cpu().numpy() for _, val in net.state_dict().items()]

    def set_parameters(self, parameters):
        params_dict = zip(net.state_dict().keys(), parameters)
        state_dict = OrderedDict({k: torch.tensor(v) for k, v in params_dict})
        net.load_state_dict(state_dict, strict=True)

    def fit(self, parameters, config):
        self.set_parameters(parameters)
        train(net, trainloader, epochs=1)
        return self.get_parameters(), len(trainloader.dataset), {}

    def evaluate(self, parameters, config):
        self.set_parameters(parameters)
        loss, accuracy = test(net, testloader)
        return float(loss), len(testloader.dataset), {"accuracy": float(accuracy)}


if __name__ == "__main__":
    client = FlowerClient()
    params, _, _ = client.fit(client.get_parameters(), {})
    print(client.evaluate(params, {}))
