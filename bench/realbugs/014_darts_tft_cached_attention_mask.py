# source: https://github.com/unit8co/darts/issues/3052
# error: RuntimeError: Expected all tensors to be on the same device (cached mask on the training GPU, input on cpu/mps)
# bug: the attention mask and relative index are cached on plain attributes the first time
#      forward sees a batch size; when the trained model is moved to another device the cache
#      is not moved with it and is reused for inputs of the same batch size.
import torch
import torch.nn as nn


class _TFTModule(nn.Module):
    def __init__(self, input_chunk_length, output_chunk_length, hidden_size, full_attention=False, add_relative_index=True):
        super().__init__()
        self.input_chunk_length = input_chunk_length
        self.output_chunk_length = output_chunk_length
        self.full_attention = full_attention
        self.add_relative_index = add_relative_index
        self.batch_size_last = -1
        self.attention_mask = None  # expect: DL103
        self.relative_index = None  # expect: DL103
        self.input_projection = nn.Linear(2, hidden_size)
        self.attention = nn.MultiheadAttention(hidden_size, 4, batch_first=True)
        self.output_layer = nn.Linear(hidden_size, 1)

    @staticmethod
    def get_relative_index(encoder_length, decoder_length, batch_size, dtype, device):
        index = torch.arange(encoder_length + decoder_length, dtype=dtype, device=device)
        index = index / (encoder_length - 1)
        return index.reshape(1, len(index), 1).repeat(batch_size, 1, 1)

    @staticmethod
    def get_attention_mask_future(encoder_length, decoder_length, batch_size, device, full_attention):
        if full_attention:
            decoder_mask = torch.zeros((decoder_length, decoder_length), dtype=torch.bool, device=device)
        else:
            attend_step = torch.arange(decoder_length, device=device)
            predict_step = torch.arange(0, decoder_length, device=device)[:, None]
            decoder_mask = attend_step >= predict_step
        encoder_mask = torch.zeros(batch_size, encoder_length, dtype=torch.bool, device=device)
        return torch.cat(
            (
                encoder_mask.unsqueeze(1).expand(-1, decoder_length, -1),
                decoder_mask.unsqueeze(0).expand(batch_size, -1, -1),
            ),
            dim=2,
        )

    def forward(self, x_in):
        x_cont_past, x_cont_future = x_in
        device = x_in[0].device
        batch_size = x_cont_past.shape[0]
        encoder_length = self.input_chunk_length
        decoder_length = self.output_chunk_length

        # avoid regenerating the mask when the batch size did not change
        if batch_size != self.batch_size_last:
            self.attention_mask = self.get_attention_mask_future(
                encoder_length, decoder_length, batch_size, device, self.full_attention
            )
            if self.add_relative_index:
                self.relative_index = self.get_relative_index(
                    encoder_length, decoder_length, batch_size, x_cont_past.dtype, device
                )
            self.batch_size_last = batch_size

        if self.add_relative_index:
            x_cont_past = torch.cat([x_cont_past, self.relative_index[:, :encoder_length, :]], dim=2)
            x_cont_future = torch.cat([x_cont_future, self.relative_index[:, -decoder_length:, :]], dim=2)

        past = self.input_projection(x_cont_past)
        future = self.input_projection(x_cont_future)
        attended, _ = self.attention(future, torch.cat([past, future], dim=1), torch.cat([past, future], dim=1),
                                     attn_mask=self.attention_mask.repeat_interleave(4, dim=0))
        return self.output_layer(attended)
