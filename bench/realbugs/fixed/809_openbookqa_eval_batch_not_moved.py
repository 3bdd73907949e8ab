# source: https://github.com/allenai/OpenBookQA/pull/5
# fixed twin: each batch is moved to the CUDA device before the model call, and the device is passed down, as the PR does.
import argparse

import torch
import torch.nn as nn


class MultipleChoiceModel(nn.Module):
    def __init__(self, vocab_size=100, dim=16):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab_size, dim)
        self.score = nn.Linear(dim, 1)

    def forward(self, question, choices):
        q = self.embed(question)
        c = self.embed(choices.flatten(0, 1)).view(choices.size(0), choices.size(1), -1)
        return {"label_logits": self.score(q.unsqueeze(1) * c).squeeze(-1)}


def batch_iterator(num_batches=3):
    for _ in range(num_batches):
        yield {"question": torch.randint(0, 100, (4, 12)), "choices": torch.randint(0, 100, (4, 4, 6))}


def move_to_device(batch, cuda_device):
    if cuda_device < 0:
        return batch
    return {key: value.cuda(cuda_device) for key, value in batch.items()}


def evaluate(model, iterator, cuda_device):
    model.eval()
    predictions = []
    with torch.no_grad():
        for batch in iterator:
            batch = move_to_device(batch, cuda_device)
            output_dict = model(**batch)
            predictions.extend(output_dict["label_logits"].argmax(-1).tolist())
    return predictions


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cuda_device", type=int, default=0)
    args = parser.parse_args()
    model = MultipleChoiceModel()
    if args.cuda_device >= 0:
        model.cuda(args.cuda_device)
    print(evaluate(model, batch_iterator(), args.cuda_device))
