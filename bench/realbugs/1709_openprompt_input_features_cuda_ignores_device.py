# source: https://github.com/thunlp/OpenPrompt/pull/161
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:2 and cuda:0! (when checking argument for argument index in method wrapper__index_select)
# bug: the batch container mimics a tensor with .to(device="cuda:0") and .cuda(); but .cuda()
#      takes no device and calls .to() with its default, so a batch always lands on GPU 0. The
#      basic tutorial moves the prompt model to a chosen GPU (model.cuda(gpu)) and the batches
#      with inputs.cuda(): on any GPU but 0 the embedding lookup fails. The fix (PR 161, commits
#      4eaf9e4 / 19b3337) gives cuda() a device argument and passes it on; the line that drops
#      the device is marked (DL302, the closest rule: a move to a hard-coded "cuda:0" inside a
#      method that otherwise follows its caller's device).
import torch
import torch.nn as nn


class InputFeatures(dict):
    tensorable_keys = ["input_ids", "attention_mask", "label"]

    def __init__(self, input_ids=None, attention_mask=None, label=None):
        super().__init__()
        self.input_ids = input_ids
        self.attention_mask = attention_mask
        self.label = label

    def to(self, device="cuda:0"):
        for key in self.tensorable_keys:
            value = getattr(self, key)
            if value is not None:
                setattr(self, key, value.to(device))
        return self

    def cuda(self):
        return self.to()  # expect: DL302

    @staticmethod
    def collate(batch):
        out = InputFeatures()
        for key in InputFeatures.tensorable_keys:
            setattr(out, key, torch.stack([getattr(b, key) for b in batch]))
        return out


class PromptForClassification(nn.Module):
    def __init__(self, vocab=30, dim=16, n_labels=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, n_labels)

    def forward(self, batch):
        h = self.emb(batch.input_ids) * batch.attention_mask.unsqueeze(-1)
        return self.head(h.sum(1))


def main(use_cuda=torch.cuda.is_available(), gpu=torch.cuda.device_count() - 1):
    data = [InputFeatures(torch.randint(0, 30, (6,)), torch.ones(6), torch.tensor(i % 2)) for i in range(8)]
    loader = [InputFeatures.collate(data[i:i + 4]) for i in range(0, 8, 4)]
    prompt_model = PromptForClassification()
    if use_cuda:
        prompt_model = prompt_model.cuda(gpu)
    opt = torch.optim.AdamW(prompt_model.parameters(), lr=1e-3)
    for inputs in loader:
        if use_cuda:
            inputs = inputs.cuda()
        loss = nn.functional.cross_entropy(prompt_model(inputs), inputs.label)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(round(loss.item(), 3))


if __name__ == "__main__":
    main()
