# source: https://github.com/lucidrains/charformer-pytorch/issues/2
# fixed twin: the tokenizer module is moved to the device of the ids before it is called (the maintainer's answer).
import torch
import torch.nn as nn
import torch.nn.functional as F


class GBST(nn.Module):
    def __init__(self, num_tokens, dim, max_block_size=4, downsample_factor=4):
        super().__init__()
        self.token_emb = nn.Embedding(num_tokens, dim)
        self.block_sizes = list(range(1, max_block_size + 1))
        self.score_fn = nn.Linear(dim, 1)
        self.downsample_factor = downsample_factor

    def forward(self, x, mask=None):
        x = self.token_emb(x)
        n = x.shape[1]
        blocks = []
        for size in self.block_sizes:
            pooled = F.avg_pool1d(x.transpose(1, 2), size, stride=size, ceil_mode=True)
            blocks.append(pooled.repeat_interleave(size, dim=2)[:, :, :n].transpose(1, 2))
        blocks = torch.stack(blocks, dim=2)
        scores = self.score_fn(blocks).softmax(dim=2)
        x = (blocks * scores).sum(dim=2)
        if mask is not None:
            x = x.masked_fill(~mask[..., None], 0.0)
        x = F.avg_pool1d(x.transpose(1, 2), self.downsample_factor, ceil_mode=True).transpose(1, 2)
        if mask is not None:
            mask = F.max_pool1d(mask[:, None].float(), self.downsample_factor, ceil_mode=True)[:, 0].bool()
        return x, mask


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    tokenizer = GBST(num_tokens=257, dim=64, max_block_size=4, downsample_factor=4)
    tokens = torch.randint(0, 257, (1, 1023)).to(device)
    mask = torch.ones(1, 1023).bool().to(device)
    tokenizer = tokenizer.to(device)
    consolidated_tokens, consolidated_mask = tokenizer(tokens, mask=mask)
    print(consolidated_tokens.shape, consolidated_mask.shape)
