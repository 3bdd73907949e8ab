# source: https://github.com/facebookresearch/fairseq/pull/3557
# error: RuntimeError: 'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda:0 Long tensor
# bug: the speech-translation Berard encoder takes the batch's frame lengths (moved to the GPU
#      with the rest of the batch), shrinks them by each strided convolution's stride and hands
#      the result to pack_padded_sequence, which wants its lengths on the host. The PR (closed
#      unmerged; its title and description state the change) converts the lengths to the CPU in
#      that pack call, which is marked (no rule covers a GPU tensor passed where an op needs the
#      host; DL201, an op whose tensor operands sit on different devices, is the closest).
import torch
import torch.nn as nn


class BerardEncoder(nn.Module):
    def __init__(self, feat=8, conv_layers=((4, 3, 2), (4, 3, 2)), lstm_size=6):
        super().__init__()
        self.input_layer = nn.Linear(feat, feat)
        self.convs = nn.ModuleList()
        self.kernels_and_strides = []
        in_ch, dim = 1, feat
        for out_ch, k, s in conv_layers:
            self.convs.append(nn.Conv2d(in_ch, out_ch, k, stride=s, padding=k // 2))
            self.kernels_and_strides.append((k, s))
            in_ch, dim = out_ch, dim // s
        self.lstm = nn.LSTM(dim * in_ch, lstm_size, bidirectional=True)

    def forward(self, src_tokens, src_lengths):
        bsz, seq_len, _ = src_tokens.size()
        x = torch.tanh(self.input_layer(src_tokens)).unsqueeze(1)
        for conv in self.convs:
            x = conv(x)
        _, _, out_len, _ = x.size()
        x = x.transpose(1, 2).transpose(0, 1).contiguous().view(out_len, bsz, -1)

        input_lengths = src_lengths.clone()
        for k, s in self.kernels_and_strides:
            input_lengths = ((input_lengths.float() + 2 * (k // 2) - k) / s + 1).floor().long()

        packed = nn.utils.rnn.pack_padded_sequence(x, input_lengths)  # expect: DL201
        h0 = x.new_zeros(2, bsz, self.lstm.hidden_size)
        c0 = x.new_zeros(2, bsz, self.lstm.hidden_size)
        out, _ = self.lstm(packed, (h0, c0))
        x, _ = nn.utils.rnn.pad_packed_sequence(out)
        return x


def move_to_device(sample, device):
    return {k: v.to(device) for k, v in sample.items()}


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    encoder = BerardEncoder().to(device)
    sample = {"src_tokens": torch.randn(3, 20, 8), "src_lengths": torch.tensor([20, 17, 12])}
    sample = move_to_device(sample, device)
    print(encoder(sample["src_tokens"], sample["src_lengths"]).shape)
