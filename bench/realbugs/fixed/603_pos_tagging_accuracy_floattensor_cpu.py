# source: https://github.com/bentrevett/pytorch-pos-tagging/pull/5
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: the tagging tutorial's accuracy helper divides the number of correct predictions (a CUDA
#      tensor, from the model's output) by the number of non-pad tokens wrapped in a 1-element
#      torch.FloatTensor built on the CPU. The fix moves that count to the script's device.
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def categorical_accuracy(preds, y, tag_pad_idx):
    max_preds = preds.argmax(dim=1, keepdim=True)
    non_pad_elements = (y != tag_pad_idx).nonzero()
    correct = max_preds[non_pad_elements].squeeze(1).eq(y[non_pad_elements])
    return correct.sum() / torch.FloatTensor([y[non_pad_elements].shape[0]]).to(device)


class Tagger(nn.Module):
    def __init__(self, vocab=50, dim=16, tags=6):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.fc = nn.Linear(dim, tags)

    def forward(self, text):
        return self.fc(self.embedding(text))


def evaluate(model, batches, criterion, tag_pad_idx):
    model.eval()
    epoch_loss, epoch_acc = 0.0, 0.0
    with torch.no_grad():
        for text, tags in batches:
            predictions = model(text)
            predictions = predictions.view(-1, predictions.shape[-1])
            tags = tags.view(-1)
            loss = criterion(predictions, tags)
            acc = categorical_accuracy(predictions, tags, tag_pad_idx)
            epoch_loss += loss.item()
            epoch_acc += acc.item()
    return epoch_loss / len(batches), epoch_acc / len(batches)


if __name__ == "__main__":
    TAG_PAD_IDX = 0
    model = Tagger().to(device)
    criterion = nn.CrossEntropyLoss(ignore_index=TAG_PAD_IDX).to(device)
    batches = [(torch.randint(1, 50, (7, 4), device=device), torch.randint(0, 6, (7, 4), device=device)) for _ in range(3)]
    print(evaluate(model, batches, criterion, TAG_PAD_IDX))
