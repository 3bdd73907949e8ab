# source: https://github.com/rotem-shalev/Ham2Pose/pull/6
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0! (when checking argument for argument mat2 in method wrapper_CUDA_mm)
# bug: the text-to-pose generator seeds its pose sequence with the first pose frame it is handed,
#      expanded as it is; the prediction script passes that frame straight from the (CPU) dataset
#      while the model sits on the GPU, so projecting the pose sequence mixes devices. The fix moves
#      the first pose to the device inside the generator before expanding it (no rule covers an
#      argument that is not moved; DL203 is the closest).
import torch
import torch.nn as nn


class PoseGenerator(nn.Module):
    def __init__(self, vocab=32, hidden=16, pose_dims=(5, 2), num_steps=3):
        super().__init__()
        self.pose_dims = pose_dims
        self.num_steps = num_steps
        self.embedding = nn.Embedding(vocab, hidden)
        self.pose_projection = nn.Linear(pose_dims[0] * pose_dims[1], hidden)
        self.pose_diff = nn.Linear(2 * hidden, pose_dims[0] * pose_dims[1])

    @property
    def device(self):
        return next(self.parameters()).device

    def refine(self, pose_data, text_encoding):
        b, t = pose_data.shape[:2]
        emb = self.pose_projection(pose_data.reshape(b, t, -1))
        ctx = text_encoding.mean(dim=1, keepdim=True).expand(b, t, -1)
        change = self.pose_diff(torch.cat([emb, ctx], dim=-1)).reshape(pose_data.shape)
        return pose_data + 0.5 * change

    def forward(self, token_ids, first_pose, sequence_length=6):
        text_encoding = self.embedding(token_ids.to(self.device)).unsqueeze(0)
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        first_pose_to = first_pose.to(device)
        pose_sequence = {
            "data": first_pose_to.expand(1, sequence_length, *self.pose_dims),
            "mask": torch.zeros([1, sequence_length], dtype=torch.bool, device=self.device),
        }
        for _ in range(self.num_steps):
            yield pose_sequence["data"][0]
            pose_sequence["data"] = self.refine(pose_sequence["data"], text_encoding)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = PoseGenerator().to(device).eval()
    datum = {"text": torch.tensor([3, 7, 1]), "pose": {"data": torch.randn(8, 5, 2)}}
    first_pose = datum["pose"]["data"][0]
    with torch.no_grad():
        frames = list(model(datum["text"], first_pose))
    print(len(frames), frames[-1].shape)
