# source: https://github.com/NatLabRockies/Wattile/issues/243
# error: RuntimeError: Input and parameter tensors are not at the same device, found input tensor at cuda:0 and parameter tensor at cpu
# bug: training moves the LSTM model to the run's device, but the separate validation entry point
#      rebuilds the model from its saved state (on the CPU) and hands it, with a CUDA device, to the
#      shared evaluation helper, which moves each batch to that device and calls the CPU model. The fix
#      (PR 244) adds the model move to the validation entry point; it only adds a line, so the model
#      call the traceback points to is marked (DL201: a module called on an argument on another device).
import os
import tempfile

import torch
import torch.nn as nn


class LSTMModel(nn.Module):
    def __init__(self, input_dim=7, hidden=16, out=3):
        super().__init__()
        self.lstm = nn.LSTM(input_dim, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, out)

    def forward(self, x):
        h, _ = self.lstm(x)
        return self.fc(h[:, -1])


def save_model(model, path):
    torch.save({"model_state_dict": model.state_dict()}, path)


def load_model(path):
    model = LSTMModel()
    model.load_state_dict(torch.load(path, map_location="cpu")["model_state_dict"])
    return model


class AlfaModel:
    def __init__(self, path, seq_dim=5, input_dim=7):
        self.path, self.seq_dim, self.input_dim = path, seq_dim, input_dim

    def test_processing(self, loader, model, device):
        preds = []
        model.eval()
        with torch.no_grad():
            for feats, _ in loader:
                features = feats.view(-1, self.seq_dim, self.input_dim).to(device)
                outputs = model(features)
                preds.append(outputs.cpu())
        return torch.cat(preds)

    def run_training(self, loader):
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = LSTMModel()
        model.to(device)
        save_model(model, self.path)
        return self.test_processing(loader, model, device)

    def run_validation(self, loader):
        model = load_model(self.path)
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model.to(device)
        return self.test_processing(loader, model, device)


if __name__ == "__main__":
    batches = [(torch.randn(4, 35), torch.randn(4, 3)) for _ in range(2)]
    alfa = AlfaModel(os.path.join(tempfile.mkdtemp(), "torch_model"))
    alfa.run_training(batches)
    print(alfa.run_validation(batches).shape)
