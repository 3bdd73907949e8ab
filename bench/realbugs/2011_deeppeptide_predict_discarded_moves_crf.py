# source: https://github.com/fteufel/DeepPeptide/issues/4
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (in model.feature_extractor, predict.py)
# bug: the prediction script picks the GPU when there is one and moves each checkpointed model
#      there, but (1) "moves" the padded embeddings and mask with embeddings.to(device) and
#      mask.to(device), discarding the results, so the batch stays on the CPU; and (2) builds the
#      ensemble CRF from the CPU checkpoints and never moves it, then decodes the device emissions
#      with the CPU mask. The fix (commit 2657f5d) assigns both moves, inserts crf.to(device) after
#      combine_crf and moves the mask in the decode call. Marked: the two discarded moves (DL101)
#      and the decode call (DL201: CPU mask and CPU CRF weights meet the device emissions; the
#      inserted crf.to(device) is counted on this line too).
import torch
import torch.nn as nn


class CRF(nn.Module):
    def __init__(self, num_states):
        super().__init__()
        self.transitions = nn.Parameter(torch.randn(num_states, num_states))
        self.start_transitions = nn.Parameter(torch.randn(num_states))
        self.end_transitions = nn.Parameter(torch.randn(num_states))

    def decode(self, emissions, mask, top_k=1):
        paths, llhs = [], []
        for em, m in zip(emissions, mask):
            length = int(m.sum())
            score, history = self.start_transitions + em[0], []
            for t in range(1, length):
                score, best_prev = (score.unsqueeze(1) + self.transitions + em[t].unsqueeze(0)).max(dim=0)
                history.append(best_prev)
            score = score + self.end_transitions
            path = [int(score.argmax())]
            for best_prev in reversed(history):
                path.append(int(best_prev[path[-1]]))
            paths.append(path[::-1])
            llhs.append(float(score.max()))
        return paths, llhs


class LSTMCNNCRF(nn.Module):
    def __init__(self, embedding_dim=16, n_filters=8, num_states=5):
        super().__init__()
        self.conv1 = nn.Conv1d(embedding_dim, n_filters, 3, padding=1)
        self.to_emissions = nn.Linear(n_filters, num_states)
        self.crf = CRF(num_states)

    def feature_extractor(self, embeddings, mask):
        return torch.relu(self.conv1(embeddings)).permute(0, 2, 1) * mask.unsqueeze(-1)

    def features_to_emissions(self, features):
        return self.to_emissions(features)


def load_models(n=2):
    models = []
    for _ in range(n):
        state_dict = {k: v.cpu() for k, v in LSTMCNNCRF().state_dict().items()}
        model = LSTMCNNCRF()
        model.eval()
        model.load_state_dict(state_dict)
        models.append(model)
    return models


def combine_crf(models):
    with torch.no_grad():
        crf = CRF(5)
        crf.transitions.data = torch.stack([m.crf.transitions for m in models]).mean(dim=0)
        crf.start_transitions.data = torch.stack([m.crf.start_transitions for m in models]).mean(dim=0)
        crf.end_transitions.data = torch.stack([m.crf.end_transitions for m in models]).mean(dim=0)
    return crf


def embed(seqs):
    return [torch.randn(len(s), 16) for s in seqs]


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    seqs = ["MKTAYIAK", "MLLAVLY", "MKKLL"]
    batches = [(seqs, [torch.ones(len(s)) for s in seqs])]
    models = load_models()
    crf = combine_crf(models)

    all_paths = []
    with torch.no_grad():
        for seqs, mask in batches:
            embeddings = torch.nn.utils.rnn.pad_sequence(embed(seqs), batch_first=True)
            mask = torch.nn.utils.rnn.pad_sequence(mask, batch_first=True)

            embeddings.to(device)  # expect: DL101
            mask.to(device)  # expect: DL101

            batch_emissions = []
            for model in models:
                model.to(device)
                model.eval()
                features = model.feature_extractor(embeddings.permute(0, 2, 1), mask)
                batch_emissions.append(model.features_to_emissions(features).cpu())

            batch_emissions = torch.stack(batch_emissions).mean(dim=0)
            paths, llhs = crf.decode(batch_emissions.to(device), mask.byte(), top_k=1)  # expect: DL201
            all_paths.extend(paths)
    print(all_paths)


if __name__ == "__main__":
    main()
