# source: https://github.com/flairNLP/flair/pull/666
# error: RuntimeError on a process whose flair device is cuda:1 (issue 464): the character LM's text
#        generation puts its inputs on cuda:0 while the model's weights are on cuda:1
# bug: the library keeps one global device that users may set to any GPU, and the character language
#      model is moved there when loaded; generate_text builds its prefix and next-character inputs on
#      the CPU and moves them with a bare .cuda() whenever a GPU exists, which means the current GPU
#      (cuda:0), not the configured one. The fix (PR 666, merge f01683d) replaces both guarded .cuda()
#      moves with .to(flair.device) (DL302: a hard-coded .cuda() in a model method; both marked lines
#      are the moves the fix rewrote).
import torch
import torch.nn as nn


class _Settings:
    device = torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")


settings = _Settings()


class CharLM(nn.Module):
    def __init__(self, vocab="\nabcdefghijklmnopqrstuvwxyz ", hidden_size=16):
        super().__init__()
        self.vocab = vocab
        self.hidden_size = hidden_size
        self.encoder = nn.Embedding(len(vocab), 8)
        self.rnn = nn.LSTM(8, hidden_size)
        self.decoder = nn.Linear(hidden_size, len(vocab))

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(1, bsz, self.hidden_size), weight.new_zeros(1, bsz, self.hidden_size))

    def forward(self, ids, hidden):
        out, hidden = self.rnn(self.encoder(ids), hidden)
        return self.decoder(out), out, hidden

    def idx(self, ch):
        return self.vocab.index(ch) if ch in self.vocab else 0

    def generate_text(self, prefix="\n", number_of_characters=20, temperature=1.0):
        with torch.no_grad():
            chars = []
            hidden = self.init_hidden(1)
            if len(prefix) > 1:
                char_tensors = [torch.tensor(self.idx(c)).unsqueeze(0).unsqueeze(0) for c in prefix[:-1]]
                input = torch.cat(char_tensors)
                if torch.cuda.is_available():
                    input = input.cuda()  # expect: DL302
                _, _, hidden = self.forward(input, hidden)
            input = torch.tensor(self.idx(prefix[-1])).unsqueeze(0).unsqueeze(0)
            log_prob = 0.0
            for _ in range(number_of_characters):
                if torch.cuda.is_available():
                    input = input.cuda()  # expect: DL302
                prediction, _, hidden = self.forward(input, hidden)
                prediction = prediction.squeeze().div(temperature)
                prediction -= prediction.max()
                word_idx = torch.multinomial(prediction.exp().cpu(), 1)[0]
                log_prob += float(prediction[word_idx])
                chars.append(self.vocab[word_idx])
                input = word_idx.detach().unsqueeze(0).unsqueeze(0)
            return prefix + "".join(chars), log_prob


def load_language_model():
    model = CharLM()
    model.to(settings.device)
    model.eval()
    return model


if __name__ == "__main__":
    if torch.cuda.device_count() > 1:
        settings.device = torch.device("cuda:1")
    lm = load_language_model()
    text, score = lm.generate_text("the cat ", 12)
    print(repr(text), round(score, 3))
