# source: https://github.com/galilai-group/stable-worldmodel/pull/231
# error: crash on CPU and on any non-CUDA device when SIGReg.forward samples its projections
# bug: the regularizer draws its random projection matrix with device='cuda' instead of the device of
#      the embeddings it is applied to.
import torch


class SIGReg(torch.nn.Module):
    """Sketch Isotropic Gaussian Regularizer."""

    def __init__(self, knots=17, num_proj=1024):
        super().__init__()
        self.num_proj = num_proj
        t = torch.linspace(0, 3, knots, dtype=torch.float32)
        dt = 3 / (knots - 1)
        weights = torch.full((knots,), 2 * dt, dtype=torch.float32)
        weights[[0, -1]] = dt
        window = torch.exp(-t.square() / 2.0)
        self.register_buffer("t", t)
        self.register_buffer("phi", window)
        self.register_buffer("weights", weights * window)

    def forward(self, proj):
        """proj: (T, B, D)"""
        A = torch.randn(proj.size(-1), self.num_proj, device=proj.device)
        A = A.div_(A.norm(p=2, dim=0))
        x_t = (proj @ A).unsqueeze(-1) * self.t
        err = (x_t.cos().mean(-3) - self.phi).square() + x_t.sin().mean(-3).square()
        statistic = (err @ self.weights) * proj.size(-2)
        return statistic.mean()


def lewm_loss(encoder, predictor, sigreg, obs, actions, lambd=0.1):
    emb = encoder(obs)                       # (B, T, D)
    pred = predictor(emb[:, :-1], actions[:, :-1])
    pred_loss = (pred - emb[:, 1:].detach()).pow(2).mean()
    sigreg_loss = sigreg(emb.transpose(0, 1))
    return pred_loss + lambd * sigreg_loss
