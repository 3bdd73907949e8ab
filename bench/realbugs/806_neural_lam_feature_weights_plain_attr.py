# source: https://github.com/mllam/neural-lam/pull/241
# error: RuntimeError: Expected all tensors to be on the same device (feature weights on cpu, predictions on cuda:0)
# bug: the forecasting module keeps its per-feature loss weights as a plain tensor attribute
#      built in __init__; model.to("cuda") (or Lightning's device placement) moves parameters and
#      buffers but not this attribute, so the weighted loss mixes CPU weights with CUDA errors.
#      The PR registers the weights as a buffer; the changed line is marked.
import torch
import torch.nn as nn


class ForecasterModule(nn.Module):
    def __init__(self, num_features, feature_weights):
        super().__init__()
        self.net = nn.Linear(num_features, num_features)
        self.feature_weights = torch.tensor(feature_weights, dtype=torch.float32)  # expect: DL103

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch):
        inputs, target = batch
        prediction = self(inputs)
        squared_error = (prediction - target) ** 2
        return (squared_error * self.feature_weights).mean()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = ForecasterModule(4, [1.0, 0.5, 2.0, 1.0]).to(device)
    batch = (torch.randn(8, 4, device=device), torch.randn(8, 4, device=device))
    loss = model.training_step(batch)
    loss.backward()
    print(loss.item())
