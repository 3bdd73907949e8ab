# source: https://github.com/IINemo/lm-polygraph/pull/380
# fixed twin: commit 997598d (merged as f880479, "Put encoded tensors to correct device") moves both encodings in
#             calculate_semantic_matrix with .to(deberta.device).
import itertools

import numpy as np
import torch
import torch.nn as nn
from tqdm import tqdm
from transformers import DebertaForSequenceClassification, DebertaTokenizer


# --- lm_polygraph/utils/deberta.py ---
class Deberta:
    def __init__(self, deberta_path: str = "microsoft/deberta-large-mnli", batch_size: int = 10,
                 device: str = None, hf_cache: str = None):
        self.deberta_path = deberta_path
        self.batch_size = batch_size
        self._deberta = None
        self._deberta_tokenizer = None
        if device is None:
            self.device = "cuda:0" if torch.cuda.is_available() else "cpu"
        else:
            self.device = device
        self.hf_cache = hf_cache
        self.setup()

    @property
    def deberta(self):
        if self._deberta is None:
            self.setup()
        return self._deberta

    @property
    def deberta_tokenizer(self):
        if self._deberta_tokenizer is None:
            self.setup()
        return self._deberta_tokenizer

    def setup(self):
        if self._deberta is not None:
            return
        self._deberta = DebertaForSequenceClassification.from_pretrained(
            self.deberta_path, problem_type="multi_label_classification", cache_dir=self.hf_cache)
        self._deberta_tokenizer = DebertaTokenizer.from_pretrained(self.deberta_path, cache_dir=self.hf_cache)
        self._deberta.to(self.device)
        self._deberta.eval()


# --- lm_polygraph/stat_calculators/greedy_semantic_matrix.py ---
class BaseGreedySemanticMatrixCalculator:
    def __init__(self, nli_model):
        self.is_deberta_setup = False
        self.nli_model = nli_model

    def calculate_semantic_matrix(self, batch_pairs, batch_invs):
        deberta = self.nli_model
        deberta_batch_size = deberta.batch_size
        ent_id = deberta.deberta.config.label2id["ENTAILMENT"]
        contra_id = deberta.deberta.config.label2id["CONTRADICTION"]
        neutral_id = deberta.deberta.config.label2id["NEUTRAL"]
        softmax = nn.Softmax(dim=1)
        tokenizer = deberta.deberta_tokenizer

        E_tensors, N_tensors, C_tensors = [], [], []
        with torch.no_grad():
            for i, pairs in enumerate(batch_pairs):
                dl = torch.utils.data.DataLoader(pairs, batch_size=deberta_batch_size)
                probs_f = []
                probs_b = []
                for first_texts, second_texts in tqdm(dl):
                    batch = list(zip(first_texts, second_texts))
                    encoded = tokenizer.batch_encode_plus(batch, padding=True, return_tensors="pt").to(deberta.device)
                    logits = deberta.deberta(**encoded).logits
                    probs_f.append(softmax(logits))

                    batch = list(zip(second_texts, first_texts))
                    encoded = tokenizer.batch_encode_plus(batch, padding=True, return_tensors="pt").to(deberta.device)
                    logits = deberta.deberta(**encoded).logits
                    probs_b.append(softmax(logits))

                probs_f = torch.cat(probs_f, dim=0)
                probs_b = torch.cat(probs_b, dim=0)
                inv = batch_invs[i]
                E_tensors.append((probs_f[:, ent_id][inv] + probs_b[:, ent_id][inv]) / 2)
                N_tensors.append((probs_f[:, neutral_id][inv] + probs_b[:, neutral_id][inv]) / 2)
                C_tensors.append((probs_f[:, contra_id][inv] + probs_b[:, contra_id][inv]) / 2)

            E = torch.stack(E_tensors).cpu().numpy()
            N = torch.stack(N_tensors).cpu().numpy()
            C = torch.stack(C_tensors).cpu().numpy()
        return E, N, C


class GreedySemanticMatrixCalculator(BaseGreedySemanticMatrixCalculator):
    def __call__(self, dependencies, texts, model=None, max_new_tokens: int = 100):
        batch_texts = dependencies["sample_texts"]
        batch_greedy_texts = dependencies["greedy_texts"]
        batch_pairs = []
        batch_invs = []
        for texts, greedy_text in zip(batch_texts, batch_greedy_texts):
            # score each unique sample once
            unique_texts, inv = np.unique(texts, return_inverse=True)
            batch_pairs.append(list(itertools.product([greedy_text], unique_texts)))
            batch_invs.append(inv)
        E, N, C = self.calculate_semantic_matrix(batch_pairs, batch_invs)
        return {"greedy_semantic_matrix_entail": E, "greedy_semantic_matrix_neutral": N,
                "greedy_semantic_matrix_contra": C}


# --- an estimation run (driver) ---
if __name__ == "__main__":
    nli_model = Deberta(batch_size=4)
    calculator = GreedySemanticMatrixCalculator(nli_model)
    dependencies = {
        "greedy_texts": ["Paris is the capital of France.", "Water boils at 100 degrees."],
        "sample_texts": [["Paris is the capital of France.", "The capital of France is Lyon.", "Paris."],
                         ["Water boils at 100 degrees Celsius.", "It boils at 90 degrees.", "At 100 C."]],
    }
    stats = calculator(dependencies, texts=["What is the capital of France?", "When does water boil?"])
    print({k: v.shape for k, v in stats.items()})
