# source: https://github.com/pytorch/text/pull/409
# fixed twin: commit b18248e builds the sentence and word lengths with torch.tensor(..., dtype=self.dtype, device=device)
#             instead of the legacy torch.LongTensor(..., device=device).
import torch


class Vocab:
    def __init__(self, tokens, specials=("<unk>", "<pad>")):
        self.itos = list(specials) + sorted(set(tokens) - set(specials))
        self.stoi = {t: i for i, t in enumerate(self.itos)}


class Field:
    def __init__(self, sequential=True, batch_first=True, include_lengths=False, pad_token="<pad>",
                 fix_length=None, dtype=torch.long, tokenize=None):
        self.sequential = sequential
        self.batch_first = batch_first
        self.include_lengths = include_lengths
        self.pad_token = pad_token
        self.fix_length = fix_length
        self.dtype = dtype
        self.tokenize = tokenize or (lambda s: s.split())
        self.vocab = None

    def preprocess(self, x):
        return self.tokenize(x) if isinstance(x, str) else x

    def pad(self, minibatch):
        minibatch = list(minibatch)
        max_len = self.fix_length or max(len(x) for x in minibatch)
        padded, lengths = [], []
        for x in minibatch:
            padded.append(list(x[:max_len]) + [self.pad_token] * max(0, max_len - len(x)))
            lengths.append(len(padded[-1]) - max(0, max_len - len(x)))
        if self.include_lengths:
            return padded, lengths
        return padded

    def build_vocab(self, *sources):
        self.vocab = Vocab([tok for src in sources for ex in src for tok in ex])

    def numericalize(self, arr, device=None):
        if isinstance(arr, tuple):
            arr, lengths = arr
            lengths = torch.tensor(lengths, dtype=self.dtype, device=device)
        arr = [[self.vocab.stoi[x] for x in ex] for ex in arr]
        var = torch.tensor(arr, dtype=self.dtype, device=device)
        if self.sequential and not self.batch_first:
            var.t_()
        var = var.contiguous()
        if self.include_lengths:
            return var, lengths
        return var

    def process(self, batch, device=None):
        padded = self.pad(batch)
        return self.numericalize(padded, device=device)


class NestedField(Field):
    def __init__(self, nesting_field, include_lengths=False, pad_token="<pad>"):
        super(NestedField, self).__init__(include_lengths=include_lengths, pad_token=pad_token)
        self.nesting_field = nesting_field

    def preprocess(self, xs):
        return [self.nesting_field.preprocess(x) for x in super(NestedField, self).preprocess(xs)]

    def pad(self, minibatch):
        minibatch = list(minibatch)
        old_fix_len = self.nesting_field.fix_length
        self.nesting_field.fix_length = max(len(w) for ex in minibatch for w in ex)
        old_pad_token = self.pad_token
        self.pad_token = [self.pad_token] * self.nesting_field.fix_length
        old_include_lengths = self.include_lengths
        self.include_lengths = True
        self.nesting_field.include_lengths = True
        padded, sentence_lengths = super(NestedField, self).pad(minibatch)
        padded_with_lengths = [self.nesting_field.pad(ex) for ex in padded]
        word_lengths = []
        final_padded = []
        max_sen_len = len(padded[0])
        for (pad, lens), sentence_len in zip(padded_with_lengths, sentence_lengths):
            if sentence_len != max_sen_len:
                lens[-(max_sen_len - sentence_len):] = [0] * (max_sen_len - sentence_len)
                pad[-(max_sen_len - sentence_len):] = [self.pad_token] * (max_sen_len - sentence_len)
            word_lengths.append(lens)
            final_padded.append(pad)
        self.nesting_field.fix_length = old_fix_len
        self.pad_token = old_pad_token
        self.include_lengths = old_include_lengths
        if self.include_lengths:
            return final_padded, sentence_lengths, word_lengths
        return final_padded

    def build_vocab(self, *sources):
        self.nesting_field.build_vocab(*[ex for src in sources for ex in src])
        self.vocab = self.nesting_field.vocab

    def numericalize(self, arrs, device=None):
        numericalized = []
        self.nesting_field.include_lengths = False
        if self.include_lengths:
            arrs, sentence_lengths, word_lengths = arrs

        for arr in arrs:
            numericalized_ex = self.nesting_field.numericalize(
                arr, device=device)
            numericalized.append(numericalized_ex)
        padded_batch = torch.stack(numericalized)

        self.nesting_field.include_lengths = True
        if self.include_lengths:
            sentence_lengths = \
                torch.tensor(sentence_lengths, dtype=self.dtype, device=device)
            word_lengths = torch.tensor(word_lengths, dtype=self.dtype, device=device)
            return (padded_batch, sentence_lengths, word_lengths)
        return padded_batch


class Iterator:
    def __init__(self, examples, field, batch_size, device=None):
        self.examples, self.field, self.batch_size, self.device = examples, field, batch_size, device

    def __iter__(self):
        for i in range(0, len(self.examples), self.batch_size):
            yield self.field.process(self.examples[i:i + self.batch_size], device=self.device)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    CHAR_NESTING = Field(tokenize=list)
    CHARS = NestedField(CHAR_NESTING, include_lengths=True)
    texts = ["the cat sat", "a dog", "pytorch text fields nest characters"]
    examples = [CHARS.preprocess(t) for t in texts]
    CHARS.build_vocab(examples)
    for chars, sentence_lengths, word_lengths in Iterator(examples, CHARS, batch_size=2, device=device):
        print(tuple(chars.shape), sentence_lengths.tolist(), word_lengths.tolist())
