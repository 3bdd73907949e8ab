# source: https://github.com/huggingface/lerobot/issues/713
# error: AttributeError: 'list' object has no attribute 'to'
# bug: the training example moves every entry of the collated dict batch to the device, but the
# dataset now also yields a "task" string, which collation turns into a list of strings.
import torch
from lerobot.common.datasets.lerobot_dataset import LeRobotDataset
from lerobot.common.policies.diffusion.modeling_diffusion import DiffusionPolicy


def main():
    device = torch.device("cuda")
    dataset = LeRobotDataset("lerobot/pusht", delta_timestamps={"action": [i / 10 for i in range(16)]})
    policy = DiffusionPolicy(dataset_stats=dataset.meta.stats)
    policy.train()
    policy.to(device)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-4)
    dataloader = torch.utils.data.DataLoader(
        dataset, num_workers=4, batch_size=64, shuffle=True, pin_memory=device.type != "cpu", drop_last=True
    )
    step = 0
    done = False
    while not done:
        for batch in dataloader:
            batch = {k: (v.to(device, non_blocking=True) if isinstance(v, torch.Tensor) else v) for k, v in batch.items()}
            loss, _ = policy.forward(batch)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            step += 1
            if step >= 5000:
                done = True
                break


if __name__ == "__main__":
    main()
