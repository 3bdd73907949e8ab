# source: https://github.com/mozilla/TTS/pull/398
# fixed twin: commit 61a1d59 (merged as f7b1cad) tests np.isinf(grad_norm.cpu()). Needs NumPy, as the bug file does.
import numpy as np
import torch
import torch.nn as nn


class Tacotron(nn.Module):
    def __init__(self, num_chars=30, n_mels=8):
        super().__init__()
        self.embedding = nn.Embedding(num_chars, 32)
        self.decoder = nn.GRU(32, 32, batch_first=True)
        self.last_linear = nn.Linear(32, n_mels)
        self.stopnet = nn.Linear(32, 1)

    def forward(self, text):
        h, _ = self.decoder(self.embedding(text))
        return self.last_linear(h), self.stopnet(h).squeeze(-1)


def check_update(model, grad_clip, ignore_stopnet=False):
    skip_flag = False
    if ignore_stopnet:
        grad_norm = torch.nn.utils.clip_grad_norm_(
            [param for name, param in model.named_parameters() if "stopnet" not in name], grad_clip)
    else:
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    if np.isinf(grad_norm.cpu()):
        print(" | > Gradient is INF !!")
        skip_flag = True
    return grad_norm, skip_flag


def train(model, criterion, optimizer, data_loader, use_cuda, grad_clip=1.0):
    model.train()
    for num_iter, (text_input, mel_input, stop_targets) in enumerate(data_loader):
        if use_cuda:
            text_input = text_input.cuda(non_blocking=True)
            mel_input = mel_input.cuda(non_blocking=True)
            stop_targets = stop_targets.cuda(non_blocking=True)
        optimizer.zero_grad()
        mel_output, stop_tokens = model(text_input)
        loss = criterion(mel_output, mel_input) + nn.functional.binary_cross_entropy_with_logits(stop_tokens,
                                                                                               stop_targets)
        loss.backward()
        grad_norm, skip_flag = check_update(model, grad_clip, ignore_stopnet=True)
        if skip_flag:
            optimizer.zero_grad()
            continue
        optimizer.step()
        print(num_iter, loss.item(), float(grad_norm))


def main():
    use_cuda = torch.cuda.is_available()
    model = Tacotron()
    criterion = nn.L1Loss()
    if use_cuda:
        model = model.cuda()
        criterion.cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data_loader = [(torch.randint(0, 30, (4, 12)), torch.randn(4, 12, 8), torch.randint(0, 2, (4, 12)).float())
                   for _ in range(3)]
    train(model, criterion, optimizer, data_loader, use_cuda)


if __name__ == "__main__":
    main()
