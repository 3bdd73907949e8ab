# source: https://github.com/AstraZeneca/chemicalx/issues/96
# fixed twin: both identity matrices are made on the device of the tensors they meet, the fix the issue asks for (not applied upstream).
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class DrugPairBatch:
    drug_features_left: torch.Tensor
    drug_features_right: torch.Tensor
    labels: torch.Tensor


class CASTER(nn.Module):
    def __init__(self, *, drug_channels, hidden_channels=32, lambda3=1e-5, magnifying_factor=100):
        super().__init__()
        self.lambda3 = lambda3
        self.magnifying_factor = magnifying_factor
        self.drug_channels = drug_channels
        self.encoder = nn.Sequential(nn.Linear(drug_channels, hidden_channels), nn.ReLU(True), nn.Linear(hidden_channels, hidden_channels))
        self.decoder = nn.Sequential(nn.Linear(hidden_channels, hidden_channels), nn.ReLU(True), nn.Linear(hidden_channels, drug_channels))
        self.predictor = nn.Sequential(
            nn.Linear(drug_channels, hidden_channels), nn.ReLU(True), nn.BatchNorm1d(hidden_channels),
            nn.Linear(hidden_channels, 1), nn.Sigmoid(),
        )

    def unpack(self, batch):
        pair = (torch.maximum(batch.drug_features_left, batch.drug_features_right) >= 1.0).float()
        return (pair,)

    def dictionary_encoder(self, drug_pair_features_latent, dictionary_features_latent):
        dict_feat_squared = torch.matmul(dictionary_features_latent, dictionary_features_latent.transpose(2, 1))
        dict_feat_squared_inv = torch.inverse(dict_feat_squared + self.lambda3 * (torch.eye(self.drug_channels, device=dict_feat_squared.device)))
        dict_feat_closed_form = torch.matmul(dict_feat_squared_inv, dictionary_features_latent)
        return drug_pair_features_latent[:, None, :].matmul(dict_feat_closed_form.transpose(2, 1)).squeeze(1)

    def forward(self, drug_pair_features):
        drug_pair_features_latent = self.encoder(drug_pair_features)
        dictionary_features_latent = self.encoder(torch.eye(self.drug_channels, device=drug_pair_features.device))
        dictionary_features_latent = dictionary_features_latent.mul(drug_pair_features[:, :, None])
        reconstructed = torch.sigmoid(self.decoder(drug_pair_features_latent))
        dictionary_encoded = self.dictionary_encoder(drug_pair_features_latent, dictionary_features_latent)
        prediction_scores = self.predictor(self.magnifying_factor * dictionary_encoded)
        return prediction_scores, reconstructed, dictionary_encoded


def train_step(model, optimizer, batch, device):
    batch = DrugPairBatch(*(t.to(device) for t in (batch.drug_features_left, batch.drug_features_right, batch.labels)))
    optimizer.zero_grad()
    scores, reconstructed, _ = model(*model.unpack(batch))
    loss = nn.functional.binary_cross_entropy(scores.squeeze(1), batch.labels)
    loss.backward()
    optimizer.step()
    return loss.item()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = CASTER(drug_channels=16).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batch = DrugPairBatch(
        torch.randint(0, 2, (8, 16)).float(), torch.randint(0, 2, (8, 16)).float(), torch.randint(0, 2, (8,)).float()
    )
    print(train_step(model, optimizer, batch, device))
