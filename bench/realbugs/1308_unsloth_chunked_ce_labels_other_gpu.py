# source: https://github.com/unslothai/unsloth/pull/4059
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0 (at losses.masked_fill_ in Fast_CrossEntropyLoss.forward)
# bug: with device_map="balanced" the LM head (and so the logits) sits on the last GPU while the
#      labels stay where the batch was put, on the first; the fused cross-entropy's forward allocates
#      its losses on logits.device and, on the chunked (large-vocabulary) path, masks the padding
#      with a comparison on the labels, mixing the two GPUs. The fix (commit ba1688c609, issue 4041)
#      inserts labels = labels.to(device) right after device = logits.device; the masked_fill_ line the
#      traceback points to is marked (DL201). The Triton kernels are written here as plain loops.
import torch
import torch.nn as nn

MAX_FUSED_SIZE = 8  # 65536 upstream; small here so that the chunked path runs


def _chunked_cross_entropy_forward(logits, losses, logsumexp, labels, n_chunks):
    for row in range(logits.shape[0]):
        for chunk in range(n_chunks):
            block = logits[row, chunk * MAX_FUSED_SIZE:(chunk + 1) * MAX_FUSED_SIZE]
            logsumexp[row, chunk] = torch.logsumexp(block.float(), dim=0)
        label = int(labels[row])
        losses[row] = -logits[row, label].float() if label != -100 else 0.0


class Fast_CrossEntropyLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, labels):
        n_rows, vocab_size = logits.shape
        device = logits.device
        div, mod = divmod(vocab_size, MAX_FUSED_SIZE)
        n_chunks = div + (mod != 0)
        losses = torch.empty(n_rows, dtype=torch.float32, device=device)
        logsumexp = torch.empty((n_rows, n_chunks), dtype=torch.float32, device=device)
        _chunked_cross_entropy_forward(logits, losses, logsumexp, labels, n_chunks)
        logsumexp = torch.logsumexp(logsumexp, dim=1)
        losses += logsumexp
        losses.masked_fill_(labels == -100, 0)  # expect: DL201
        ctx.save_for_backward(logits, logsumexp, labels)
        return losses

    @staticmethod
    def backward(ctx, dlosses):
        logits, logsumexp, labels = ctx.saved_tensors
        grad = torch.exp(logits.float() - logsumexp[:, None])
        valid = labels.to(logits.device) != -100
        grad[valid, labels.to(logits.device)[valid]] -= 1.0
        grad[~valid] = 0.0
        return (grad * dlosses[:, None]).to(logits.dtype), None


def fast_cross_entropy_loss(logits, labels):
    batch, seq_len, vocab = logits.shape
    losses = Fast_CrossEntropyLoss.apply(logits.view(batch * seq_len, vocab), labels.view(-1))
    n_items = torch.count_nonzero(labels != -100)
    return losses.sum() / n_items


class SplitCausalLM(nn.Module):
    """Two halves placed like device_map="balanced": embeddings on the first GPU, the head on the last."""

    def __init__(self, vocab=20, hidden=16, first="cpu", last="cpu"):
        super().__init__()
        self.first, self.last = torch.device(first), torch.device(last)
        self.embed = nn.Embedding(vocab, hidden).to(self.first)
        self.lm_head = nn.Linear(hidden, vocab).to(self.last)

    def forward(self, input_ids, labels):
        hidden = self.embed(input_ids.to(self.first))
        logits = self.lm_head(hidden.to(self.last))
        shift_labels = torch.full_like(labels, -100)
        shift_labels[:, :-1] = labels[:, 1:]
        return fast_cross_entropy_loss(logits, shift_labels)


if __name__ == "__main__":
    n = torch.cuda.device_count()
    first, last = ("cuda:0", f"cuda:{n - 1}") if n else ("cpu", "cpu")
    model = SplitCausalLM(first=first, last=last)
    input_ids = torch.randint(0, 20, (2, 6), device=first)
    loss = model(input_ids, labels=input_ids.clone())
    loss.backward()
    print(loss.item())
