# source: https://github.com/Lung-Yi/rxn_yield_context/issues/3
# fixed twin: the repeated fingerprint is moved to self.device, as commit e116cd4 does.
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F


class ReactionModelLWTemp(nn.Module):
    def __init__(self, fp_size, len_solvent, len_reagent, hidden=32):
        super().__init__()
        self.ffn = nn.Sequential(nn.Linear(fp_size + len_solvent + len_reagent, hidden), nn.ReLU())
        self.score = nn.Linear(hidden, 1)
        self.temperature = nn.Linear(hidden, 1)

    def forward(self, rxn_fp, solvents, reagents):
        h = self.ffn(torch.cat([rxn_fp, solvents, reagents], dim=-1))
        return self.score(h).squeeze(-1), self.temperature(h).squeeze(-1)


class RankingEvaluator:
    def __init__(self, solvent_classes, reagent_classes):
        self.solvent_classes = solvent_classes
        self.reagent_classes = reagent_classes
        self.model = None
        self.device = None

    def load_model(self, model_path, fp_size, device=torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")):
        self.device = device
        state = torch.load(model_path, map_location=device)
        self.model = ReactionModelLWTemp(fp_size, len(self.solvent_classes), len(self.reagent_classes))
        self.model.to(device)
        self.model.load_state_dict(state["state_dict"])
        self.model.eval()

    def convert_features2name(self, inputs, classes):
        names = []
        for feature in inputs.clone().cpu().detach():
            names.append("; ".join(classes[i] for i in torch.nonzero(feature == 1).flatten().tolist()))
        return names

    def predict_scores(self, rxn_fp, input_solvents, input_reagents):
        input_solvents = input_solvents.unsqueeze(0).to(self.device)
        input_reagents = input_reagents.unsqueeze(0).to(self.device)
        rxn_fp = rxn_fp.view(1, -1)
        rxn_fp = rxn_fp.repeat(input_solvents.shape[1], 1)
        rxn_fp = rxn_fp.unsqueeze(0).to(self.device)
        scores, temperatures = self.model(rxn_fp, input_solvents, input_reagents)
        scores = F.softmax(scores, dim=1).view(-1)
        temperatures = [float(t) for t in temperatures.view(-1).cpu().detach()]
        return scores, temperatures

    def rank_top_contexts(self, rxn_fp, input_solvents, input_reagents):
        contexts = list(zip(self.convert_features2name(input_solvents, self.solvent_classes),
                            self.convert_features2name(input_reagents, self.reagent_classes)))
        scores, temperatures = self.predict_scores(rxn_fp, input_solvents, input_reagents)
        top_index = torch.argsort(scores, descending=True)
        return [list(contexts[j]) + [temperatures[j], float(scores[j].detach().cpu())] for j in top_index.tolist()]


if __name__ == "__main__":
    solvents, reagents, fp_size = ["water", "THF", "DMF"], ["NaOH", "HCl"], 16
    path = os.path.join(tempfile.mkdtemp(), "lw_temp.pt")
    torch.save({"state_dict": ReactionModelLWTemp(fp_size, len(solvents), len(reagents)).state_dict()}, path)
    evaluator = RankingEvaluator(solvents, reagents)
    evaluator.load_model(path, fp_size)
    rxn_fp = torch.randint(0, 2, (fp_size,)).float()
    cand_solvents = torch.eye(3)[[0, 1, 2, 0]]
    cand_reagents = torch.eye(2)[[0, 0, 1, 1]]
    for row in evaluator.rank_top_contexts(rxn_fp, cand_solvents, cand_reagents):
        print(row)
