# source: https://github.com/SWivid/F5-TTS/pull/367
# fixed twin: commit 183ad09 (merged in #367) sets self.device = self.accelerator.device, saves ref_audio.cpu() and
#             gen_audio.cpu(), and decodes the generated mel .to(self.device). Needs torchaudio, as the bug file does.
import os
import tempfile

import torch
import torch.nn as nn
import torchaudio

device = "cuda" if torch.cuda.is_available() else "cpu"


class Vocos(nn.Module):
    def __init__(self, n_mels=16, hop=32):
        super().__init__()
        self.head = nn.Linear(n_mels, hop)

    @torch.inference_mode()
    def decode(self, mel):
        return torch.tanh(self.head(mel.transpose(1, 2))).flatten(1)


def load_vocoder(vocoder_name="vocos", is_local=False, local_path="", device=device):
    vocoder = Vocos().eval().to(device)
    return vocoder


class MelSpec(nn.Module):
    def __init__(self, target_sample_rate=24000):
        super().__init__()
        self.target_sample_rate = target_sample_rate


class CFM(nn.Module):
    def __init__(self, n_mels=16):
        super().__init__()
        self.mel_spec = MelSpec()
        self.net = nn.Linear(n_mels, n_mels)

    def forward(self, inp, text=None, lens=None):
        pred = self.net(inp)
        return ((pred - inp) ** 2).mean(), None, pred

    @torch.no_grad()
    def sample(self, cond, text=None, duration=None, steps=4, cfg_strength=2.0, sway_sampling_coef=-1.0):
        out = cond
        for _ in range(steps):
            out = out + 0.1 * self.net(out)
        return out, None


class Accelerator:
    def __init__(self):
        self.device = torch.device(device)
        self.is_local_main_process = True

    def prepare(self, *objs):
        return tuple(o.to(self.device) if isinstance(o, nn.Module) else o for o in objs)

    def unwrap_model(self, model):
        return model


class Trainer:
    def __init__(self, model, num_warmup_updates=2, save_per_updates=2, checkpoint_path=None, log_samples=False,
                 learning_rate=1e-3, mel_spec_type="vocos"):
        self.accelerator = Accelerator()
        self.device = self.accelerator.device
        self.log_samples = log_samples
        self.save_per_updates = save_per_updates
        self.checkpoint_path = checkpoint_path or tempfile.mkdtemp()
        self.vocoder_name = mel_spec_type
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
        self.model, = self.accelerator.prepare(model)

    def train(self, train_dataset, epochs=1):
        if self.log_samples:
            vocoder = load_vocoder(vocoder_name=self.vocoder_name)
            target_sample_rate = self.accelerator.unwrap_model(self.model).mel_spec.target_sample_rate
            log_samples_path = f"{self.checkpoint_path}/samples"
            os.makedirs(log_samples_path, exist_ok=True)
        global_step = 0
        for epoch in range(epochs):
            self.model.train()
            for batch in train_dataset:
                batch = {k: v.to(self.accelerator.device) for k, v in batch.items()}
                mel_spec = batch["mel"].permute(0, 2, 1)
                mel_lengths = batch["mel_lengths"]
                loss, cond, pred = self.model(mel_spec, text=None, lens=mel_lengths)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                global_step += 1
                if global_step % self.save_per_updates == 0:
                    if self.log_samples and self.accelerator.is_local_main_process:
                        ref_audio, ref_audio_len = vocoder.decode(batch["mel"][0].unsqueeze(0)), mel_lengths[0]
                        torchaudio.save(f"{log_samples_path}/step_{global_step}_ref.wav", ref_audio.cpu(), target_sample_rate)
                        with torch.inference_mode():
                            generated, _ = self.accelerator.unwrap_model(self.model).sample(
                                cond=mel_spec[0][:ref_audio_len].unsqueeze(0), text=None, duration=ref_audio_len * 2)
                        generated = generated.to(torch.float32)
                        gen_audio = vocoder.decode(generated[:, ref_audio_len:, :].permute(0, 2, 1).to(self.device))
                        torchaudio.save(f"{log_samples_path}/step_{global_step}_gen.wav", gen_audio.cpu(), target_sample_rate)
                print(global_step, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    dataset = [{"mel": torch.randn(2, 16, 40), "mel_lengths": torch.tensor([40, 40])} for _ in range(4)]
    trainer = Trainer(CFM(), log_samples=True)
    trainer.train(dataset)
