# source: https://github.com/pengzhendong/streaming-sensevoice/issues/3
# fixed twin: from_pretrained(device) moves the model there and records model.device; inference moves the speech, the lengths and the query ids to self.device (commit c077bf1).
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, lengths):
        steps = torch.arange(x.size(1), device=lengths.device)
        mask = (steps[None, :] < lengths[:, None]).float()
        return self.proj(x) * mask[..., None], lengths


class SpeechModel(nn.Module):
    def __init__(self, dim=16, vocab=10):
        super().__init__()
        self.lid_dict = {"auto": 0, "zh": 3, "en": 4}
        self.embed = nn.Embedding(8, dim)
        self.encoder = Encoder(dim)
        self.ctc = nn.Linear(dim, vocab)

    def inference(self, speech):
        speech = speech[None, :, :]
        speech_lengths = torch.tensor([speech.shape[1]])
        speech = speech.to(self.device)
        speech_lengths = speech_lengths.to(self.device)
        language_query = self.embed(torch.LongTensor([[self.lid_dict["zh"]]]).to(self.device))
        event_query = self.embed(torch.LongTensor([[1, 2]]).to(self.device))
        speech = torch.cat((language_query, event_query, speech), dim=1)
        speech_lengths += 3
        encoder_out, _ = self.encoder(speech, speech_lengths)
        return self.ctc(encoder_out).log_softmax(-1)[0, 3:]


def build_model(device="cuda"):
    if not torch.cuda.is_available():
        device = "cpu"
    return SpeechModel().to(device)


def from_pretrained(device="cpu"):
    model = build_model()
    model = model.to(device)
    model.eval()
    model.device = device
    return model


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = from_pretrained(device)
    chunk_feats = torch.zeros(12, 16)
    for step in range(3):
        chunk_feats = torch.roll(chunk_feats, -1, dims=0)
        chunk_feats[-1, :] = torch.randn(16)
        with torch.no_grad():
            out = model.inference(chunk_feats)
    print(out.shape)
