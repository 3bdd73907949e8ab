# source: https://github.com/gauthierdmn/question_generation/issues/9
# error: RuntimeError: Expected object of backend CUDA but got backend CPU for argument #3 'index'
#        (eval.py line 81, pred = model(sentence, len_sentence, answer=answer) -> Encoder -> Embedding.w_embed)
# bug: eval.py moves the Seq2Seq model to device = "cuda" (config.cuda = True) but builds its test_dataloader as a
#      torchtext data.BucketIterator without device=, which creates the batch tensors on the CPU (torchtext's
#      Iterator docstring: "If left as default, the tensors will be created on cpu. Default: None"); train.py passes
#      device=device to its iterators and moves batch.src with .to(device), eval.py moves only batch.feat, so the CPU
#      sentence indices meet the CUDA word embedding. The issue is open and the code unchanged at the head; the line
#      of the traceback is marked (DL203). Reductions: config.py's values are inlined; DataPreprocessor's SQuAD
#      files, GloVe vectors and MaxlenTranslationDataset become three torchtext Fields over two in-file examples
#      (answer features as upstream's feat field); the Decoder (attention, top-k/top-p and beam decoding) is cut
#      to a greedy projection of the encoder output; loading model.pkl is dropped. torchtext's legacy data API
#      (absent here) is imported as upstream, so the file does not run on this machine.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from torchtext import data

# --- config.py ---
answer_embedding_size = 2
eval_batch_size = 1
hidden_size = 16
n_layers = 1
cuda = True
use_answer = True


# --- layers.py ---
class Embedding(nn.Module):
    def __init__(self, word_vectors, padding_idx, drop_prob):
        super(Embedding, self).__init__()
        self.drop_prob = drop_prob
        self.w_embed = nn.Embedding.from_pretrained(word_vectors, padding_idx=padding_idx, freeze=False)
        self.f_embed = nn.Embedding(4, answer_embedding_size, padding_idx=padding_idx)

    def forward(self, x, y=None):
        emb = self.w_embed(x)
        if y is not None:
            f_emb = self.f_embed(y)
            emb = torch.cat((emb, f_emb), dim=-1)
        emb = F.dropout(emb, self.drop_prob, self.training)
        return emb


class Encoder(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, word_vectors, bidirectional, drop_prob=0.):
        super(Encoder, self).__init__()
        num_directions = 2 if bidirectional else 1
        hidden_size = hidden_size // num_directions
        self.embedding = Embedding(word_vectors, padding_idx=1, drop_prob=drop_prob)
        self.rnn = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, bidirectional=bidirectional)

    def forward(self, x, lengths, y=None):
        x = self.embedding(x, y)
        x = pack_padded_sequence(x, lengths, batch_first=True)
        x, (hidden, cell) = self.rnn(x)
        x, _ = pad_packed_sequence(x, batch_first=True)
        return x, (hidden, cell)


# --- model.py ---
class Seq2Seq(nn.Module):
    def __init__(self, in_vocab, hidden_size, n_layers, trg_vocab, device, drop_prob=0., use_answer=True):
        super(Seq2Seq, self).__init__()
        self.enc = Encoder(input_size=in_vocab.vectors.size(1) if not use_answer else in_vocab.vectors.size(1) +
                           answer_embedding_size,
                           hidden_size=hidden_size, num_layers=n_layers, word_vectors=in_vocab.vectors,
                           bidirectional=True, drop_prob=drop_prob if n_layers > 1 else 0.)
        self.dec = nn.Linear(hidden_size, len(trg_vocab.itos))

    def forward(self, sentence, sentence_len, question=None, answer=None):
        enc_output, enc_hidden = self.enc(sentence, sentence_len, answer)
        return self.dec(enc_output)[0].argmax(-1).tolist()


# --- preprocessing.py (DataPreprocessor's fields) ---
src_field = data.Field(batch_first=True, include_lengths=True, lower=True)
trg_field = data.Field(batch_first=True, include_lengths=True, lower=True, init_token="<sos>", eos_token="<eos>")
src_feat_field = data.Field(batch_first=True, sequential=True, use_vocab=False, pad_token=1)
fields = [('src', src_field), ('trg', trg_field), ('feat', src_feat_field)]
examples = [data.Example.fromlist(["the cat sat on the mat".split(), "where did the cat sit".split(),
                                   [0, 0, 0, 2, 3, 3]], fields),
            data.Example.fromlist(["paris is in france".split(), "where is paris".split(), [0, 0, 2, 3]], fields)]
test_dataset = data.Dataset(examples, fields)
src_field.build_vocab(test_dataset)
trg_field.build_vocab(test_dataset)
src_field.vocab.set_vectors(src_field.vocab.stoi, torch.randn(len(src_field.vocab), 8), 8)

# --- eval.py ---
device = torch.device("cuda" if cuda else "cpu")
torch.manual_seed(42)
vocabs = {"src_vocab": src_field.vocab, "trg_vocab": trg_field.vocab}

test_dataloader = data.BucketIterator(test_dataset,
                                      batch_size=eval_batch_size,
                                      sort_key=lambda x: len(x.sentence),
                                      shuffle=False)

model = Seq2Seq(in_vocab=vocabs["src_vocab"], hidden_size=hidden_size, n_layers=n_layers,
                trg_vocab=vocabs['trg_vocab'], device=device, use_answer=use_answer)
model.to(device)

model.eval()
with torch.no_grad():
    for i, batch in enumerate(test_dataloader):
        sentence, len_sentence, question = batch.src[0], batch.src[1], batch.trg[0]
        answer = batch.feat.to(device) if use_answer else None
        pred = model(sentence, len_sentence, answer=answer)  # expect: DL203
        pred = [vocabs["trg_vocab"].itos[i] for i in pred if vocabs["trg_vocab"].itos[i]]
        print(" ".join(pred[1:]))
