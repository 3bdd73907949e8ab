# source: https://github.com/JaidedAI/EasyOCR/issues/1378
# fixed twin: the prediction lengths are moved to the device where they are made, and the text and label lengths in the criterion call, as the commenter's fix (and the open PR 1455) does.
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class CTCLabelConverter:
    def __init__(self, character):
        self.dict = {c: i + 1 for i, c in enumerate(character)}
        self.character = ["[blank]"] + list(character)

    def encode(self, text, batch_max_length=25):
        length = [len(s) for s in text]
        batch_text = torch.LongTensor(len(text), batch_max_length).fill_(0)
        for i, t in enumerate(text):
            batch_text[i][: len(t)] = torch.LongTensor([self.dict[c] for c in t])
        return batch_text, torch.IntTensor(length)


class Model(nn.Module):
    def __init__(self, num_class):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d((1, 24)))
        self.rnn = nn.LSTM(16, 32, batch_first=True, bidirectional=True)
        self.prediction = nn.Linear(64, num_class)

    def forward(self, image, text):
        f = self.features(image).squeeze(2).permute(0, 2, 1)
        out, _ = self.rnn(f)
        return self.prediction(out)


def validation(model, criterion, batches, converter, opt):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for image_tensors, labels in batches:
            batch_size = image_tensors.size(0)
            image = image_tensors.to(device)
            text_for_loss, length_for_loss = converter.encode(labels, batch_max_length=opt["batch_max_length"])
            preds = model(image, None).float()
            preds_size = torch.IntTensor([preds.size(1)] * batch_size).to(device)
            preds = preds.log_softmax(2).permute(1, 0, 2)
            cost = criterion(preds, text_for_loss.to(device), preds_size, length_for_loss.to(device))
            total += cost.item()
    return total / len(batches)


if __name__ == "__main__":
    opt = {"character": "0123456789abcdefghijklmnopqrstuvwxyz", "batch_max_length": 10}
    converter = CTCLabelConverter(opt["character"])
    model = Model(len(converter.character)).to(device)
    criterion = torch.nn.CTCLoss(zero_infinity=True).to(device)
    batches = [(torch.rand(3, 1, 32, 96), ["abc", "hello", "x9"]) for _ in range(2)]
    print(validation(model, criterion, batches, converter, opt))
