# source: https://github.com/CannyLab/summary_loop/pull/15
# error: (PR description) "When attempting to train with --device set to cpu, torch.load may attempt to load a file
#        with GPU tensors ... If --device is set to cpu, this will error on a cpu-only machine" (PyTorch's "Attempting to
#        deserialize object on a CUDA device but torch.cuda.is_available() is False")
# bug: train_summary_loop.py takes --device (default "cuda") and builds its summarizer and fluency scorer as
#      GeneTransformer(..., device=args.device, starter_model=...); GeneTransformer moves its GPT-2 to that device and
#      then reload() restores the starter weights, released as GPU-saved state dicts, with a bare torch.load, so the
#      CPU run fails before training. The PR (open; the repository unchanged) adds map_location to every torch.load;
#      of those, the one in GeneTransformer.reload is in this reproduction and marked (DL301); the others (the coverage
#      model's reload and the checkpoint resume in train_summary_loop.py) are dropped with their code. Reductions:
#      transformers' GPT2LMHeadModel/GPT2Config are a one-layer stand-in with the same names and call shape, the GPT-2
#      tokenizer is a byte tokenizer; train_batch, the scorers and the training loop are dropped; the driver writes
#      the starter model from wherever it runs (the bug needs it written on a GPU) and builds the summarizer with
#      --device cpu.
import argparse
import os
import tempfile

import torch
import torch.utils.data.dataset


class GPT2Config:
    def __init__(self, vocab_size=256, n_embd=32):
        self.vocab_size, self.n_embd = vocab_size, n_embd

    @classmethod
    def from_pretrained(cls, name):
        return cls()


class GPT2LMHeadModel(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.transformer = torch.nn.Embedding(config.vocab_size, config.n_embd)
        self.lm_head = torch.nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, input_ids, past_key_values=None):
        hidden = self.transformer(input_ids)
        return self.lm_head(hidden), hidden


class GPT2Tokenizer:
    def __init__(self):
        self.vocab_size, self.start_id, self.end_id = 256, 1, 2

    def encode(self, text):
        return list(text.encode("utf-8"))


def pad(data, padval=0):
    return torch.nn.utils.rnn.pad_sequence(data, batch_first=True, padding_value=padval)


class GeneTransformer:
    def __init__(self, max_output_length=25, max_input_length=300, device='cpu', tokenizer_type='gpt2', bpe_model="",
                 starter_model=None):
        if tokenizer_type == "gpt2":
            self.tokenizer = GPT2Tokenizer()
            config = GPT2Config.from_pretrained("gpt2")
        else:
            print("Tokenizer unrecognized. Should be gpt2 or bpecap.")
            exit()

        self.model = GPT2LMHeadModel(config)

        self.model.to(device)
        self.device = device
        if starter_model is not None:
            self.reload(starter_model)

        self.max_output_length = max_output_length
        self.max_input_length = max_input_length

        self.model.train()
        self.mode = "train"

    def reload(self, from_file):
        print(self.model.load_state_dict(torch.load(from_file), strict=False))  # expect: DL301

    def save(self, to_file):
        torch.save(self.model.state_dict(), to_file)

    def preprocess_input(self, bodies, special_append=None):
        if special_append is None:
            special_append = [[] for i in range(len(bodies))]
        inputs = [torch.LongTensor(spe + self.tokenizer.encode(body)) for body, spe in zip(bodies, special_append)]
        inputs = pad(inputs, padval=0)
        inputs = inputs[:, :self.max_input_length].to(self.device)
        return inputs


if __name__ == "__main__":
    models_folder = tempfile.mkdtemp()
    summarizer_model_start = os.path.join(models_folder, "gpt2_copier23.bin")
    GeneTransformer(device="cuda" if torch.cuda.is_available() else "cpu").save(summarizer_model_start)

    parser = argparse.ArgumentParser()
    parser.add_argument("--experiment", type=str, required=True)
    parser.add_argument("--max_output_length", type=int, default=25)
    parser.add_argument("--device", type=str, default="cuda", help="cuda or cpu")
    args = parser.parse_args(["--experiment", "cpu_run", "--device", "cpu"])

    summarizer = GeneTransformer(max_output_length=args.max_output_length, device=args.device, tokenizer_type='gpt2',
                                 starter_model=summarizer_model_start)
    print(summarizer.model(summarizer.preprocess_input(["a short news body"]))[0].shape)
