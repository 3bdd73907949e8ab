# source: https://github.com/JunwenBai/C-GMVAE/pull/1
# error: TypeError: can't convert cuda:0 device type tensor to numpy.
# bug: the training loop appends each step's labels and predicted probabilities (CUDA tensors) to
#      Python lists and, every check_freq steps, flattens them with np.array(list) to compute F1
#      scores; numpy has to convert every CUDA tensor. The fix moves each one to the host first.
import numpy as np
import torch
import torch.nn as nn

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class VAE(nn.Module):
    def __init__(self, feat_dim, n_label):
        super().__init__()
        self.enc = nn.Linear(feat_dim, n_label)

    def forward(self, x):
        return torch.sigmoid(self.enc(x))


def train(feats, labels, batch_size=32, check_freq=10, max_epoch=5):
    vae = VAE(feats.shape[1], labels.shape[1]).to(device)
    optimizer = torch.optim.Adam(vae.parameters(), lr=1e-3)
    temp_label, temp_pred_x = [], []
    step = 0
    for epoch in range(max_epoch):
        for i in range(0, len(feats), batch_size):
            input_feat = torch.from_numpy(feats[i:i + batch_size]).to(device)
            input_label = torch.from_numpy(labels[i:i + batch_size]).float().to(device)
            pred_x = vae(input_feat)
            loss = nn.functional.binary_cross_entropy(pred_x, input_label)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            temp_label.append(input_label)
            temp_pred_x.append(pred_x)
            step += 1
            if step % check_freq == 0:
                temp_pred_x = np.reshape(np.array(temp_pred_x), (-1))  # expect: DL204
                temp_label = np.reshape(np.array(temp_label), (-1))  # expect: DL204
                print(step, float(((temp_pred_x > 0.5) == temp_label).mean()))
                temp_pred_x, temp_label = [], []


if __name__ == "__main__":
    train(np.random.rand(640, 20).astype(np.float32), (np.random.rand(640, 6) > 0.5).astype(np.float32))
