# source: https://github.com/mind-inria/ggrappa/pull/10
# error: (PR description) "When `sig` is on CUDA, `nonzero()[0]` returns a CUDA tensor. Unpacking it into `shift_y,
#        shift_z` gives CUDA scalars, which then fail when added to a numpy array on line 84 (`zival = cnt + z_ival`)."
#        ("Reproduces with any CUDA input when cuda=True or cuda_mode="all"") - can't convert a CUDA tensor to NumPy
# bug: application.apply_grappa_kernel (called by GRAPPA_Recon) finds the sampling shift of a Cartesian k-space with
#      shift_y, shift_z = abs(sig).sum(0).sum(-1).nonzero()[0]; for k-space already on the GPU both are CUDA 0-dim
#      tensors, and the z loop builds its positions as cnt + z_ival with cnt = shift_z and z_ival a NumPy arange. The
#      open PR adds .cpu() to the nonzero line, the line marked (DL204: a CUDA tensor meets NumPy two statements on);
#      the repository is unchanged, so there is no twin (as 3203). Reductions: the kernel is a given GRAPPAReconSpec
#      with random weights instead of estimate_grappa_kernel on the ACS region; the GoLF-SPARKLING and mask branches,
#      tqdm and logging are dropped; the k-space is random with every second line sampled. Needs NumPy (upstream
#      imports it; absent on this machine).
from dataclasses import dataclass
from typing import List

import numpy as np
import torch


# --- src/ggrappa/__init__.py ---
@dataclass
class GRAPPAReconSpec:
    weights: torch.Tensor
    idxs_src: torch.Tensor
    sbl: List[int]
    tbl: List[int]
    pos: List[int]
    af: List[int]
    delta: int


# --- src/ggrappa/application.py ---
def apply_grappa_kernel(sig, grappa_recon_spec: GRAPPAReconSpec, *, batch_size: int = 1, cuda: bool = False,
                        cuda_mode: str = "all", quiet: bool = False, dtype=torch.complex64) -> torch.Tensor:
    grappa_kernel = grappa_recon_spec.weights.cuda() if cuda and cuda_mode in ["all", "application"] else grappa_recon_spec.weights
    ypos, zpos, xpos = grappa_recon_spec.pos
    tbly, tblz, tblx = grappa_recon_spec.tbl
    sbly, sblz, sblx = grappa_recon_spec.sbl
    af = grappa_recon_spec.af
    delta = grappa_recon_spec.delta
    idxs_src = grappa_recon_spec.idxs_src

    sig = sig.to(dtype)
    nc, *vol_shape = sig.shape

    shift_y, shift_z = abs(sig).sum(0).sum(-1).nonzero()[0]  # expect: DL204

    rec = torch.zeros_like(sig)
    size_chunk_y = sbly + tbly * (batch_size - 1)
    y_ival = range(shift_y, max(rec.shape[1] - sbly, 1), tbly * batch_size)
    z_ival = np.arange(0, max(rec.shape[2] - sblz, 1), tblz)

    cnt = shift_z
    idxs_src = idxs_src.flatten()
    for y in y_ival:
        sig_y = sig[:, y:y + size_chunk_y]
        sig_y = sig_y.cuda() if cuda and cuda_mode in ["all", "application"] else sig_y
        zival = cnt + z_ival
        for z in zival:
            blocks = sig_y[:, :, z:z + sblz, :].unfold(dimension=1, size=sbly, step=tbly).unfold(dimension=3, size=sblx, step=tblx)
            blocks = blocks.permute(1, 3, 0, 4, 2, 5)
            cur_batch_sz_y = blocks.shape[0]
            cur_batch_sz_x = blocks.shape[1]
            blocks = blocks.reshape(cur_batch_sz_y, cur_batch_sz_x, nc, -1)[..., idxs_src]
            blocks = blocks.reshape(cur_batch_sz_y * cur_batch_sz_x, -1)
            res = (blocks @ grappa_kernel).reshape(cur_batch_sz_y, cur_batch_sz_x, nc, tbly, tblz, tblx)
            rec[:, y + ypos:y + ypos + tbly * cur_batch_sz_y,
                z + zpos:z + zpos + tblz,
                xpos:xpos + tblx * cur_batch_sz_x] = res.permute(2, 0, 3, 4, 1, 5).reshape(nc, cur_batch_sz_y * tbly, tblz, cur_batch_sz_x * tblx)
        cnt = (cnt + delta) % af[1]
        del sig_y
        if cuda:
            torch.cuda.empty_cache()

    rec[abs(sig) > 0] = sig[abs(sig) > 0]
    if sbly > 1:
        rec = rec[:, (af[0] - ypos) % tbly + ypos:-(sbly - ypos - tbly)]
    if sblx > 1:
        rec = rec[..., xpos:-(sblx - xpos - tblx)]
    return rec


# --- src/ggrappa/grappaND.py ---
def GRAPPA_Recon(sig, acs=None, af=None, grappa_recon_spec=None, batch_size=1, cuda=True, cuda_mode="all", quiet=True):
    return apply_grappa_kernel(sig, grappa_recon_spec, batch_size=batch_size, cuda=cuda, cuda_mode=cuda_mode, quiet=quiet)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    nc, ny, nz, nx = 2, 12, 4, 8
    sig = torch.randn(nc, ny, nz, nx, dtype=torch.complex64)
    sig[:, 1::2] = 0
    idxs_src = torch.tensor([[[True, True, True]], [[False, False, False]], [[True, True, True]]])
    n_src = int(idxs_src.sum())
    spec = GRAPPAReconSpec(weights=torch.randn(nc * n_src, nc, dtype=torch.complex64), idxs_src=idxs_src,
                           sbl=[3, 1, 3], tbl=[1, 1, 1], pos=[1, 0, 1], af=[2, 1], delta=0)
    rec = GRAPPA_Recon(sig.to(device), grappa_recon_spec=spec, cuda=torch.cuda.is_available())
    print(rec.shape)
