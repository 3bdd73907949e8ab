# source: https://github.com/monniert/differentiable-blocksworld/issues/2
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
# bug: get_scene_face_colors builds the per-block colour values with torch.linspace on the CPU and
#      filters them with a mask computed from the model's opacities, a parameter on the GPU; PyTorch
#      1.13 and later reject a CUDA mask for a CPU tensor. The fix (commit 773fee2) moves the mask
#      to the CPU (.cpu() on the opacities) in both filtering branches; both lines are marked (DL207).
import torch
import torch.nn as nn


def get_fancy_cmap():
    anchors = torch.tensor([[0.2, 0.2, 0.8], [0.2, 0.8, 0.2], [0.9, 0.6, 0.1], [0.8, 0.1, 0.2]])

    def cmap(values):
        pos = values.clamp(0, 1) * (len(anchors) - 1)
        low = pos.floor().long().clamp(max=len(anchors) - 2)
        frac = (pos - low).unsqueeze(-1)
        return anchors[low] * (1 - frac) + anchors[low + 1] * frac

    return cmap


class DifferentiableBlocksWorld(nn.Module):
    def __init__(self, n_blocks=6, faces_per_block=12, env_n_faces=10, kill_blocks=True):
        super().__init__()
        self.n_blocks = n_blocks
        self.BNF = faces_per_block
        self.env_n_faces = env_n_faces
        self.kill_blocks = kill_blocks
        self.alpha_logit = nn.Parameter(torch.randn(n_blocks) * 3)
        self.bkg = nn.Parameter(torch.zeros(3))

    def get_opacities(self):
        return torch.sigmoid(self.alpha_logit)

    @torch.no_grad()
    def get_scene_face_colors(self, filter_transparent=False, w_env=True):
        val_blocks = torch.linspace(0, 1, self.n_blocks + 1)[1:]
        if filter_transparent:
            val_blocks = val_blocks[self.get_opacities() > 0.5]  # expect: DL207
        elif self.kill_blocks:
            val_blocks = val_blocks[self.get_opacities() > 0.01]  # expect: DL207
        cmap = get_fancy_cmap()
        NFE = self.env_n_faces if w_env else 0
        values = torch.cat([torch.zeros(NFE), val_blocks.repeat_interleave(self.BNF)])
        colors = cmap(values)
        return colors.float().to(self.bkg.device)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = DifferentiableBlocksWorld().to(device)
    print(model.get_scene_face_colors().shape, model.get_scene_face_colors(filter_transparent=True).shape)
