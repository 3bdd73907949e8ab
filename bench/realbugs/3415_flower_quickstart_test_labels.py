# source: https://github.com/flwrlabs/flower/pull/1140
# error: (PR description, running examples/quickstart_pytorch/run.sh with a CUDA GPU) File "client.py", line 42, in
#        test: correct += (torch.max(outputs.data, 1)[1] == labels).sum().item() -> RuntimeError: Expected all tensors
#        to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: the quickstart client picks DEVICE = cuda:0 when available and moves the network there; test() moves the
#      labels only inline inside the criterion call, criterion(outputs, labels.to(DEVICE)), so the name labels still
#      holds the CPU batch when the accuracy compares it with the CUDA predictions on the next lines. The fix (commit
#      a9bea80, PR #1140) rebinds labels = labels.to(DEVICE) before the criterion call; the line it changed is marked
#      (DL203, the closest rule: the labels stay on the CPU for the comparison; the comparison line of the traceback
#      is the DL201 candidate). Reductions: torchvision's resnet18 with GroupNorm is a small CNN, CIFAR-10 is a random
#      TensorDataset, tqdm is dropped, and the Flower federation (fl.client.start_numpy_client and the server) is
#      replaced by calling the client's fit and evaluate once with its own parameters. Needs NumPy for the client's
#      NumPy parameter exchange, as upstream.
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
            loss += criterion(outputs, labels.to(DEVICE)).item()  # expect: DL203
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
