# source: https://github.com/Nerogar/mgds/pull/51
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking argument for argument index in method wrapper_CUDA__index_select)
# bug: in the data pipeline the tokenize stage puts the token ids (and attention mask) on the
#      pipeline's device, cuda:0; EncodeMistralText then calls its text encoder on them as they
#      are, but in the model-parallel setup of the PR the encoder is kept on the CPU, so its CPU
#      embedding is indexed with CUDA ids. The PR (open; its description names cause and fix) moves
#      the tokens and the mask to text_encoder.device right before the forward. The fix inserts
#      those moves; the encoder call they precede is marked (DL201, the closest rule: ids on the
#      pipeline's GPU meet the encoder's CPU weights).
import torch
import torch.nn as nn


class PipelineModule:
    def __init__(self):
        self.pipeline = None

    def get_previous_item(self, name, index):
        return self.pipeline.items[name][index]


class Tokenize(PipelineModule):
    def __init__(self, device, vocab=1000, max_len=12):
        super().__init__()
        self.device, self.vocab, self.max_len = device, vocab, max_len

    def get_item(self, text):
        ids = [hash(w) % self.vocab for w in text.split()][: self.max_len]
        tokens = torch.zeros(self.max_len, dtype=torch.long, device=self.device)
        mask = torch.zeros(self.max_len, dtype=torch.bool, device=self.device)
        tokens[: len(ids)] = torch.tensor(ids, device=self.device)
        mask[: len(ids)] = True
        return {"tokens": tokens, "attention_mask": mask}


class TinyMistral(nn.Module):
    def __init__(self, vocab=1000, dim=32):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layer = nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True)

    @property
    def device(self):
        return self.embed_tokens.weight.device

    def forward(self, input_ids, attention_mask=None):
        h = self.embed_tokens(input_ids)
        return self.layer(h, src_key_padding_mask=None if attention_mask is None else ~attention_mask)


class EncodeMistralText(PipelineModule):
    def __init__(self, text_encoder):
        super().__init__()
        self.text_encoder = text_encoder

    def get_item(self, index):
        item = self.get_previous_item("tokenized", index)
        tokens = item["tokens"].unsqueeze(0)
        attention_mask = item["attention_mask"].unsqueeze(0)
        hidden = self.text_encoder(tokens, attention_mask=attention_mask)  # expect: DL201
        return hidden.detach()


class Pipeline:
    def __init__(self, device, texts, text_encoder):
        self.tokenize = Tokenize(device)
        self.encode = EncodeMistralText(text_encoder)
        self.tokenize.pipeline = self.encode.pipeline = self
        self.items = {"tokenized": [self.tokenize.get_item(t) for t in texts]}

    def run(self):
        return [self.encode.get_item(i) for i in range(len(self.items["tokenized"]))]


if __name__ == "__main__":
    train_device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    text_encoder = TinyMistral().to("cpu")  # too large for the GPU next to the transformer
    out = Pipeline(train_device, ["a red fox", "two cats on a mat"], text_encoder).run()
    print([o.shape for o in out])
