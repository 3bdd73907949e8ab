# source: https://github.com/anhaidgroup/deepmatcher/pull/54
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.
# bug: MatchingModel.load_state restores a model saved after GPU training with torch.load and no
#      map_location (and offers the caller no way to pass one), so it cannot be used on a CPU machine.
import dill
import six
import torch
import torch.nn as nn


class MatchingModel(nn.Module):
    def __init__(self, hidden_size=300):
        super(MatchingModel, self).__init__()
        self.hidden_size = hidden_size
        self._train_buffers = set()
        self.classifier = nn.Linear(hidden_size, 2)

    def forward(self, x):
        return self.classifier(x)

    def save_state(self, path, include_meta=True):
        state = {'model': self.state_dict()}
        for k in self._train_buffers:
            if include_meta or k != 'state_meta':
                state[k] = getattr(self, k)
        torch.save(state, path, pickle_module=dill)

    def load_state(self, path, map_location=None):
        state = torch.load(path, pickle_module=dill, map_location=map_location)
        for k, v in six.iteritems(state):
            if k != 'model':
                self._train_buffers.add(k)
                setattr(self, k, v)
        self.load_state_dict(state['model'])


model = MatchingModel()
model.load_state('hybrid_model.pth', map_location='cpu')
model.eval()
