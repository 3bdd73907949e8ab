# source: https://github.com/grammarly/gector/issues/59
# error: RuntimeError: Expected object of device type cuda but got device type cpu (predicting with the model on the CPU)
# bug: the tagger's forward adds its confidence bias to the label probabilities as a
#      torch.cuda.FloatTensor, so the bias is always made on the GPU (or fails without one) while the
#      probabilities follow the model, which runs on the CPU at prediction time. The fix (gector
#      commit 48295fb, "make predict run on CPU") builds the bias on the CPU and moves it to the
#      probabilities' device.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Seq2Labels(nn.Module):
    def __init__(self, vocab=100, dim=16, num_labels_classes=5, num_detect_classes=4, confidence=0.2):
        super().__init__()
        self.num_labels_classes = num_labels_classes
        self.num_detect_classes = num_detect_classes
        self.confidence = confidence
        self.incorr_index = 1
        self.embedder = nn.Embedding(vocab, dim)
        self.tag_labels_projection_layer = nn.Linear(dim, num_labels_classes)
        self.tag_detect_projection_layer = nn.Linear(dim, num_detect_classes)

    def forward(self, tokens, mask):
        encoded_text = self.embedder(tokens)
        batch_size, sequence_length, _ = encoded_text.size()
        logits_labels = self.tag_labels_projection_layer(encoded_text)
        logits_d = self.tag_detect_projection_layer(encoded_text)
        class_probabilities_labels = F.softmax(logits_labels, dim=-1).view(
            [batch_size, sequence_length, self.num_labels_classes])
        class_probabilities_d = F.softmax(logits_d, dim=-1).view(
            [batch_size, sequence_length, self.num_detect_classes])
        error_probs = class_probabilities_d[:, :, self.incorr_index] * mask
        incorr_prob = torch.max(error_probs, dim=-1)[0]
        if self.confidence > 0:
            probability_change = [self.confidence] + [0] * (self.num_labels_classes - 1)
            class_probabilities_labels += torch.cuda.FloatTensor(probability_change).repeat(  # expect: DL306
                (batch_size, sequence_length, 1))
        return {"class_probabilities_labels": class_probabilities_labels, "max_error_probability": incorr_prob}


def predict_for_sentences(model, batches):
    model.eval()
    with torch.no_grad():
        return [model(tokens, mask)["max_error_probability"] for tokens, mask in batches]


if __name__ == "__main__":
    model = Seq2Labels().cpu()
    batches = [(torch.randint(0, 100, (2, 7)), torch.ones(2, 7))]
    print(predict_for_sentences(model, batches))
