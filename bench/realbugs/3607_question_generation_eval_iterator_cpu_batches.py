# source: https://github.com/gauthierdmn/question_generation/issues/9
# error: RuntimeError: Expected object of backend CUDA but got backend CPU for argument #3 'index'
#        (eval.py line 81, pred = model(sentence, len_sentence, answer=answer) -> Encoder -> Embedding.w_embed)
# bug: eval.py moves the Seq2Seq model to device = "cuda" (config.cuda = True) but builds its test_dataloader as a
#      torchtext data.BucketIterator without device=, which creates the batch tensors on the CPU (torchtext's
#      Iterator docstring: "If left as default, the tensors will be created on cpu. Default: None"); train.py passes
#      device=device to its iterators and moves batch.src with .to(device), eval.py moves only batch.feat, so the CPU
#      sentence indices meet the CUDA word embedding. The issue is open and the code unchanged at the head; the line
#      of the traceback is marked (DL203). Reductions: config.py's values are inlined (sizes reduced); utils.py's
#      spaCy word_tokenize becomes a whitespace split; DataPreprocessor keeps generate_fields (upstream's three
#      Fields) and generate_vocabs, while its load_data and generate_data stand-ins build the examples as
#      MaxlenTranslationDataset does but from two in-file "word￨feature" lines instead of the saved .pt files and
#      the dev split's files, with random source vectors in place of GloVe; preprocess/save_data are dropped;
#      the Decoder (attention, top-k/top-p and beam decoding) is cut to a greedy projection of the encoder output;
#      loading model.pkl is dropped. torchtext's legacy data API (absent here) is imported as upstream, so the file
#      does not run on this machine.
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from torchtext import data

# --- config.py ---
out_dir = "/Users/gdamien/Data/qg/"
glove = "/Users/gdamien/Data/glove.6B/"
paragraph = False
max_len_context = 100 if not paragraph else 1000
max_len_question = 20
word_embedding_size = 8
answer_embedding_size = 2
in_vocab_size = 45000
out_vocab_size = 28000
hidden_size = 16
n_layers = 1
use_answer = True
cuda = True
eval_batch_size = 1


# --- utils.py ---
def word_tokenize(text):
    return text.split()


def feature_tokenize(text, f_sep=u"￨"):
    return [t.split(f_sep)[0] for t in text.split()], [t.split(f_sep)[1] for t in text.split()]


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


# --- preprocessing.py ---
SOS_WORD = '<SOS>'
EOS_WORD = '<EOS>'
PAD_WORD = '<PAD>'

# stand-in for the lines of "<out_dir>/dev.sentence" / "dev.question" (tokens with their answer feature, as
# make_dataset.py writes them)
split_lines = [(u"the￨0 cat￨0 sat￨0 on￨1 the￨1 mat￨1", "where did the cat sit"),
               (u"paris￨1 is￨0 in￨0 france￨0", "what is in france")]


class DataPreprocessor(object):
    def __init__(self):
        self.src_field, self.trg_field, self.src_feat_field = self.generate_fields()

    def load_data(self, train_file, val_file, glove_dir):
        # Stand-in: the saved train/dev examples are rebuilt from split_lines; random vectors replace GloVe
        train_dataset = self.generate_data(train_file, "sentence", "question", max_len=max_len_context)
        val_dataset = self.generate_data(val_file, "sentence", "question", max_len=max_len_context)

        # Building field vocabulary
        self.src_field.build_vocab(train_dataset, max_size=in_vocab_size)
        self.trg_field.build_vocab(train_dataset, max_size=out_vocab_size)
        self.src_feat_field.build_vocab(train_dataset, max_size=out_vocab_size)
        self.src_field.vocab.set_vectors(self.src_field.vocab.stoi,
                                         torch.randn(len(self.src_field.vocab), word_embedding_size),
                                         word_embedding_size)

        src_vocab, trg_vocab, src_feat_vocab = self.generate_vocabs()
        vocabs = {'src_vocab': src_vocab, 'trg_vocab': trg_vocab, 'src_feat_vocab': src_feat_vocab}

        return train_dataset, val_dataset, vocabs

    def generate_fields(self):
        src_field = data.Field(tokenize=word_tokenize,
                               init_token=SOS_WORD,
                               eos_token=EOS_WORD,
                               pad_token=PAD_WORD,
                               include_lengths=True,
                               batch_first=True,
                               fix_length=max_len_context)

        trg_field = data.Field(tokenize=word_tokenize,
                               init_token=SOS_WORD,
                               eos_token=EOS_WORD,
                               pad_token=PAD_WORD,
                               include_lengths=True,
                               batch_first=True,
                               fix_length=max_len_question)

        src_feat_field = data.Field(tokenize=word_tokenize,
                                    pad_token=PAD_WORD,
                                    include_lengths=False,
                                    batch_first=True,
                                    fix_length=max_len_context)

        return src_field, trg_field, src_feat_field

    def generate_data(self, data_path, src_lang, trg_lang, max_len=None):
        # Stand-in for MaxlenTranslationDataset(path=data_path, exts=('.' + src_lang, '.' + trg_lang), ...):
        # its per-line example building, over split_lines instead of the two files
        fields = [('src', self.src_field), ('trg', self.trg_field), ('feat', self.src_feat_field)]
        examples = []
        for src_line, trg_line in split_lines:
            src_line, feat_line = feature_tokenize(src_line)
            trg_line = trg_line.split(' ')
            if max_len is not None:
                src_line = str(' '.join(src_line[:max_len]))
                trg_line = str(' '.join(trg_line[:max_len]))
                feat_line = str(' '.join(feat_line[:max_len]))
            if src_line != '' and trg_line != '':
                examples.append(data.Example.fromlist([src_line, trg_line, feat_line], fields))

        return data.Dataset(examples, fields)

    def generate_vocabs(self):
        src_vocab = self.src_field.vocab
        trg_vocab = self.trg_field.vocab
        src_feat_vocab = self.src_feat_field.vocab

        return src_vocab, trg_vocab, src_feat_vocab


# --- eval.py ---
device = torch.device("cuda" if cuda else "cpu")
torch.manual_seed(42)

# Preprocess the data
dp = DataPreprocessor()
_, _, vocabs = dp.load_data(os.path.join(out_dir, "train-dataset.pt"),
                            os.path.join(out_dir, "dev-dataset.pt"),
                            glove)

# Load the data into datasets of mini-batches
ext = "sentence" if not paragraph else "context"
test_dataset = dp.generate_data(os.path.join(out_dir, "dev"), ext,
                                "question", max_len=max_len_context)

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
