# source: https://github.com/lucidrains/charformer-pytorch/issues/2
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking argument for argument index in method wrapper__index_select)
# bug: Charformer's GBST "tokenizer" is itself an nn.Module (a byte embedding and a block-scoring
#      layer); following the README on Colab the reporter moves the byte ids and the mask to CUDA
#      but not the tokenizer, so its CPU embedding is indexed with CUDA ids. The maintainer's answer
#      is to move the tokenizer too (tokenizer = tokenizer.cuda()). The fix inserts that move before
#      the call; the call line, where the traceback points, is marked (DL201, the closest rule: the
#      moved ids meet the unmoved module's weights - the ids are moved, the module is not).
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
    consolidated_tokens, consolidated_mask = tokenizer(tokens, mask=mask)  # expect: DL201
    print(consolidated_tokens.shape, consolidated_mask.shape)
