# source: https://github.com/hkchengrex/MMAudio/pull/57
# fixed twin: torch.cuda.set_device(local_rank) is called before the models are moved (PR 57, commit 5968608), so each process's bare .cuda() is its own GPU.
import os
import tempfile
from pathlib import Path

import torch
import torch.distributed as distributed
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

local_rank = int(os.environ.get('LOCAL_RANK', 0))


class TextEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.token_embedding = nn.Embedding(100, 16)

    def encode_text(self, text, normalize=False):
        x = self.token_embedding(text).mean(dim=1)
        return nn.functional.normalize(x, dim=-1) if normalize else x


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv1d(8, 4, 3, padding=1)

    def encode(self, mel):
        return self.enc(mel)


class WavTextDataset(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return {'id': str(i), 'waveform': torch.randn(800), 'tokens': torch.randint(0, 100, (7,))}


def distributed_setup():
    distributed.init_process_group(backend="nccl")
    local_rank = distributed.get_rank()
    world_size = distributed.get_world_size()
    print(f'Initialized: local_rank={local_rank}, world_size={world_size}')
    return local_rank, world_size


@torch.inference_mode()
def main(latent_dir: Path, batch_size=2):
    distributed_setup()
    torch.cuda.set_device(local_rank)
    clip_model = TextEncoder().eval().cuda()
    tod = AutoEncoder().eval().cuda()
    mel_converter = nn.Conv1d(1, 8, 16, stride=8).eval().cuda()

    dataloader = DataLoader(WavTextDataset(), batch_size=batch_size, shuffle=False)
    latent_dir.mkdir(exist_ok=True, parents=True)
    for i, batch in enumerate(dataloader):
        waveforms = batch['waveform'].cuda()
        tokens = batch['tokens'].cuda()
        text_features = clip_model.encode_text(tokens, normalize=True)
        latents = tod.encode(mel_converter(waveforms.unsqueeze(1)))
        data = {'id': list(batch['id']), 'mean': latents.detach().cpu(),
                'text_features': text_features.detach().cpu()}
        torch.save(data, latent_dir / f'r{local_rank}_{i:05d}.pth')
    distributed.barrier()
    if local_rank == 0:
        print('Extraction done:', len(list(latent_dir.iterdir())), 'files')
    distributed.destroy_process_group()


if __name__ == "__main__":
    if not torch.cuda.is_available():
        print("latent extraction needs CUDA (run with torchrun on a GPU node)")
    else:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29533")
        os.environ.setdefault("RANK", "0")
        os.environ.setdefault("WORLD_SIZE", "1")
        main(Path(tempfile.mkdtemp()) / "audio-latents")
