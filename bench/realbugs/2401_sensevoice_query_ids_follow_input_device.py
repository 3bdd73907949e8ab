# source: https://github.com/pengzhendong/streaming-sensevoice/issues/3
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking argument for argument index in method wrapper_CUDA__index_select)
# bug: the model builder places the speech model on the GPU when one exists, but the streaming
#      demo feeds it a feature window it keeps on the host. inference() makes the lengths and the
#      language/event query ids with .to(speech.device), i.e. on the CPU, and hands the ids to
#      self.embed, whose weight is on the GPU. The fix (commit c077bf1) moves the speech and the
#      ids to the model's device (self.device, set by from_pretrained(device)). The changed lines
#      of inference are marked (DL201: operands on different devices - host ids meet the
#      embedding's GPU weight, host lengths make the mask the encoder applies to GPU features).
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
        speech_lengths = torch.tensor([speech.shape[1]]).to(speech.device)  # expect: DL201
        language_query = self.embed(torch.LongTensor([[self.lid_dict["zh"]]]).to(speech.device))  # expect: DL201
        event_query = self.embed(torch.LongTensor([[1, 2]]).to(speech.device))  # expect: DL201
        speech = torch.cat((language_query, event_query, speech), dim=1)
        speech_lengths += 3
        encoder_out, _ = self.encoder(speech, speech_lengths)
        return self.ctc(encoder_out).log_softmax(-1)[0, 3:]


def build_model(device="cuda"):
    if not torch.cuda.is_available():
        device = "cpu"
    return SpeechModel().to(device)


def from_pretrained():
    model = build_model()
    model.eval()
    return model


if __name__ == "__main__":
    model = from_pretrained()
    chunk_feats = torch.zeros(12, 16)
    for step in range(3):
        chunk_feats = torch.roll(chunk_feats, -1, dims=0)
        chunk_feats[-1, :] = torch.randn(16)
        with torch.no_grad():
            out = model.inference(chunk_feats)
    print(out.shape)
