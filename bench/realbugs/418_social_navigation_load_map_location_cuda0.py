# source: https://github.com/ZJU-Robotics-Lab/model-based-social-navigation/issues/5
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.
# bug: the module falls back to the CPU when no GPU is present, but the ensemble's load() restores
#      every world-model generator and its optimizer with map_location hard-coded to 'cuda:0', which
#      fails on a CPU-only machine. The reporter's fix in the thread maps them to the CPU instead.
#      (Collected as DL302, hard-coded cuda in a method, the closest rule then; re-marked DL301, whose
#      docs now cover a map_location that names CUDA in a program that also runs without a GPU.)
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class WorldModel:
    def __init__(self, state_size, action_size):
        self.generator = nn.Sequential(nn.Linear(state_size + action_size, 256), nn.ReLU(),
                                       nn.Linear(256, state_size + 1)).to(device)
        self.optimizer_G = torch.optim.Adam(self.generator.parameters(), lr=1e-3)


class Ensemble_Model:
    def __init__(self, network_size, elite_size, state_size=3634, action_size=2):
        self.network_size = network_size
        self.elite_size = elite_size
        self.model_list = [WorldModel(state_size, action_size) for _ in range(network_size)]

    def predict(self, inputs, actions):
        x = torch.cat([inputs, actions], dim=-1).to(device)
        return torch.stack([m.generator(x) for m in self.model_list]).mean(0)

    def save(self, filename):
        for idx in range(self.network_size):
            torch.save(self.model_list[idx].generator.state_dict(), filename + "_generator")
            torch.save(self.model_list[idx].optimizer_G.state_dict(), filename + "_generator_optimizer")

    def load(self, filename):
        for idx in range(self.network_size):
            self.model_list[idx].generator.load_state_dict(torch.load(filename + "_generator", map_location="cuda:0"))  # expect: DL301
            self.model_list[idx].optimizer_G.load_state_dict(torch.load(filename + "_generator_optimizer", map_location="cuda:0"))  # expect: DL301


if __name__ == "__main__":
    ensemble = Ensemble_Model(network_size=3, elite_size=2)
    ensemble.load("World_Models/TEST/world_model")
    out = ensemble.predict(torch.rand(4, 3634), torch.rand(4, 2))
