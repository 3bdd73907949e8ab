# source: https://github.com/pytorch/vision/pull/1312
# error: RuntimeError in rpn.py box_coder.decode (issue #1738: a fasterrcnn model run on the GPU, then moved to the CPU; cached anchors still on cuda:0)
# bug: the RPN's anchor generator builds its per-level cell anchors once, on the device of the
#      first feature maps it sees, and keeps them in a plain list attribute; set_cell_anchors returns
#      early whenever anything is cached. Run the detector on one device, move it to another
#      (model.to / .cpu() do not touch the list) and the next forward decodes boxes against anchors
#      on the old device. PR #1312 (open) and the merged fix for issue #1738 (PR #1745) make the early
#      return conditional on the cached anchors being on the requested device: the marked line
#      (DL103: tensors kept in a plain attribute of an nn.Module are not moved with it).
import torch
import torch.nn as nn


class AnchorGenerator(nn.Module):
    def __init__(self, sizes=((16,), (32,)), aspect_ratios=((0.5, 1.0, 2.0),) * 2):
        super().__init__()
        self.sizes, self.aspect_ratios = sizes, aspect_ratios
        self.cell_anchors = None

    @staticmethod
    def generate_anchors(scales, aspect_ratios, dtype, device):
        scales = torch.as_tensor(scales, dtype=dtype, device=device)
        aspect_ratios = torch.as_tensor(aspect_ratios, dtype=dtype, device=device)
        h_ratios = torch.sqrt(aspect_ratios)
        ws = ((1 / h_ratios)[:, None] * scales[None, :]).view(-1)
        hs = (h_ratios[:, None] * scales[None, :]).view(-1)
        return (torch.stack([-ws, -hs, ws, hs], dim=1) / 2).round()

    def set_cell_anchors(self, dtype, device):
        if self.cell_anchors is not None:  # expect: DL103
            return
        self.cell_anchors = [
            self.generate_anchors(s, a, dtype, device) for s, a in zip(self.sizes, self.aspect_ratios)
        ]

    def forward(self, image_size, feature_maps):
        self.set_cell_anchors(feature_maps[0].dtype, feature_maps[0].device)
        anchors = []
        for base, fmap in zip(self.cell_anchors, feature_maps):
            h, w = fmap.shape[-2:]
            sy, sx = image_size[0] // h, image_size[1] // w
            shift_y = torch.arange(0, h, device=fmap.device, dtype=torch.float32) * sy
            shift_x = torch.arange(0, w, device=fmap.device, dtype=torch.float32) * sx
            yy, xx = torch.meshgrid(shift_y, shift_x, indexing="ij")
            shifts = torch.stack((xx.reshape(-1), yy.reshape(-1)) * 2, dim=1)
            anchors.append((shifts.view(-1, 1, 4) + base.view(1, -1, 4)).reshape(-1, 4))
        return torch.cat(anchors)


class RPN(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.anchor_generator = AnchorGenerator()
        self.head = nn.Conv2d(channels, 3 * 4, 1)

    def forward(self, image_size, feature_maps):
        anchors = self.anchor_generator(image_size, feature_maps)
        deltas = torch.cat([self.head(f)[0].permute(1, 2, 0).reshape(-1, 4) for f in feature_maps])
        centers = (anchors[:, :2] + anchors[:, 2:]) / 2 + deltas[:, :2]
        return torch.cat([centers, (anchors[:, 2:] - anchors[:, :2]) * deltas[:, 2:].exp()], dim=1)


if __name__ == "__main__":
    rpn = RPN().eval()
    train_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    rpn.to(train_device)
    with torch.no_grad():
        rpn((64, 64), [torch.randn(1, 4, 8, 8, device=train_device), torch.randn(1, 4, 4, 4, device=train_device)])
        rpn.cpu()
        print(rpn((64, 64), [torch.randn(1, 4, 8, 8), torch.randn(1, 4, 4, 4)]).shape)
