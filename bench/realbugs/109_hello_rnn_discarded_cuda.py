# source: https://github.com/hunkim/PyTorchZeroToAll/pull/6
# error: RuntimeError: Expected object of type torch.cuda.FloatTensor but found type torch.FloatTensor (inputs / h_0 on the CPU)
# bug: the GPU version of the char-RNN lab calls inputs.cuda(), labels.cuda() and h_0.cuda() as bare
#      statements, so every tensor stays on the CPU while the RNN is on the GPU; the prediction is
#      then converted with .numpy() straight from the GPU.
import torch
import torch.nn as nn
from torch.autograd import Variable

idx2char = ['h', 'i', 'e', 'l', 'o']
x_one_hot = [[[1, 0, 0, 0, 0],
              [0, 1, 0, 0, 0],
              [1, 0, 0, 0, 0],
              [0, 0, 1, 0, 0],
              [0, 0, 0, 1, 0],
              [0, 0, 0, 1, 0]]]
y_data = [1, 0, 2, 3, 3, 4]

inputs = Variable(torch.Tensor(x_one_hot))
labels = Variable(torch.LongTensor(y_data))

if torch.cuda.is_available():
    inputs.cuda()  # expect: DL101
    labels.cuda()  # expect: DL101

num_classes = 5
input_size = 5
hidden_size = 5
num_layers = 1


class RNN(nn.Module):
    def __init__(self, num_classes, input_size, hidden_size, num_layers):
        super(RNN, self).__init__()
        self.num_classes = num_classes
        self.num_layers = num_layers
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.rnn = nn.RNN(input_size=input_size, hidden_size=hidden_size, batch_first=True)

    def forward(self, x):
        h_0 = Variable(torch.zeros(x.size(0), self.num_layers, self.hidden_size))
        if torch.cuda.is_available():
            h_0.cuda()  # expect: DL101
        out, _ = self.rnn(x, h_0)
        return out.view(-1, self.num_classes)


rnn = RNN(num_classes, input_size, hidden_size, num_layers)
if torch.cuda.is_available():
    rnn.cuda()

criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(rnn.parameters(), lr=0.1)

for epoch in range(100):
    outputs = rnn(inputs)
    optimizer.zero_grad()
    loss = criterion(outputs, labels)
    loss.backward()
    optimizer.step()
    _, idx = outputs.max(1)
    idx = idx.data.numpy()  # expect: DL204
    result_str = [idx2char[c] for c in idx.squeeze()]
    print("epoch: %d, loss: %1.3f" % (epoch + 1, loss.item()))
    print("Predicted string: ", ''.join(result_str))
