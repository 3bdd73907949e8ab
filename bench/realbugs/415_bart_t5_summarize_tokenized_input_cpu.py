# source: https://github.com/renatoviolin/Bart_T5-summarization/issues/2
# error: RuntimeError: Expected object of device type cuda but got device type cpu for argument #3 'index' in call to _th_index_select
# bug: the summarisation app moves both pretrained models to the GPU at start-up, but the
#      summarise functions hand generate() the token ids straight from tokenizer.encode(...,
#      return_tensors="pt"), i.e. CPU tensors (and T5's task prefix is a CPU torch.tensor too).
#      Commit 064dae5 appends .to(device) to the encoded inputs, the prefix and the concatenation.
import torch
from transformers import BartForConditionalGeneration, BartTokenizer, T5ForConditionalGeneration, T5Tokenizer

BART_PATH = "facebook/bart-large-cnn"
T5_PATH = "t5-base"

bart_model = BartForConditionalGeneration.from_pretrained(BART_PATH)
bart_tokenizer = BartTokenizer.from_pretrained(BART_PATH)
t5_model = T5ForConditionalGeneration.from_pretrained(T5_PATH)
t5_tokenizer = T5Tokenizer.from_pretrained(T5_PATH)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def bart_summarize(input_text, num_beams=4, num_words=50):
    input_text = " ".join(str(input_text).split())
    input_tokenized = bart_tokenizer.encode(input_text, return_tensors="pt")  # expect: DL203
    summary_ids = bart_model.generate(input_tokenized, num_beams=int(num_beams), no_repeat_ngram_size=3,
                                      length_penalty=2.0, min_length=30, max_length=int(num_words),
                                      early_stopping=True)
    return [bart_tokenizer.decode(g, skip_special_tokens=True) for g in summary_ids][0]


def t5_summarize(input_text, num_beams=4, num_words=50):
    input_text = " ".join(str(input_text).replace("\n", "").split())
    input_tokenized = t5_tokenizer.encode(input_text, return_tensors="pt")  # expect: DL203
    summary_task = torch.tensor([[21603, 10]])  # expect: DL203
    input_tokenized = torch.cat([summary_task, input_tokenized], dim=-1)  # expect: DL203
    summary_ids = t5_model.generate(input_tokenized, num_beams=int(num_beams), no_repeat_ngram_size=3,
                                    length_penalty=2.0, min_length=30, max_length=int(num_words),
                                    early_stopping=True)
    return [t5_tokenizer.decode(g, skip_special_tokens=True) for g in summary_ids][0]


if __name__ == "__main__":
    bart_model.to(device)
    bart_model.eval()
    t5_model.to(device)
    t5_model.eval()
    text = "The quick brown fox jumps over the lazy dog. " * 20
    print(bart_summarize(text))
    print(t5_summarize(text))
