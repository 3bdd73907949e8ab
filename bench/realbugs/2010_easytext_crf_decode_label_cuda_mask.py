# source: https://github.com/cjopengler/easytext/pull/9
# error: RuntimeError: Expected all tensors to be on the same device (masked_select of the CPU label indices with the CUDA mask, at decode time)
# bug: the NER label decoder runs the CRF's Viterbi decoding on the model's (GPU) logits and mask;
#      the index decoder turns the best paths (Python lists) back into a tensor with torch.tensor,
#      on the CPU. decode_label then hands those CPU label indices together with the model's GPU
#      mask to the span decoder, whose masked_select mixes the two. The fix (PR 9, commit 1d0ff69,
#      issue 8) moves the mask and the label indices to the CPU in decode_label; the changed call is
#      marked (DL201: the operands of the masked_select it leads to live on different devices).
from typing import Dict, List

import torch
from torch import nn


class ConditionalRandomField(nn.Module):
    def __init__(self, num_tags):
        super().__init__()
        self.transitions = nn.Parameter(torch.randn(num_tags, num_tags))

    def viterbi_tags(self, logits, mask):
        paths = []
        for prediction, prediction_mask in zip(logits, mask):
            length = int(prediction_mask.sum())
            score, history = prediction[0], []
            for t in range(1, length):
                total = score.unsqueeze(1) + self.transitions
                score, best_prev = total.max(dim=0)
                score = score + prediction[t]
                history.append(best_prev)
            best = [int(score.argmax())]
            for best_prev in reversed(history):
                best.append(int(best_prev[best[-1]]))
            paths.append((best[::-1], float(score.max())))
        return paths


class CRFLabelIndexDecoder:
    def __init__(self, labels, crf):
        self._crf = crf
        self._labels = labels

    def __call__(self, logits, mask):
        sequence_length = logits.size(1)
        best_paths, _ = zip(*self._crf.viterbi_tags(logits=logits, mask=mask))
        label_indices = []
        for best_path in best_paths:
            best_path.extend([0] * (sequence_length - len(best_path)))
            label_indices.append(best_path)
        return torch.tensor(label_indices, dtype=torch.long)


class SequenceLabelDecoder:
    def __init__(self, labels):
        self._labels = labels

    def __call__(self, label_indices, mask) -> List[List[Dict]]:
        spans = []
        for sequence_label_index, mask1d in zip(label_indices, mask.bool()):
            indices = torch.masked_select(sequence_label_index, mask=mask1d).tolist()
            spans.append([{"label": self._labels[i], "begin": n} for n, i in enumerate(indices) if self._labels[i] != "O"])
        return spans


class NerCRFModelLabelDecoder:
    def __init__(self, labels):
        self._labels = labels
        self._label_index_decoder = None
        self._label_decoder = None

    def decode_label_index(self, model_outputs):
        if self._label_index_decoder is None:
            self._label_index_decoder = CRFLabelIndexDecoder(self._labels, crf=model_outputs["crf"])
        return self._label_index_decoder(logits=model_outputs["logits"].detach(), mask=model_outputs["mask"].detach())

    def decode_label(self, model_outputs, label_indices):
        if self._label_decoder is None:
            self._label_decoder = SequenceLabelDecoder(self._labels)
        return self._label_decoder(label_indices=label_indices, mask=model_outputs["mask"])  # expect: DL201


class NerModel(nn.Module):
    def __init__(self, vocab_size=30, num_tags=3):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, 8)
        self.classifier = nn.Linear(8, num_tags)
        self.crf = ConditionalRandomField(num_tags)

    def forward(self, tokens):
        mask = (tokens != 0).long()
        return {"logits": self.classifier(self.embedding(tokens)), "mask": mask, "crf": self.crf}


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = NerModel().to(device)
    tokens = torch.tensor([[3, 5, 7, 0], [2, 9, 0, 0]]).to(device)
    decoder = NerCRFModelLabelDecoder(["B-T", "I-T", "O"])
    with torch.no_grad():
        outputs = model(tokens)
        label_indices = decoder.decode_label_index(outputs)
        print(decoder.decode_label(outputs, label_indices))
