# source: https://github.com/DavidLandup0/deepvision/pull/31
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking argument for argument index in method wrapper__index_select)
# bug: the PyTorch ViT's patching-and-embedding layer looks up its learned position embeddings with
#      torch.arange(0, num_patches + 1) made in forward without a device, so once the ViT is on the
#      GPU the embedding table is indexed with CPU positions. The fix (commit c6ee612, which closes
#      issue 30) moves the positions to a device stored in __init__ (DL202 on the arange line).
import torch
import torch.nn as nn


class PatchingAndEmbedding(nn.Module):
    def __init__(self, project_dim, input_shape, patch_size):
        super().__init__()
        self.project_dim, self.patch_size = project_dim, patch_size
        self.projection = nn.Conv2d(input_shape[0], project_dim, kernel_size=patch_size, stride=patch_size)
        self.class_token = nn.Parameter(torch.rand(1, 1, project_dim))
        self.num_patches = input_shape[1] // patch_size * input_shape[2] // patch_size
        self.position_embedding = nn.Embedding(num_embeddings=self.num_patches + 1, embedding_dim=project_dim)

    def forward(self, images):
        patches = self.projection(images)
        b, c = patches.shape[:2]
        patches_flattened = patches.reshape(b, c, -1).transpose(1, 2)
        class_token_broadcast = self.class_token.expand(b, -1, -1)
        patches_flattened = torch.cat([class_token_broadcast, patches_flattened], 1)
        positions = torch.arange(start=0, end=self.num_patches + 1, step=1)  # expect: DL202
        return patches_flattened + self.position_embedding(positions)


class ViT(nn.Module):
    def __init__(self, input_shape=(3, 32, 32), patch_size=8, project_dim=16, num_heads=2, depth=2, classes=10):
        super().__init__()
        self.embed = PatchingAndEmbedding(project_dim, input_shape, patch_size)
        layer = nn.TransformerEncoderLayer(project_dim, num_heads, dim_feedforward=32, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth)
        self.head = nn.Linear(project_dim, classes)

    def forward(self, x):
        return self.head(self.encoder(self.embed(x))[:, 0])


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = ViT().to(device)
    print(model(torch.randn(2, 3, 32, 32, device=device)).shape)
