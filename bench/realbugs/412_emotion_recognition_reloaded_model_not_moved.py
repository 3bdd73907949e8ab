# source: https://github.com/IliaZenkov/transformer-cnn-emotion-recognition/issues/6
# error: RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same
# bug: the notebook trains the network on the GPU, then builds a fresh instance to restore the best
#      checkpoint for the test set; that instance is never moved, while the test features are made
#      directly on the GPU, so the validation closure calls a CPU model on CUDA tensors. The fix
#      confirmed in the thread moves the reloaded model with model.cuda() when CUDA is available.
import numpy as np
import torch
import torch.nn as nn


class ParallelAllYouWant(nn.Module):
    def __init__(self, num_emotions):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d((4, 4)))
        self.fc = nn.Linear(16 * 4 * 4, num_emotions)

    def forward(self, x):
        logits = self.fc(self.conv(x).flatten(1))
        return logits, torch.softmax(logits, dim=1)


def make_validate_fnc(model, criterion):
    def validate(X, Y):
        with torch.no_grad():
            model.eval()
            output_logits, output_softmax = model(X)
            predictions = torch.argmax(output_softmax, dim=1)
            accuracy = torch.sum(Y == predictions) / float(len(Y))
            loss = criterion(output_logits, Y)
        return loss.item(), accuracy * 100, predictions
    return validate


def load_checkpoint(optimizer, model, filename):
    checkpoint_dict = torch.load(filename)
    model.load_state_dict(checkpoint_dict["model"])
    if optimizer is not None:
        optimizer.load_state_dict(checkpoint_dict["optimizer"])
    return checkpoint_dict["epoch"]


device = "cuda" if torch.cuda.is_available() else "cpu"
criterion = nn.CrossEntropyLoss()
model = ParallelAllYouWant(num_emotions=8).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, weight_decay=1e-3, momentum=0.8)
torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 429}, "checkpoint-429.pkl")

model = ParallelAllYouWant(num_emotions=8)  # expect: DL201
load_checkpoint(optimizer, model, "checkpoint-429.pkl")

validate = make_validate_fnc(model, criterion)
X_test, y_test = np.random.rand(64, 1, 40, 282), np.random.randint(0, 8, 64)
X_test_tensor = torch.tensor(X_test, device=device).float()
y_test_tensor = torch.tensor(y_test, dtype=torch.long, device=device)
test_loss, test_acc, predicted_emotions = validate(X_test_tensor, y_test_tensor)
print(f"Test accuracy is {test_acc:.2f}%")
