# source: https://github.com/ProjectDossier/cruise-screening/pull/100
# fixed twin: PR #100 (commit 100849a) converts do_faiss_lookup's query vector with .cpu().detach().numpy(), and
#             PR #118 (commit 963a012) does the same for create_faiss_index's collection embeddings.
from os.path import exists

import faiss
import numpy as np
import torch
from transformers import AutoTokenizer, AutoModel


# --- concept_search/faiss_search.py ---
class SemanticSearch:
    def __init__(self, data: list, tax_name: str):
        model_name = "allenai/scibert_scivocab_cased"
        self.model = AutoModel.from_pretrained(model_name, output_hidden_states=True).eval()
        self.tokenizer = AutoTokenizer.from_pretrained(model_name, model_max_length=16)
        self.device = "cuda:0" if torch.cuda.is_available() else "cpu"
        self.model = self.model.to(self.device)
        self.n_dimensions = self.model.pooler.dense.out_features
        self.data = data

        index_path = "../../data/processed/Taxonomy{}index.bin".format(tax_name)
        if exists(index_path):
            self.taxonomy_index = faiss.read_index(index_path)
        else:
            self.taxonomy_index = self.create_faiss_index()
            try:
                faiss.write_index(faiss.index_gpu_to_cpu(self.taxonomy_index), index_path)
            except AttributeError:
                faiss.write_index(self.taxonomy_index, index_path)
        try:
            res = faiss.StandardGpuResources()
            self.taxonomy_index = faiss.index_cpu_to_gpu(res, 0, self.taxonomy_index)
        except AttributeError:
            pass

    def embedding(self, word: str):
        model = self.model
        tokenizer = self.tokenizer
        word = [word] if word.__class__ != list else word
        marked_text = ["[CLS] " + i + " [SEP]" for i in word]
        tokenized_text = [tokenizer.tokenize(i, padding="max_length", truncation=True) for i in marked_text]
        tokenized_text_ = [tokenizer.tokenize(i, padding=False, truncation=True) for i in marked_text]
        wordpiece_vectors = [len(i) - 1 for i in tokenized_text_]
        indexed_tokens = [tokenizer.convert_tokens_to_ids(i) for i in tokenized_text]
        tokens_tensor = torch.tensor([indexed_tokens]).squeeze(0)

        with torch.no_grad():
            outputs = model(tokens_tensor.to(self.device))
            hidden_states = outputs["hidden_states"]

        token_embeddings = torch.stack(hidden_states, dim=0)
        token_embeddings = torch.squeeze(token_embeddings, dim=1)
        try:
            token_embeddings = token_embeddings.permute(1, 2, 0, 3)
        except RuntimeError:
            token_embeddings = token_embeddings.unsqueeze(0).permute(0, 2, 1, 3)

        out = []
        for item, wordpiece_vector in zip(token_embeddings, wordpiece_vectors):
            token_vecs_sum = []
            for token in item:
                sum_vec = torch.sum(token[-4:], dim=0)
                token_vecs_sum.append(sum_vec)
            out_i = torch.stack(token_vecs_sum[1:wordpiece_vector], dim=-1)
            out_i = out_i.mean(dim=-1)
            out.append(out_i)
        return torch.stack(out)

    def create_faiss_index(self):
        fastIndex = faiss.IndexFlatL2(self.n_dimensions)
        try:
            res = faiss.StandardGpuResources()
            fastIndex = faiss.index_cpu_to_gpu(res, 0, fastIndex)
        except AttributeError:
            pass
        embeddings = self.embedding(self.data).cpu().detach().numpy()
        fastIndex.add(np.stack(embeddings).astype("float32"))
        return fastIndex

    def do_faiss_lookup(self, text):
        vector = self.embedding(text).cpu().detach().numpy().astype("float32")
        score, index = self.taxonomy_index.search(vector, 1)
        return self.data[index[0][0]], score


# --- concept_search/taxonomy.py (TaxonomyCCS's use, as the driver) ---
if __name__ == "__main__":
    concept_list = ["machine learning", "information retrieval", "computer vision"]
    semantic_search = SemanticSearch(data=concept_list, tax_name="CCS").do_faiss_lookup
    print(semantic_search("neural ranking"))
