# source: https://github.com/lyutyuh/gazetteer-NER-acl19/issues/5
# fixed twin: the end-token parameter is moved with .cuda(...) only when the spans are on a GPU, as the repository's later version does.
import torch
import torch.nn as nn


def get_device_of(tensor):
    return tensor.get_device() if tensor.is_cuda else -1


def move_to_device(tensor, cuda_device):
    return tensor.cuda(cuda_device) if cuda_device >= 0 else tensor


class HSCRFSoftDict(nn.Module):
    def __init__(self, vocab_size=20, embedding_dim=8, num_tags=5):
        super().__init__()
        self.text_field_embedder = nn.Embedding(vocab_size, embedding_dim)
        self.end_token_embedding = nn.Parameter(torch.zeros(embedding_dim))
        nn.init.uniform_(self.end_token_embedding, -0.5, 0.5)
        self.encoder = nn.LSTM(embedding_dim, embedding_dim, batch_first=True)
        self.tag_projection = nn.Linear(embedding_dim, num_tags)

    def forward(self, tokens, spans, gold_spans):
        batch_size = spans.size(0)
        embedded_text_input = self.text_field_embedder(tokens)
        embedded_text_input = torch.cat(
            [embedded_text_input, embedded_text_input.new_zeros(batch_size, 1, embedded_text_input.size(2))], dim=1
        )
        gold_span_mask = (gold_spans[:, :, 0] >= 0).float()
        last_span_indices = gold_span_mask.sum(-1, keepdim=True).long()
        batch_indices = torch.arange(batch_size).unsqueeze(-1)
        batch_indices = move_to_device(batch_indices, get_device_of(embedded_text_input))
        last_span_indices = torch.cat([batch_indices, last_span_indices], dim=-1)
        if get_device_of(spans) >= 0:
            embedded_text_input[last_span_indices[:, 0], last_span_indices[:, 1]] += self.end_token_embedding.cuda(get_device_of(spans))
        else:
            embedded_text_input[last_span_indices[:, 0], last_span_indices[:, 1]] += self.end_token_embedding
        encoded_text, _ = self.encoder(embedded_text_input)
        return self.tag_projection(encoded_text).logsumexp(-1).mean()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = HSCRFSoftDict().to(device)
    tokens = torch.randint(0, 20, (2, 6), device=device)
    spans = torch.tensor([[[0, 0], [1, 2], [3, 5]], [[0, 1], [2, 2], [-1, -1]]], device=device)
    loss = model(tokens, spans, spans)
    loss.backward()
    print(loss.item())
