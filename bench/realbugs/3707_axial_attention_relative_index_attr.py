# source: https://github.com/The-AI-Summer/self-attention-cv/issues/3
# error: RuntimeError: Input, output and indices must be on the current device
#        (relative_pos_enc_qkv.py line 38, all_embeddings = torch.index_select(self.relative, 1,
#        self.relative_index_2d))
# bug: Relative2DPosEncQKV.__init__ keeps its relative index table as a plain attribute,
#      self.relative_index_2d = self.relative_index() (a CPU torch.arange result), beside the nn.Parameter
#      self.relative; moving the AxialAttentionBlock to the GPU moves the parameter but not the index, so forward's index_select
#      gets a CUDA table and CPU indices. The fix (commit edab5e1 "fix: cuda support class Relative2DPosEncQKV")
#      moves the index in forward, rel_indx = self.relative_index_2d.to(self.relative.device), and indexes with it;
#      the changed index_select line is marked (DL207, the attribute of DL103 being where the index stays behind).
#      Reductions: AxialAttentionBlock keeps only its axial-attention branch (the MultiHeadSelfAttention
#      alternative and its import are dropped); the driver is examples/axial_att_block.py's first model run on the
#      GPU as the reporter did (device chosen at the top, the model and input moved there). einops is imported as
#      upstream (absent here), so the file does not run on this machine.
import torch
from einops import rearrange
from torch import nn


# --- self_attention_cv/pos_embeddings/relative_pos_enc_qkv.py ---
class Relative2DPosEncQKV(nn.Module):
    def __init__(self, dim_head, dim_v=16, dim_kq=8):
        super().__init__()
        self.dim = dim_head
        self.dim_head_v = dim_v
        self.dim_head_kq = dim_kq
        self.qkv_chan = 2 * self.dim_head_kq + self.dim_head_v

        # 2D relative position embeddings of q,k,v:
        self.relative = nn.Parameter(torch.randn(self.qkv_chan, dim_head * 2 - 1), requires_grad=True)
        self.relative_index_2d = self.relative_index()

    def relative_index(self):
        # integer lists from 0 to 63
        query_index = torch.arange(self.dim).unsqueeze(0)  # [1, dim]
        key_index = torch.arange(self.dim).unsqueeze(1)  # [dim, 1]

        relative_index_2d = (key_index - query_index) + self.dim - 1  # dim X dim
        return rearrange(relative_index_2d, 'i j->(i j)')  # flatten

    def forward(self):
        all_embeddings = torch.index_select(self.relative, 1, self.relative_index_2d)  # expect: DL207

        all_embeddings = rearrange(all_embeddings, ' c (x y)  -> c x y', x=self.dim)

        q_embedding, k_embedding, v_embedding = torch.split(all_embeddings,
                                                            [self.dim_head_kq, self.dim_head_kq, self.dim_head_v],
                                                            dim=0)
        return q_embedding, k_embedding, v_embedding


# --- self_attention_cv/axial_attention_deeplab/axial_attention.py ---
def _conv1d1x1(in_channels, out_channels):
    """1D convolution with kernel size of 1 followed by batch norm"""
    return nn.Sequential(nn.Conv1d(in_channels, out_channels, kernel_size=1, stride=1, bias=False),
                         nn.BatchNorm1d(out_channels))


class AxialAttention(nn.Module):
    def __init__(self, dim, in_channels=128, heads=8, dim_head_kq=8):
        super().__init__()
        self.dim_head = in_channels // heads
        self.dim = dim

        self.heads = heads

        self.dim_head_v = self.dim_head  # d_out
        self.dim_head_kq = dim_head_kq
        self.qkv_channels = self.dim_head_v + self.dim_head_kq * 2
        self.to_qvk = _conv1d1x1(in_channels, self.heads * self.qkv_channels)

        # Position embedding 2D
        self.RelativePosEncQKV = Relative2DPosEncQKV(dim, self.dim_head_v, self.dim_head_kq)

        self.attention_norm = nn.BatchNorm2d(heads * 3)
        self.out_norm = nn.BatchNorm1d(in_channels * 2)

    def forward(self, x_in):
        assert x_in.dim() == 3, 'Ensure your input is 4D: [b * width, chan, height] or [b * height, chan, width]'

        qkv = self.to_qvk(x_in)

        qkv = rearrange(qkv, 'b (q h) d -> b h q d ', d=self.dim, q=self.qkv_channels, h=self.heads)

        q, k, v = torch.split(qkv, [self.dim_head_kq, self.dim_head_kq, self.dim_head_v], dim=2)

        r_q, r_k, r_v = self.RelativePosEncQKV()

        qr = torch.einsum('b h i d, i d j -> b h d j ', q, r_q)
        kr = torch.einsum('b h i d, i d j -> b h d j ', k, r_k)

        dots = torch.einsum('b h i d, b h i j -> b h d j', q, k)

        norm_dots = self.attention_norm(rearrange(list([qr, kr, dots]), 'n b h d j -> b (h n) d j'))

        norm_dots = rearrange(norm_dots, 'b (h n) d j -> n b h d j', n=3)

        norm_dots = torch.einsum('n b h d j -> b h d j', norm_dots)

        attn = torch.softmax(norm_dots, dim=-1)
        out = torch.einsum('b h d j,  b h i j -> b h i d', attn, v)

        kv = torch.einsum('b h d j, i d j -> b h i d ', attn, r_v)

        out = self.out_norm(rearrange(list([kv, out]), 'n b h i d ->  b (n h i ) d'))
        out = rearrange(out, 'b (n h i ) d ->  n b (h i) d ', n=2, h=self.heads)
        return torch.einsum('n b j i -> b j i', out)


# --- self_attention_cv/axial_attention_deeplab/axial_attention_residual_block.py ---
def _conv2d1x1(in_channels, out_channels, stride=1):
    """1x1 convolution for contraction and expansion of the channels dimension
    conv is followed by batch norm"""
    return nn.Sequential(nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=stride, bias=False),
                         nn.BatchNorm2d(out_channels))


class AxialAttentionBlock(nn.Module):
    def __init__(self, in_channels, dim, heads=8, axial_att=True, dim_head=None):
        super().__init__()
        self.dim = dim
        self.heads = heads
        d_in = 128  # hardcoded

        # brings the input channels to 128 feature maps
        self.in_conv1x1 = _conv2d1x1(in_channels, d_in)
        self.out_conv1x1 = _conv2d1x1(d_in, in_channels)
        self.relu = nn.ReLU(inplace=True)

        self.dim_head = d_in // self.heads
        self.height_att = AxialAttention(dim=dim, in_channels=d_in, heads=heads)
        self.width_att = AxialAttention(dim=dim, in_channels=d_in, heads=heads)

    def forward(self, x_in):
        assert x_in.dim() == 4, 'Ensure your input is 4D: [batch,channels, height,width]'
        x = self.relu(self.in_conv1x1(x_in))
        # merge batch dim with width
        x = rearrange(x, 'b c h w -> (b w) c h')
        x = self.height_att(x)
        # decompose width + merge batch with height
        x = rearrange(x, '(b w) c h  -> (b h) c w', w=self.dim)
        x = self.relu(self.width_att(x))
        x = rearrange(x, '(b h) c w -> b c h w', h=self.dim)
        return self.relu(self.out_conv1x1(x) + x_in)


# --- examples/axial_att_block.py, run on the GPU ---
device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

model = AxialAttentionBlock(in_channels=256, dim=64, heads=8).to(device)
x = torch.rand(1, 256, 64, 64).to(device)  # [batch, tokens, dim, dim]

y = model(x)
assert y.shape == x.shape
print('AxialAttentionBlockAISummer OK')
