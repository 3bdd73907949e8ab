# source: https://github.com/allenai/allennlp/pull/433
# error: device mismatch on GPU: the decoder context is a CPU tensor while the decoder state is on CUDA
# bug: `with torch.cuda.device_of(t)` only selects which GPU is current; torch.zeros inside it
#      still allocates on the CPU, so the initial decoder context never follows the encoder output.
import torch
import torch.nn as nn
from torch.autograd import Variable


class SimpleSeq2Seq(nn.Module):
    def __init__(self, source_embedder, encoder, num_classes, decoder_output_dim, max_decoding_steps):
        super().__init__()
        self._source_embedder = source_embedder
        self._encoder = encoder
        self._decoder_output_dim = decoder_output_dim
        self._max_decoding_steps = max_decoding_steps
        self._target_embedder = nn.Embedding(num_classes, decoder_output_dim)
        self._decoder_cell = nn.LSTMCell(decoder_output_dim, decoder_output_dim)
        self._output_projection_layer = nn.Linear(decoder_output_dim, num_classes)

    def forward(self, source_tokens, source_mask, target_tokens=None):
        embedded_input = self._source_embedder(source_tokens)
        batch_size, _, _ = embedded_input.size()
        encoder_outputs = self._encoder(embedded_input, source_mask)
        final_encoder_output = encoder_outputs[:, -1]
        num_decoding_steps = target_tokens.size(1) - 1 if target_tokens is not None else self._max_decoding_steps
        decoder_hidden = final_encoder_output
        decoder_context = Variable(source_mask.data.new().resize_(batch_size, self._decoder_output_dim).fill_(0))
        step_logits = []
        last_predictions = target_tokens[:, 0]
        for timestep in range(num_decoding_steps):
            decoder_input = self._target_embedder(last_predictions)
            decoder_hidden, decoder_context = self._decoder_cell(decoder_input, (decoder_hidden, decoder_context))
            output_projections = self._output_projection_layer(decoder_hidden)
            step_logits.append(output_projections.unsqueeze(1))
            last_predictions = output_projections.argmax(-1)
        return torch.cat(step_logits, 1)
