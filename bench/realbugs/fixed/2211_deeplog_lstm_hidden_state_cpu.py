# source: https://github.com/aaron-y-chen/deeplog/pull/6
# fixed twin: both initial states are moved to the input's device (.to(input.device)), as the merged PR describes.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, num_keys):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_size, num_keys)

    def forward(self, input):
        h0 = torch.zeros(self.num_layers, input.size(0), self.hidden_size).to(input.device)
        c0 = torch.zeros(self.num_layers, input.size(0), self.hidden_size).to(input.device)
        out, _ = self.lstm(input, (h0, c0))
        return self.fc(out[:, -1, :])


def train(model, windows, labels, num_gpus=1, epochs=2):
    use_cuda = num_gpus > 0 and torch.cuda.is_available()
    device = torch.device("cuda" if use_cuda else "cpu")
    model = model.to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters())
    for _ in range(epochs):
        for seq, label in zip(windows, labels):
            seq = seq.view(-1, 10, 1).to(device)
            output = model(seq)
            loss = criterion(output, label.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return loss.item()


if __name__ == "__main__":
    windows = [torch.randint(0, 28, (16, 10)).float() for _ in range(3)]
    labels = [torch.randint(0, 28, (16,)) for _ in range(3)]
    print(train(Model(1, 64, 2, 28), windows, labels))
