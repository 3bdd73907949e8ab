# source: https://github.com/facebookresearch/DomainBed/pull/68
# error: RuntimeError: Expected all tensors to be on the same device (the training step after the first saved checkpoint: the algorithm's parameters are on the CPU, the minibatches on the GPU)
# bug: with --save_model_every_checkpoint, the training script's save_checkpoint helper builds the
#      saved dict with algorithm.cpu().state_dict(). Module.cpu() moves the algorithm in place,
#      so after the first checkpoint the training loop keeps feeding GPU minibatches to a model
#      whose parameters and buffers now live on the host; nothing moves it back. The merged fix
#      drops the .cpu() (algorithm.state_dict()). The changed line is marked; no rule names an
#      in-place move made for saving, so the marker uses DL201 (operands on different devices),
#      the closest, whose failure is the next update on GPU minibatches.
import argparse
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F


class ERM(nn.Module):
    def __init__(self, input_dim, num_classes, hparams):
        super().__init__()
        self.featurizer = nn.Sequential(nn.Linear(input_dim, 32), nn.ReLU())
        self.classifier = nn.Linear(32, num_classes)
        self.network = nn.Sequential(self.featurizer, self.classifier)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=hparams["lr"])

    def update(self, minibatches):
        all_x = torch.cat([x for x, y in minibatches])
        all_y = torch.cat([y for x, y in minibatches])
        loss = F.cross_entropy(self.network(all_x), all_y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"loss": loss.item()}

    def predict(self, x):
        return self.network(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=7)
    parser.add_argument("--checkpoint_freq", type=int, default=3)
    parser.add_argument("--save_model_every_checkpoint", action="store_true", default=True)
    parser.add_argument("--output_dir", default=tempfile.mkdtemp())
    args = parser.parse_args([])
    device = "cuda" if torch.cuda.is_available() else "cpu"
    hparams = {"lr": 1e-3}

    algorithm = ERM(10, 3, hparams)
    algorithm.to(device)
    envs = [(torch.randn(64, 10), torch.randint(0, 3, (64,))) for _ in range(2)]

    def save_checkpoint(filename):
        save_dict = {
            "args": vars(args),
            "model_hparams": hparams,
            "model_dict": algorithm.cpu().state_dict(),  # expect: DL201
        }
        torch.save(save_dict, os.path.join(args.output_dir, filename))

    for step in range(args.steps):
        minibatches = [(x[:16].to(device), y[:16].to(device)) for x, y in envs]
        step_vals = algorithm.update(minibatches)
        if step % args.checkpoint_freq == 0:
            print(step, round(step_vals["loss"], 4))
            if args.save_model_every_checkpoint:
                save_checkpoint(f"model_step{step}.pkl")
    save_checkpoint("model.pkl")


if __name__ == "__main__":
    main()
