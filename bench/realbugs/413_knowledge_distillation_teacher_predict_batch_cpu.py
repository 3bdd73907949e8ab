# source: https://github.com/HoyTta0/KnowledgeDistillation/issues/6
# error: RuntimeError: Expected object of device type cuda but got device type cpu for argument #1 'self' in call to _th_index_select
# bug: teacher_predict restores the BERT teacher onto config.device (the GPU) but feeds it batches
#      straight from a DataLoader over CPU TensorDatasets built by load_embed; the token ids reach the
#      GPU embedding table on the CPU. Commit 6285d36 (a rewrite of teacher.py) moves ids and mask to
#      config.device before every teacher call.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Config:
    def __init__(self):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.save_path = "saved_dict/bert.ckpt"
        self.vocab_size = 21128
        self.num_classes = 10


class Model(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed = nn.Embedding(config.vocab_size, 64)
        self.fc = nn.Linear(64, config.num_classes)

    def forward(self, x):
        context, seq_len, mask = x
        h = self.embed(context) * mask.unsqueeze(-1)
        return self.fc(h.sum(1) / seq_len.unsqueeze(-1))


def load_embed(token_ids, labels, pad_size=32):
    ids = torch.LongTensor([t[:pad_size] + [0] * (pad_size - len(t[:pad_size])) for t in token_ids])
    mask = (ids != 0).long()
    seq_len = mask.sum(1).clamp(min=1)
    return DataLoader(TensorDataset(ids, seq_len, mask, torch.LongTensor(labels)), batch_size=64)


def teacher_predict(x, y):
    config = Config()
    test_data = load_embed(x, y)
    model = Model(config).to(config.device)
    model.load_state_dict(torch.load(config.save_path))
    model.eval()
    p = []
    with torch.no_grad():
        for a, b, c, labels in test_data:
            outputs = model([a, b, c])  # expect: DL203
            p.append(outputs)
    return p


if __name__ == "__main__":
    logits = teacher_predict([[101, 2769, 4263, 102]] * 100, [3] * 100)
