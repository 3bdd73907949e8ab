# source: https://github.com/schen149/sub-sentence-encoder/issues/1
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking argument for argument index in method wrapper_CUDA__index_select)
# bug: the README's usage loads the sub-sentence encoder onto the GPU and then hands it the
#      PropPairModelInput objects built by the feature converter (token ids, proposition masks and
#      counts, all host tensors); the encoder's embedding lookup meets CUDA weights with CPU ids.
#      The input class has its own .to(device), which the usage never called. The maintainer's fix
#      adds sent1_inputs.to("cuda") / sent2_inputs.to("cuda") to the instructions before the model
#      call; since the fix only inserts lines, the model call they precede is marked (DL203: a
#      model moved to a device called on inputs that never were).
import torch
import torch.nn as nn


class PropPairModelInput:
    def __init__(self, encoder_inputs, num_prop_per_sentence, all_prop_mask):
        self.encoder_inputs = encoder_inputs
        self.num_prop_per_sentence = num_prop_per_sentence
        self.all_prop_mask = all_prop_mask

    def to(self, device):
        self.encoder_inputs = {k: v.to(device) for k, v in self.encoder_inputs.items()}
        self.num_prop_per_sentence = self.num_prop_per_sentence.to(device)
        self.all_prop_mask = self.all_prop_mask.to(device)
        return self


def convert_sentences_to_features(sentences, prop_spans, max_len=8, vocab=50):
    ids = torch.tensor([[(sum(map(ord, w)) % (vocab - 1)) + 1 for w in s.split()][:max_len] + [0] * (max_len - len(s.split()[:max_len])) for s in sentences])
    masks, counts = [], []
    for spans in prop_spans:
        counts.append(len(spans))
        for start, end in spans:
            row = [0.0] * max_len
            for i in range(start, min(end, max_len)):
                row[i] = 1.0
            masks.append(row)
    return PropPairModelInput(
        {"input_ids": ids, "attention_mask": (ids != 0).long()},
        torch.tensor(counts, dtype=torch.int32),
        torch.tensor(masks, dtype=torch.float),
    )


class SubSentenceEncoder(nn.Module):
    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, inputs: PropPairModelInput):
        tokens = self.embed(inputs.encoder_inputs["input_ids"])
        tokens = tokens * inputs.encoder_inputs["attention_mask"].unsqueeze(-1)
        sentence_of_prop = torch.repeat_interleave(
            torch.arange(len(inputs.num_prop_per_sentence), device=tokens.device),
            inputs.num_prop_per_sentence.long(),
        )
        pooled = (inputs.all_prop_mask.unsqueeze(-1) * tokens[sentence_of_prop]).sum(1)
        return self.proj(pooled)


def load_model(device):
    model = SubSentenceEncoder()
    model.eval()
    return model.to(device)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = load_model(device)
    sent1_inputs = convert_sentences_to_features(["the cat sat on the mat"], [[(0, 3), (3, 6)]])
    sent2_inputs = convert_sentences_to_features(["a cat was sitting"], [[(0, 4)]])
    with torch.no_grad():
        sent1_embeddings = model(sent1_inputs)  # expect: DL203
        sent2_embeddings = model(sent2_inputs)
    print((sent1_embeddings @ sent2_embeddings.T).shape)
