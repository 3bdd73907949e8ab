# source: https://github.com/talipucar/CPC/issues/1
# error: RuntimeError: Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden tensor at cpu
# bug: the training wrapper moves the CPC model and every batch to options["device"], but the
#      initial GRU hidden state is made with th.zeros(...) and no device, in both the training
#      loop and the validation step.
import torch as th
import torch.nn as nn


class CPC(nn.Module):
    def __init__(self, options):
        super().__init__()
        dims = options["conv_dims"]
        self.encoder = nn.Conv1d(1, dims[-1], kernel_size=10, stride=5)
        self.gru = nn.GRU(input_size=dims[-1], hidden_size=dims[-1], num_layers=2, batch_first=True)
        self.predictor = nn.Linear(dims[-1], dims[-1])

    def forward(self, x, hidden):
        z = self.encoder(x).transpose(1, 2)
        output, hidden = self.gru(z, hidden)
        return z, self.predictor(output[:, -1, :]), hidden


class Model:
    def __init__(self, options):
        self.options = options
        self.device = options["device"]
        self.cpc = CPC(self.options)
        self.cpc.to(self.device)
        self.optimizer_cpc = th.optim.Adam(self.cpc.parameters(), lr=options["learning_rate"])

    def process_batch(self, Xbatch):
        Xbatch = Xbatch.float().unsqueeze(1)
        return Xbatch.to(self.device)

    def fit(self, train_loader, Xval):
        bs = self.options["batch_size"]
        for epoch in range(self.options["epochs"]):
            for i, Xbatch in enumerate(train_loader):
                Xbatch = self.process_batch(Xbatch)
                hidden = th.zeros(2, bs, self.options["conv_dims"][-1])  # expect: DL202
                encoder_samples, predictions, hidden = self.cpc(Xbatch, hidden)
                loss = ((encoder_samples[:, -1, :] - predictions) ** 2).mean()
                self.optimizer_cpc.zero_grad()
                loss.backward()
                self.optimizer_cpc.step()
            self.validate(Xval)

    def validate(self, Xval):
        with th.no_grad():
            self.cpc.eval()
            hidden = th.zeros(2, self.options["batch_size"], self.options["conv_dims"][-1])  # expect: DL202
            encoder_samples, predictions, hidden = self.cpc(Xval, hidden)
            self.cpc.train()
            return ((encoder_samples[:, -1, :] - predictions) ** 2).mean().item()
