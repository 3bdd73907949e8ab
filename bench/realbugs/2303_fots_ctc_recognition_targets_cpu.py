# source: https://github.com/novioleo/FOTS/issues/14
# error: RuntimeError: (the CTC loss of the recognition branch; the maintainer: the targets are not converted to cuda)
# bug: the text-spotting trainer moves the model and the images to the GPU; the recognition
#      targets (encoded transcripts and their lengths) come from the label converter as host
#      tensors and the predicted sequence lengths are made on the host too, and the combined
#      loss hands them with the GPU log-probabilities to nn.CTCLoss, whose CUDA kernel of the
#      time required every argument on the GPU. The maintainer named the cause; the reporter's
#      confirmed fix moves all four arguments to the device in the CTC call, which is marked
#      (DL203: a loss given the model's output and targets that were never moved).
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


class LabelConverter:
    def __init__(self, alphabet):
        self.index = {c: i + 1 for i, c in enumerate(alphabet)}

    def encode(self, texts):
        lengths = [len(t) for t in texts]
        flat = [self.index[c] for t in texts for c in t]
        return torch.IntTensor(flat), torch.IntTensor(lengths)


class FOTS(nn.Module):
    def __init__(self, n_cls=len(ALPHABET) + 1):
        super().__init__()
        self.shared = nn.Conv2d(3, 16, 3, padding=1)
        self.det_head = nn.Conv2d(16, 1, 1)
        self.rnn = nn.GRU(16, 32, bidirectional=True)
        self.cls = nn.Linear(64, n_cls)

    def forward(self, images):
        feat = torch.relu(self.shared(images))
        score_map = torch.sigmoid(self.det_head(feat))
        seq = feat.mean(dim=2).permute(2, 0, 1)  # (T, N, C)
        out, _ = self.rnn(seq)
        log_probs = F.log_softmax(self.cls(out), dim=-1)
        seq_lens = torch.IntTensor([log_probs.size(0)] * log_probs.size(1))
        return score_map, (log_probs, seq_lens)


class FOTSLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.recognition_loss = nn.CTCLoss(zero_infinity=True)

    def forward(self, y_true_cls, y_pred_cls, y_true_recog, y_pred_recog):
        det_loss = F.binary_cross_entropy(y_pred_cls, y_true_cls)
        rec_loss = self.recognition_loss(y_pred_recog[0], y_true_recog[0], y_pred_recog[1], y_true_recog[1])  # expect: DL203
        return det_loss + rec_loss


def train_step(model, criterion, optimizer, converter, images, score_maps, texts):
    images, score_maps = images.to(device), score_maps.to(device)
    targets = converter.encode(texts)
    pred_cls, pred_recog = model(images)
    loss = criterion(score_maps, pred_cls, targets, pred_recog)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


if __name__ == "__main__":
    model = FOTS().to(device)
    criterion = FOTSLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    converter = LabelConverter(ALPHABET)
    images = torch.rand(2, 3, 16, 64)
    score_maps = torch.rand(2, 1, 16, 64).round()
    print(train_step(model, criterion, optimizer, converter, images, score_maps, ["hello", "fots"]))
