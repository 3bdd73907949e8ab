# source: https://github.com/muelea/selfcontact/issues/5
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
#        (in segment_hd_points, comparing the GPU vertex indices with the module's face buffer)
# bug: the self-contact loss takes a `device` argument (default 'cuda') and the caller moves the vertices to
#      loss.device, but the argument only records the device: the SelfContact module handed to the loss, whose mesh
#      data (faces, geodesic mask) are registered buffers, is never moved, so its CPU buffers meet the GPU vertices.
#      The maintainer's answer is that the contact module must still be moved to the device by the caller; that adds
#      a line, so the loss call the traceback starts from is marked (DL201: a module called on an argument on
#      another device).
import torch
import torch.nn as nn


class SelfContact(nn.Module):
    def __init__(self, num_vertices=12, euclthres=0.5, geothres=2):
        super().__init__()
        faces = torch.stack([torch.arange(num_vertices - 2), torch.arange(1, num_vertices - 1), torch.arange(2, num_vertices)], 1)
        self.register_buffer("faces", faces)
        idx = torch.arange(num_vertices)
        self.register_buffer("geomask", (idx[:, None] - idx[None, :]).abs() > geothres)
        self.euclthres = euclthres

    def get_pairwise_dists(self, verts1, verts2):
        return torch.cdist(verts1, verts2)

    def segment_vertices(self, vertices):
        bs = vertices.shape[0]
        v2v = self.get_pairwise_dists(vertices, vertices)
        v2v_mask = v2v.detach().clone()
        v2v_mask[:, ~self.geomask] = float("inf")
        _, v2v_min_index = torch.min(v2v_mask, dim=1)
        v2v_min = torch.gather(v2v, dim=2, index=v2v_min_index.view(bs, -1, 1)).squeeze(-1)
        incontact = v2v_min < self.euclthres
        return v2v_min, incontact, self.segment_hd_points(incontact)

    def segment_hd_points(self, incontact):
        faces_in_contact = []
        for idx in range(incontact.shape[0]):
            verts_idx = torch.nonzero(incontact[idx]).view(-1)
            exp1 = verts_idx.expand(self.faces.flatten().shape[0], -1)
            exp2 = self.faces.flatten().unsqueeze(-1).expand(-1, verts_idx.shape[0])
            nzv = (exp1 == exp2).any(1).reshape(-1, 3).any(1)
            faces_in_contact.append(torch.nonzero(nzv).view(-1))
        return faces_in_contact


class SelfContactLoss(nn.Module):
    def __init__(self, contact_module, contact_loss_weight=2.5, alpha1=0.005, alpha2=0.005, device="cuda"):
        super().__init__()
        self.device = device
        self.contact_w, self.a1, self.a2 = contact_loss_weight, alpha1, alpha2
        self.cm = contact_module

    def forward(self, vertices):
        bs = vertices.shape[0]
        v2v_pull = torch.zeros(bs, device=vertices.device)
        v2v_min, incontact, faces_in_contact = self.cm.segment_vertices(vertices)
        for idx in range(bs):
            if incontact[idx].sum() > 0:
                v2v_pull[idx] = self.contact_w * (self.a1 * torch.tanh(v2v_min[idx][incontact[idx]] / self.a2) ** 2).sum()
        return v2v_pull.sum(), faces_in_contact


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    vertices = torch.randn(2, 12, 3, requires_grad=True)
    self_contact_module = SelfContact()
    self_contact_loss = SelfContactLoss(self_contact_module, device=device)
    loss, faces = self_contact_loss(vertices.to(self_contact_loss.device))  # expect: DL201
    loss.backward()
    print(loss.item(), [f.shape for f in faces])
