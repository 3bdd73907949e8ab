# source: https://github.com/haoosz/ConceptExpress/issues/5
# fixed twin: the empty-prompt ids get .to(latents.device) and each concept prompt is moved with prompt_ids = prompt_ids.to(latents.device) before the GPU text encoder reads it (the fix given in the issue thread).
import torch
import torch.nn as nn
import torch.nn.functional as F


class ToyTokenizer:
    model_max_length = 8

    def __call__(self, texts, return_tensors="pt"):
        rows = [[(hash(w) % 97) + 1 for w in t.split()][: self.model_max_length] for t in texts]
        rows = [r + [0] * (self.model_max_length - len(r)) for r in rows]
        return {"input_ids": torch.tensor(rows)}


class Accelerator:
    def __init__(self):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    def prepare(self, *modules):
        return tuple(m.to(self.device) for m in modules)


class TextEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 16)

    def forward(self, input_ids):
        return (self.embed(input_ids),)


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 4)

    def forward(self, latents, timesteps, encoder_hidden_states):
        return latents + self.proj(encoder_hidden_states.mean(dim=1))[:, :, None, None] * timesteps[:, None, None, None]


class TokenManager:
    def __init__(self, placeholder_tokens, tokenizer):
        self.ph_tokens_used = placeholder_tokens
        self.tokenizer = tokenizer

    def return_single_token(self, tokens_ids_to_use, bsz):
        tokens_to_use = [self.ph_tokens_used[i] for i in tokens_ids_to_use]
        prompt = "a photo of " + " and ".join(tokens_to_use)
        prompt_ids = self.tokenizer([prompt] * bsz, return_tensors="pt")["input_ids"]
        return prompt_ids, tokens_to_use

    def loader(self, bsz):
        return [self.return_single_token([i], bsz)[0] for i in range(len(self.ph_tokens_used))]


class ConceptExpress:
    def __init__(self):
        self.accelerator = Accelerator()
        self.tokenizer = ToyTokenizer()
        self.text_encoder, self.unet = self.accelerator.prepare(TextEncoder(), UNet())
        self.token_manager = TokenManager(["<a1>", "<a2>"], self.tokenizer)

    def train_step(self, latents, warmup):
        bsz = latents.shape[0]
        noise = torch.randn_like(latents)
        if warmup:
            timesteps = torch.LongTensor([0] * bsz).to(latents.device)
            null_input_ids = self.tokenizer([""] * bsz, return_tensors="pt")["input_ids"].to(latents.device)
            encoder_hidden_states = self.text_encoder(null_input_ids)[0]
            return F.mse_loss(self.unet(latents, timesteps, encoder_hidden_states), noise)
        loss = 0.0
        for prompt_ids in self.token_manager.loader(bsz):
            timesteps = torch.randint(0, 1000, (bsz,), device=latents.device).long()
            noisy_latents = latents + noise * timesteps[:, None, None, None] / 1000
            prompt_ids = prompt_ids.to(latents.device)
            encoder_hidden_states = self.text_encoder(prompt_ids)[0]
            loss = loss + F.mse_loss(self.unet(noisy_latents, timesteps, encoder_hidden_states), noise)
        return loss


if __name__ == "__main__":
    trainer = ConceptExpress()
    latents = torch.randn(2, 4, 8, 8, device=trainer.accelerator.device)
    print(trainer.train_step(latents, warmup=True).item(), trainer.train_step(latents, warmup=False).item())
