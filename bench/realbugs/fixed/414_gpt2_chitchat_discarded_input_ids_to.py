# source: https://github.com/yangjianxin1/GPT2-chitchat/issues/8
# error: RuntimeError: Expected object of device type cuda but got device type cpu for argument #3 'index' in call to _th_index_select
# bug: the training loop "moves" each padded batch of token ids with a bare input_ids.to(device)
#      statement and throws the copy away, so the GPU model's embedding lookup gets CPU indices.
#      Commit 09ecac1 assigns the moved batch back to input_ids.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

pad_id = 0


class MyDataset(Dataset):
    def __init__(self, data_list):
        self.data_list = data_list

    def __getitem__(self, index):
        return list(self.data_list[index])

    def __len__(self):
        return len(self.data_list)


def collate_fn(batch):
    max_input_len = max(len(sample) for sample in batch)
    input_ids = [sample + [pad_id] * (max_input_len - len(sample)) for sample in batch]
    return torch.tensor(input_ids, dtype=torch.long)


class TinyLM(nn.Module):
    def __init__(self, vocab_size=13317, hidden=64):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, hidden)
        self.head = nn.Linear(hidden, vocab_size)

    def forward(self, input_ids):
        return (self.head(self.wte(input_ids)),)


def train(model, device, train_list, epochs=2, batch_size=8):
    train_dataloader = DataLoader(MyDataset(train_list), batch_size=batch_size, shuffle=True, collate_fn=collate_fn)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1.5e-4)
    for epoch in range(epochs):
        for batch_idx, input_ids in enumerate(train_dataloader):
            input_ids = input_ids.to(device)
            outputs = model.forward(input_ids=input_ids)
            logits = outputs[0][:, :-1].contiguous()
            labels = input_ids[:, 1:].contiguous()
            loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=pad_id)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = TinyLM()
    model.to(device)
    train(model, device, [[101, 872, 1962, 102, 8024, 102]] * 64)
