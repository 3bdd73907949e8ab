# source: https://github.com/cxliu0/PET/issues/4
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
# bug: at inference the point-query grid is built with torch.arange without a device, so the
#      windowed query coordinates stay on the CPU, while the window mask v_idx is computed from the
#      split map predicted on the GPU; indexing the CPU coordinates with it fails. Fix: v_idx.cpu().
import torch
import torch.nn as nn


def window_partition(x, wh, ww):
    b, c, h, w = x.shape
    x = x.view(b, c, h // wh, wh, w // ww, ww).permute(3, 5, 0, 2, 4, 1)
    return x.reshape(wh * ww, -1, c)


class PointQueryInference(nn.Module):
    def __init__(self, stride=8, win=(4, 4)):
        super().__init__()
        self.stride = stride
        self.win = win

    def forward(self, images, src, div):
        stride = self.stride
        image_shape = torch.tensor(images.shape[2:])
        shape = (image_shape + stride // 2 - 1) // stride
        shift_x = ((torch.arange(0, shape[1]) + 0.5) * stride).long()
        shift_y = ((torch.arange(0, shape[0]) + 0.5) * stride).long()
        shift_y, shift_x = torch.meshgrid(shift_y, shift_x, indexing="ij")
        points_queries = torch.vstack([shift_y.flatten(), shift_x.flatten()]).permute(1, 0)
        h, w = shift_x.shape
        query_feats = src[:, :, points_queries[:, 0] // stride, points_queries[:, 1] // stride]
        query_feats = query_feats.reshape(src.size(0), -1, h, w)
        points_queries = points_queries.reshape(h, w, 2).permute(2, 0, 1).unsqueeze(0)
        wh, ww = self.win
        query_feats_win = window_partition(query_feats, wh, ww)
        points_queries_win = window_partition(points_queries, wh, ww)
        div_win = window_partition(div.unsqueeze(1), wh, ww)
        v_idx = (div_win > 0.5).sum(dim=0)[:, 0] > 0
        query_feats_win = query_feats_win[:, v_idx]
        points_queries_win = points_queries_win[:, v_idx].reshape(-1, 2)  # expect: DL207
        return query_feats_win, points_queries_win, v_idx


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    backbone = nn.Conv2d(3, 16, 8, stride=8).to(device)
    images = torch.rand(1, 3, 256, 256, device=device)
    src = backbone(images)
    div = torch.rand(1, 32, 32, device=device)
    feats, points, mask = PointQueryInference()(images, src, div)
