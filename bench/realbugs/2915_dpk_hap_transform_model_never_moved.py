# source: https://github.com/data-prep-kit/data-prep-kit/issues/1047
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!
#        (when checking argument for argument index in method wrapper_CUDA__index_select) (pytest test/test_hap.py
#        on a machine with a GPU)
# bug: the HAP transform module picks device = "cuda:0" if torch.cuda.is_available() else "cpu" at import and
#      _apply_model moves every tokenized batch there (self.tokenizer(...).to(device)), but __init__ loads the
#      classifier with from_pretrained and never moves it, so on a GPU machine the CPU model's embedding lookup gets
#      CUDA token ids. The issue is closed; the reporter proposes .to(device) on the model load (line 41), a
#      maintainer an if-block after it, and which change landed is not in the stored text (no twin). The model call
#      where the CPU weights meet the moved batch is marked (DL201). The Hugging Face classes are small stand-ins
#      with the same from_pretrained calls; the pyarrow table and nltk sentence split are reduced to lists.
import torch
import torch.nn as nn

device = "cuda:0" if torch.cuda.is_available() else "cpu"


class BatchEncoding(dict):
    def to(self, device):
        return BatchEncoding({k: v.to(device) for k, v in self.items()})


class AutoTokenizer:
    @classmethod
    def from_pretrained(cls, name):
        return cls()

    def __call__(self, texts, max_length=512, padding=True, truncation=True, return_tensors="pt"):
        ids = [[(sum(map(ord, w)) % 997) + 3 for w in t.split()][:max_length] for t in texts]
        width = max(len(x) for x in ids)
        input_ids = torch.tensor([x + [0] * (width - len(x)) for x in ids])
        return BatchEncoding(input_ids=input_ids, attention_mask=(input_ids != 0).long())


class SequenceClassifierOutput:
    def __init__(self, logits):
        self.logits = logits


class AutoModelForSequenceClassification(nn.Module):
    def __init__(self, vocab=1000, dim=32, num_labels=2):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, dim)
        self.classifier = nn.Linear(dim, num_labels)

    @classmethod
    def from_pretrained(cls, name):
        return cls()

    def forward(self, input_ids, attention_mask):
        h = self.embeddings(input_ids) * attention_mask.unsqueeze(-1)
        return SequenceClassifierOutput(self.classifier(h.sum(1) / attention_mask.sum(1, keepdim=True)))


class HAPTransform:
    def __init__(self, config):
        self.model_name_or_path = config.get("model_name_or_path", "ibm-granite/granite-guardian-hap-38m")
        self.max_length = config.get("max_length", 512)
        self.batch_size = config.get("batch_size", 128)
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_name_or_path)
        self.model = AutoModelForSequenceClassification.from_pretrained(self.model_name_or_path)

    def _apply_model(self, data, batch_size):
        num_batches = len(data) // batch_size
        data_sent_scores = []
        for i in range(num_batches + 1):
            start_idx = i * batch_size
            end_idx = min((i + 1) * batch_size, len(data))
            if start_idx >= end_idx:
                continue
            inputs = self.tokenizer(data[start_idx:end_idx], max_length=self.max_length, padding=True, truncation=True,
                                    return_tensors="pt").to(device)
            with torch.no_grad():
                logits = self.model(**inputs).logits  # expect: DL201
                data_sent_scores.extend(torch.softmax(logits, dim=1).cpu()[:, 1].tolist())
        return data_sent_scores

    def _apply_sent_split(self, data):
        data_sents, data_sent_ids = [], []
        for i, e in enumerate(data):
            s_list = [s.strip() for s in e.split(".") if s.strip()]
            data_sents.extend(s_list)
            data_sent_ids.extend([i] * len(s_list))
        return data_sents, data_sent_ids

    def _apply_aggregate(self, nb_doc, sent_scores, sent_ids):
        return [max(score for idx, score in zip(sent_ids, sent_scores) if i == idx) for i in range(nb_doc)]

    def transform(self, docs):
        df_doc_list = [" ".join(text.strip().splitlines()) for text in docs]
        data_sents, data_sent_ids = self._apply_sent_split(df_doc_list)
        data_sent_scores = self._apply_model(data_sents, self.batch_size)
        return self._apply_aggregate(len(df_doc_list), data_sent_scores, data_sent_ids)


if __name__ == "__main__":
    torch.manual_seed(0)
    transform = HAPTransform({"batch_size": 2})
    print(transform.transform(["Hello world. This is fine.", "Another document here. With two sentences. Three."]))
