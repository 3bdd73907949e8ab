# source: https://github.com/allenai/allennlp/issues/583
# error: training simple_seq2seq with attention on the GPU fails inside the attention (CPU mask meets CUDA decoder state); fixed by PR #585
# bug: before attending, the decoder casts the source mask with .type(torch.FloatTensor) to get a float
#      mask; that legacy type name is the CPU float type, so on a GPU run the mask is copied to the host.
import torch
import torch.nn as nn
import torch.nn.functional as F
from allennlp.modules import Attention
from allennlp.nn.util import get_text_field_mask, weighted_sum


class SimpleSeq2Seq(nn.Module):
    def __init__(self, source_embedder, encoder, num_classes, target_embedding_dim, attention_function=None):
        super().__init__()
        self._source_embedder = source_embedder
        self._encoder = encoder
        self._attention_function = attention_function
        hidden_dim = encoder.get_output_dim()
        self._target_embedder = nn.Embedding(num_classes, target_embedding_dim)
        if attention_function:
            self._decoder_attention = Attention(attention_function)
            decoder_input_dim = hidden_dim + target_embedding_dim
        else:
            decoder_input_dim = target_embedding_dim
        self._decoder_cell = nn.LSTMCell(decoder_input_dim, hidden_dim)
        self._output_projection_layer = nn.Linear(hidden_dim, num_classes)
        self._start_index = 1

    def forward(self, source_tokens, num_decoding_steps=10):
        embedded_input = self._source_embedder(source_tokens)
        source_mask = get_text_field_mask(source_tokens)
        encoder_outputs = self._encoder(embedded_input, source_mask)
        batch_size = encoder_outputs.size(0)
        decoder_hidden = encoder_outputs[:, -1]
        decoder_context = encoder_outputs.new_zeros(batch_size, encoder_outputs.size(-1))
        last_predictions = source_mask.new_full((batch_size,), self._start_index)
        step_logits = []
        for _ in range(num_decoding_steps):
            decoder_input = self._prepare_decode_step_input(last_predictions, decoder_hidden,
                                                            encoder_outputs, source_mask)
            decoder_hidden, decoder_context = self._decoder_cell(decoder_input, (decoder_hidden, decoder_context))
            output_projections = self._output_projection_layer(decoder_hidden)
            step_logits.append(output_projections.unsqueeze(1))
            last_predictions = F.softmax(output_projections, dim=-1).argmax(-1)
        return {"logits": torch.cat(step_logits, 1)}

    def _prepare_decode_step_input(self, input_indices, decoder_hidden_state=None,
                                   encoder_outputs=None, encoder_outputs_mask=None):
        embedded_input = self._target_embedder(input_indices)
        if self._attention_function:
            # the attention multiplies by the mask, so it has to be float
            encoder_outputs_mask = encoder_outputs_mask.float()
            input_weights = self._decoder_attention(decoder_hidden_state, encoder_outputs, encoder_outputs_mask)
            attended_input = weighted_sum(encoder_outputs, input_weights)
            return torch.cat((attended_input, embedded_input), -1)
        return embedded_input
