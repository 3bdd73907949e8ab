# source: https://github.com/haoosz/ConceptExpress/issues/5
# fixed twin: both token-id tensors are moved to the latents' device before the text encoder, the commenter's two changes.
import torch
import torch.nn as nn


class Tokens:
    def __init__(self, input_ids):
        self.input_ids = input_ids


class ToyTokenizer:
    model_max_length = 8

    def __call__(self, texts, max_length=8, **kwargs):
        rows = [[(hash(w) % 97) + 1 for w in t.split()][:max_length] for t in texts]
        return Tokens(torch.tensor([r + [0] * (max_length - len(r)) for r in rows]))


class TokenManager:
    def __init__(self, tokenizer, placeholder_tokens):
        self.tokenizer = tokenizer
        self.tokens = placeholder_tokens

    def return_single_token(self, ids, bsz):
        prompt = "a photo of " + " and ".join(self.tokens[i] for i in ids)
        prompt_ids = self.tokenizer([prompt] * bsz, truncation=True, padding="max_length",
                                    max_length=self.tokenizer.model_max_length,
                                    return_tensors="pt").input_ids
        return prompt_ids, torch.tensor(ids)

    def loader(self, bsz):
        out = [self.return_single_token([i], bsz) for i in range(len(self.tokens))]
        out.append(self.return_single_token(list(range(len(self.tokens))), bsz))
        return out


class TextEncoder(nn.Module):
    def __init__(self, vocab=100, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, ids):
        return (self.proj(self.embed(ids)),)


class UNet(nn.Module):
    def __init__(self, ch=4, dim=16):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)
        self.cond = nn.Linear(dim, ch)

    def forward(self, latents, timesteps, states):
        return self.conv(latents) + self.cond(states.mean(1))[:, :, None, None]


class Trainer:
    def __init__(self, device):
        self.device = device
        self.tokenizer = ToyTokenizer()
        self.token_manager = TokenManager(self.tokenizer, ["<asset0>", "<asset1>"])
        self.unet, self.text_encoder = UNet(), TextEncoder()

    def prepare(self):
        self.unet.to(self.device)
        self.text_encoder.to(self.device)

    def step(self, latents, phase_one):
        bsz = latents.shape[0]
        timesteps = torch.zeros(bsz, dtype=torch.long, device=latents.device)
        if phase_one:
            null_input_ids = self.tokenizer([""] * bsz, truncation=True, padding="max_length",
                                            max_length=self.tokenizer.model_max_length,
                                            return_tensors="pt").input_ids.to(latents.device)
            states = self.text_encoder(null_input_ids)[0]
            return (self.unet(latents, timesteps, states) - latents).pow(2).mean()
        loss = 0.0
        for prompt_ids, token_ids in self.token_manager.loader(bsz):
            prompt_ids = prompt_ids.to(latents.device)
            encoder_hidden_states = self.text_encoder(prompt_ids)[0]
            loss = loss + (self.unet(latents, timesteps, encoder_hidden_states) - latents).pow(2).mean()
        return loss


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    trainer = Trainer(device)
    trainer.prepare()
    latents = torch.randn(2, 4, 8, 8, device=device)
    print(trainer.step(latents, True).item(), trainer.step(latents, False).item())
