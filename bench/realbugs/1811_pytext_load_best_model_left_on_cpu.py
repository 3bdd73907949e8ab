# source: https://github.com/facebookresearch/pytext/pull/875
# error: (reported as unexpected behaviour) the model returned by the trainer sits on the CPU while the batches are on the GPU; reusing it fails with "Expected all tensors to be on the same device"
# bug: to keep one copy of the weights in GPU memory the trainer stores the best epoch's state_dict
#      on the CPU, and at the end load_best_model moves the live model to the CPU before loading
#      that state into it, but never moves it back: the model train() returns stays on the CPU
#      while every batch the task builds is sent to the GPU (CUDA_ENABLED). The fix (PR 875) adds
#      state.model.cuda() at the end of the GPU branch; since the fix only adds a line, the reuse
#      of the returned model on a GPU batch (where it fails) is marked (DL201: a module called on an
#      argument on another device).
import torch
import torch.nn as nn

CUDA_ENABLED = torch.cuda.is_available()


def to_device(t):
    return t.cuda() if CUDA_ENABLED else t


class TrainingState:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.best_model_state = None
        self.best_metric = None


class Trainer:
    def __init__(self, epochs=3):
        self.epochs = epochs

    def save_best(self, state):
        model_state = state.model.state_dict()
        if CUDA_ENABLED:
            model_state = {k: v.cpu() for k, v in model_state.items()}
        state.best_model_state = model_state

    def load_best_model(self, state):
        if CUDA_ENABLED:
            state.model.cpu()
            state.model.load_state_dict(state.best_model_state)
        else:
            state.model.load_state_dict(state.best_model_state)

    def train(self, training_data, eval_data, model):
        if CUDA_ENABLED:
            model = model.cuda()
        state = TrainingState(model, torch.optim.SGD(model.parameters(), lr=0.1))
        loss_fn = nn.CrossEntropyLoss()
        for _ in range(self.epochs):
            for x, y in training_data:
                state.optimizer.zero_grad()
                loss_fn(state.model(x), y).backward()
                state.optimizer.step()
            with torch.no_grad():
                metric = sum(loss_fn(state.model(x), y).item() for x, y in eval_data)
            if state.best_metric is None or metric < state.best_metric:
                state.best_metric = metric
                self.save_best(state)
        self.load_best_model(state)
        return state.model, state.best_metric


def batches(n):
    return [(to_device(torch.randn(8, 5)), to_device(torch.randint(0, 3, (8,)))) for _ in range(n)]


if __name__ == "__main__":
    model, best = Trainer().train(batches(4), batches(2), nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3)))
    test_x, _ = batches(1)[0]
    with torch.no_grad():
        print(best, model(test_x).shape)  # expect: DL201
