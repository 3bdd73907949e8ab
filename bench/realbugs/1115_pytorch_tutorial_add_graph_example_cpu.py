# source: https://github.com/patrickloeber/pytorchTutorial/pull/13
# error: RuntimeError: Expected all tensors to be on the same device (tracing the CUDA model for TensorBoard with the CPU example batch)
# bug: the TensorBoard tutorial takes one test batch for plots, builds the network on the configured
#      device, and then logs the graph with writer.add_graph(model, example_data.reshape(-1, 28*28)),
#      which traces the CUDA model with the CPU batch. The PR (commit b5843ae) moves the example batch to
#      the device in that call; the line is marked (DL203). The writer below stands in for
#      torch.utils.tensorboard.SummaryWriter (absent here); add_graph traces the model the same way.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class SummaryWriter:
    def __init__(self, log_dir):
        self.log_dir, self.graphs = log_dir, []

    def add_graph(self, model, input_to_model):
        with torch.no_grad():
            self.graphs.append(torch.jit.trace(model, input_to_model))

    def close(self):
        pass


writer = SummaryWriter("runs/mnist1")
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
input_size, hidden_size, num_classes, batch_size, learning_rate = 784, 50, 10, 64, 0.001

test_dataset = TensorDataset(torch.rand(256, 1, 28, 28), torch.randint(0, 10, (256,)))
test_loader = DataLoader(dataset=test_dataset, batch_size=batch_size, shuffle=False)
examples = iter(test_loader)
example_data, example_targets = next(examples)


class NeuralNet(nn.Module):
    def __init__(self, input_size, hidden_size, num_classes):
        super().__init__()
        self.l1 = nn.Linear(input_size, hidden_size)
        self.relu = nn.ReLU()
        self.l2 = nn.Linear(hidden_size, num_classes)

    def forward(self, x):
        return self.l2(self.relu(self.l1(x)))


model = NeuralNet(input_size, hidden_size, num_classes).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)

writer.add_graph(model, example_data.reshape(-1, 28 * 28))  # expect: DL203

for images, labels in test_loader:
    images = images.reshape(-1, 28 * 28).to(device)
    labels = labels.to(device)
    loss = criterion(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
writer.close()
print(loss.item())
