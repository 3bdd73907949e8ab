# source: https://github.com/rasbt/LLM-workshop-2024/issues/6
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking argument for argument index in method wrapper_CUDA__index_select)
# bug: in the workshop's pretraining notebook the GPT model was moved to the GPU for training,
#      and the solution to the text-generation exercise calls generate() on
#      text_to_token_ids(start_context, tokenizer), a CPU tensor that is never moved, so the
#      model's token embedding is indexed with CPU ids. The maintainer agreed and added
#      .to(device) to the ids in the solution. The idx= line is marked (DL203: a moved model called
#      on input that never was moved). tiktoken is not installed here: a byte tokenizer stands in.
import torch
import torch.nn as nn


class ByteTokenizer:
    def encode(self, text):
        return list(text.encode("utf-8"))

    def decode(self, ids):
        return bytes(i % 256 for i in ids).decode("utf-8", errors="replace")


def text_to_token_ids(text, tokenizer):
    return torch.tensor(tokenizer.encode(text)).unsqueeze(0)


def token_ids_to_text(token_ids, tokenizer):
    return tokenizer.decode(token_ids.squeeze(0).tolist())


class GPTModel(nn.Module):
    def __init__(self, vocab_size=256, context_length=32, emb_dim=32):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, emb_dim)
        self.pos_emb = nn.Embedding(context_length, emb_dim)
        self.block = nn.TransformerEncoderLayer(emb_dim, 4, 64, batch_first=True)
        self.out_head = nn.Linear(emb_dim, vocab_size, bias=False)

    def forward(self, in_idx):
        seq_len = in_idx.shape[1]
        x = self.tok_emb(in_idx) + self.pos_emb(torch.arange(seq_len, device=in_idx.device))
        mask = nn.Transformer.generate_square_subsequent_mask(seq_len, device=in_idx.device)
        return self.out_head(self.block(x, src_mask=mask, is_causal=True))


def generate(model, idx, max_new_tokens, context_size, temperature=1.0, top_k=None):
    for _ in range(max_new_tokens):
        idx_cond = idx[:, -context_size:]
        with torch.no_grad():
            logits = model(idx_cond)[:, -1, :]
        if top_k is not None:
            top_logits, _ = torch.topk(logits, top_k)
            logits = torch.where(logits < top_logits[:, -1:], torch.full_like(logits, float("-inf")), logits)
        probs = torch.softmax(logits / temperature, dim=-1)
        idx_next = torch.multinomial(probs, num_samples=1)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(123)
    model = GPTModel()
    model.to(device)
    model.eval()
    tokenizer = ByteTokenizer()
    start_context = "Every effort moves you"
    token_ids = generate(
        model=model,
        idx=text_to_token_ids(start_context, tokenizer),  # expect: DL203
        max_new_tokens=8,
        context_size=32,
        top_k=25,
        temperature=1.4,
    )
    print(repr(token_ids_to_text(token_ids, tokenizer)))
