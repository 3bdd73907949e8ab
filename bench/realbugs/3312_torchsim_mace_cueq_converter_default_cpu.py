# source: https://github.com/TorchSim/torch-sim/issues/440
# error: (issue) "MaceModel(enable_cueq=True) fails with: mat2 is on cpu, different from other tensors on cuda:0"
# bug: MaceModel.__init__ resolves self._device (CUDA when available) and moves the loaded MACE model there, but with
#      enable_cueq=True it then replaces the model by run_e3nn_to_cueq(self.model), mace's converter, whose device
#      parameter defaults to "cpu": it builds the cuequivariance model with .to(device=device) and loads the weights
#      into it, so the converted model sits on the CPU while node_attrs, positions and the neighbour list are made on
#      self.device. The issue quotes the cause and was closed as already fixed (the thread says 0.5; the fix is
#      first released in v0.5.1): commit 7630103 (PR #391, "Fix/cuequivariance mace", January 2026) passes device=self.device.type to the converter (and spells
#      self._device as self.device in the two loads above, no change in behaviour); the converter line is marked - no rule fits a library call whose device default is the
#      CPU, DL201 (the converted CPU weights meet the CUDA inputs in the first layer) is the closest. mace's run() with
#      device="cpu" was read from ACEsuit/mace in the code index. Reductions: the MACE model is a small module with
#      r_max, atomic_numbers and a linear readout over node attributes and positions; the converter keeps run()'s
#      steps (new model of the same class with its config, .to(device, dtype), load_state_dict); the SimState, the
#      neighbour list, forces and stress are dropped. Needs NumPy (mace's atomic_numbers_to_indices, as upstream).
import numpy as np
import torch


# --- mace (the library torch-sim wraps): tools/utils.py, cli/convert_e3nn_cueq.py ---
class AtomicNumberTable:
    def __init__(self, zs):
        self.zs = zs

    def __len__(self):
        return len(self.zs)

    def z_to_index(self, atomic_number):
        return self.zs.index(atomic_number)


def atomic_numbers_to_indices(atomic_numbers, z_table):
    to_index_fn = np.vectorize(z_table.z_to_index)
    return to_index_fn(atomic_numbers)


class ScaleShiftMACE(torch.nn.Module):
    def __init__(self, r_max=5.0, atomic_numbers=(1, 8), hidden=16, cueq_config=None):
        super().__init__()
        self.config = dict(r_max=r_max, atomic_numbers=atomic_numbers, hidden=hidden)
        self.r_max = r_max
        self.register_buffer("atomic_numbers", torch.tensor(atomic_numbers, dtype=torch.int64))
        self.embedding = torch.nn.Linear(len(atomic_numbers), hidden)
        self.readout = torch.nn.Linear(hidden + 3, 1)

    def forward(self, data):
        h = self.embedding(data["node_attrs"])
        return {"energy": self.readout(torch.cat([h, data["positions"]], dim=-1)).sum()}


def run_e3nn_to_cueq(input_model, output_model="_cueq.model", device="cpu", return_model=True):
    source_model = input_model
    default_dtype = next(source_model.parameters()).dtype
    config = dict(source_model.config, cueq_config={"enabled": True, "layout": "ir_mul"})
    target_model = source_model.__class__(**config).to(device=device, dtype=default_dtype)
    target_model.load_state_dict(source_model.state_dict())
    return target_model


# --- torch_sim/models/mace.py ---
def to_one_hot(indices, num_classes, dtype):
    shape = indices.shape[:-1] + (num_classes,)
    oh = torch.zeros(shape, device=indices.device, dtype=dtype).view(shape)
    oh.scatter_(dim=-1, index=indices, value=1)
    return oh.view(*shape)


class MaceModel(torch.nn.Module):
    def __init__(self, model, *, device=None, dtype=torch.float64, enable_cueq=False, atomic_numbers=None,
                 system_idx=None):
        super().__init__()
        self._device = device or torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self._dtype = dtype

        if isinstance(model, str):
            self.model = torch.load(model, map_location=self._device, weights_only=False)
        elif isinstance(model, torch.nn.Module):
            self.model = model.to(self._device)
        else:
            raise TypeError("Model must be a path or torch.nn.Module")

        self.model = self.model.eval()
        self.model = self.model.to(device=self._device)
        if self.dtype is not None:
            self.model = self.model.to(dtype=self.dtype)

        if enable_cueq:
            print("Converting models to CuEq for acceleration")
            self.model = run_e3nn_to_cueq(self.model)  # expect: DL201

        self.r_max = self.model.r_max
        self.z_table = AtomicNumberTable([int(z) for z in self.model.atomic_numbers])
        self.model.atomic_numbers = self.model.atomic_numbers.detach().clone().to(device=self.device)
        if atomic_numbers is not None:
            if system_idx is None:
                system_idx = torch.zeros(len(atomic_numbers), dtype=torch.long, device=self.device)
            self.setup_from_system_idx(atomic_numbers, system_idx)

    @property
    def device(self):
        return self._device

    @property
    def dtype(self):
        return self._dtype

    def setup_from_system_idx(self, atomic_numbers, system_idx):
        self.atomic_numbers = atomic_numbers
        self.system_idx = system_idx
        self.node_attrs = to_one_hot(
            torch.tensor(atomic_numbers_to_indices(atomic_numbers.cpu().numpy(), z_table=self.z_table),
                         dtype=torch.long, device=self.device).unsqueeze(-1),
            num_classes=len(self.z_table), dtype=self.dtype)

    def forward(self, state):
        positions = state["positions"].to(device=self.device, dtype=self.dtype)
        out = self.model({"node_attrs": self.node_attrs, "positions": positions})
        return {"energy": out["energy"].detach()}


if __name__ == "__main__":
    raw_model = ScaleShiftMACE()
    atomic_numbers = torch.tensor([8, 1, 1])
    model = MaceModel(raw_model, enable_cueq=True, atomic_numbers=atomic_numbers)
    print(model({"positions": torch.randn(3, 3)}))
