# source: https://github.com/akanimax/T2F/issues/13
# error: RuntimeError: Expected object of backend CUDA but got backend CPU for argument #3 'index'
# bug: the text encoder moves its embedding+LSTM network to the run's device in its constructor; the
#      training function draws a fixed batch of captions from a DataLoader for its debugging samples and
#      encodes it as it is (CPU token ids into the CUDA embedding), moving only the resulting embeddings
#      to the device. The issue is open with no fix; the encoder call the traceback points to is marked
#      (DL203: an input from a loader never moved to the model's device).
import torch as th
from torch.nn import LSTM, Embedding, Linear, Sequential
from torch.utils.data import DataLoader, TensorDataset


class Encoder(th.nn.Module):
    def __init__(self, embedding_size, vocab_size, hidden_size, num_layers, device=th.device("cpu")):
        super().__init__()
        self.network = Sequential(
            Embedding(vocab_size, embedding_size, padding_idx=0),
            LSTM(embedding_size, hidden_size, num_layers, batch_first=True),
        ).to(device)

    def forward(self, x):
        output, (_, _) = self.network(x)
        return output[:, -1, :]


class ConditionAugmentor(th.nn.Module):
    def __init__(self, input_size, latent_size, device=th.device("cpu")):
        super().__init__()
        self.transformer = Linear(input_size, 2 * latent_size).to(device)

    def forward(self, x):
        mu, log_sigma = self.transformer(x).chunk(2, dim=-1)
        return mu + th.randn_like(mu) * th.exp(log_sigma), mu, log_sigma


def train_networks(encoder, ca, dataset, batch_size, device):
    encoder.train()
    print("Starting the training process ... ")
    temp_data = DataLoader(dataset, batch_size=batch_size, shuffle=True)
    fixed_captions, fixed_real_images = next(iter(temp_data))
    fixed_embeddings = encoder(fixed_captions)  # expect: DL203
    fixed_embeddings = fixed_embeddings.to(device)
    fixed_c_not_hats, _, _ = ca(fixed_embeddings)
    fixed_noise = th.randn(len(fixed_captions), 8).to(device)
    return th.cat((fixed_c_not_hats, fixed_noise), dim=-1)


if __name__ == "__main__":
    device = th.device("cuda" if th.cuda.is_available() else "cpu")
    dataset = TensorDataset(th.randint(1, 50, (16, 12)), th.rand(16, 3, 8, 8))
    encoder = Encoder(32, 50, 24, 1, device=device)
    ca = ConditionAugmentor(24, 16, device=device)
    print(train_networks(encoder, ca, dataset, 4, device).shape)
