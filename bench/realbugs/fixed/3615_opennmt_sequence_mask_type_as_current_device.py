# source: https://github.com/OpenNMT/OpenNMT-py/pull/1494
# fixed twin: commit 677902b builds the range with torch.arange(0, max_len, device=lengths.device) before .type_as(lengths).
import torch
import torch.nn as nn


# --- onmt/utils/misc.py ---
def sequence_mask(lengths, max_len=None):
    """
    Creates a boolean mask from sequence lengths.
    """
    batch_size = lengths.numel()
    max_len = max_len or lengths.max()
    return (torch.arange(0, max_len, device=lengths.device)
            .type_as(lengths)
            .repeat(batch_size, 1)
            .lt(lengths.unsqueeze(1)))


# --- onmt/modules/multi_headed_attn.py, onmt/modules/position_ffn.py ---
class MultiHeadedAttention(nn.Module):
    def __init__(self, head_count, model_dim, dropout=0.1, max_relative_positions=0):
        super(MultiHeadedAttention, self).__init__()
        self.head_count = head_count
        self.dim_per_head = model_dim // head_count
        self.linear_keys = nn.Linear(model_dim, model_dim)
        self.linear_values = nn.Linear(model_dim, model_dim)
        self.linear_query = nn.Linear(model_dim, model_dim)
        self.softmax = nn.Softmax(dim=-1)
        self.dropout = nn.Dropout(dropout)
        self.final_linear = nn.Linear(model_dim, model_dim)

    def forward(self, key, value, query, mask=None, attn_type=None):
        batch_size = key.size(0)

        def shape(x):
            return x.view(batch_size, -1, self.head_count, self.dim_per_head).transpose(1, 2)

        key, value = shape(self.linear_keys(key)), shape(self.linear_values(value))
        query = shape(self.linear_query(query)) / (self.dim_per_head ** 0.5)
        scores = torch.matmul(query, key.transpose(2, 3)).float()
        if mask is not None:
            mask = mask.unsqueeze(1)  # [B, 1, 1, T_values]
            scores = scores.masked_fill(mask, -1e18)
        attn = self.softmax(scores)
        context = torch.matmul(self.dropout(attn), value)
        context = context.transpose(1, 2).contiguous().view(batch_size, -1, self.head_count * self.dim_per_head)
        return self.final_linear(context), attn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1):
        super(PositionwiseFeedForward, self).__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.layer_norm = nn.LayerNorm(d_model, eps=1e-6)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        inter = self.dropout(torch.relu(self.w_1(self.layer_norm(x))))
        return self.dropout(self.w_2(inter)) + x


# --- onmt/encoders/transformer.py ---
class TransformerEncoderLayer(nn.Module):
    def __init__(self, d_model, heads, d_ff, dropout, max_relative_positions=0):
        super(TransformerEncoderLayer, self).__init__()
        self.self_attn = MultiHeadedAttention(heads, d_model, dropout=dropout,
                                              max_relative_positions=max_relative_positions)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.layer_norm = nn.LayerNorm(d_model, eps=1e-6)
        self.dropout = nn.Dropout(dropout)

    def forward(self, inputs, mask):
        input_norm = self.layer_norm(inputs)
        context, _ = self.self_attn(input_norm, input_norm, input_norm, mask=mask, attn_type="self")
        out = self.dropout(context) + inputs
        return self.feed_forward(out)


class TransformerEncoder(nn.Module):
    def __init__(self, num_layers, d_model, heads, d_ff, dropout, embeddings, max_relative_positions):
        super(TransformerEncoder, self).__init__()
        self.embeddings = embeddings
        self.transformer = nn.ModuleList(
            [TransformerEncoderLayer(d_model, heads, d_ff, dropout, max_relative_positions=max_relative_positions)
             for i in range(num_layers)])
        self.layer_norm = nn.LayerNorm(d_model, eps=1e-6)

    def forward(self, src, lengths=None):
        emb = self.embeddings(src)
        out = emb.transpose(0, 1).contiguous()
        mask = ~sequence_mask(lengths).unsqueeze(1)
        # Run the forward pass of every layer of the tranformer.
        for layer in self.transformer:
            out = layer(out, mask)
        out = self.layer_norm(out)
        return emb, out.transpose(0, 1).contiguous(), lengths


# --- driver: the encoder and the batch on the second GPU, the current device left at 0 ---
if __name__ == "__main__":
    device = torch.device("cuda", 1) if torch.cuda.device_count() > 1 else torch.device("cpu")
    encoder = TransformerEncoder(2, 32, 4, 64, 0.1, nn.Embedding(100, 32), 0).to(device)
    src = torch.randint(0, 100, (7, 3), device=device)  # [src_len, batch]
    lengths = torch.tensor([7, 5, 3], device=device)
    emb, memory_bank, lengths = encoder(src, lengths)
    print(memory_bank.shape)
