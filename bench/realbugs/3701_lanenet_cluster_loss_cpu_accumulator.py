# source: https://github.com/ms5898/LaneNet-PyTorch/issues/6
# error: RuntimeError: Function AddBackward0 returned an invalid gradient at index 1 - expected type
#        torch.FloatTensor but got torch.cuda.FloatTensor  (Train.py, loss.backward())
# bug: Lanenet/cluster_loss3.py's cluster_loss.forward starts the instance loss as torch.tensor(0.) with its
#      .cuda() commented out ("instance_segmenatation_loss = torch.tensor(0.)#.cuda()") and adds each image's
#      discriminative loss, computed on the GPU from the CUDA embeddings, into it in place; the training loop
#      adds it to the CUDA binary loss (loss = 1*binary + 1*instance), so AddBackward0's input 1 is the CPU
#      accumulator and backward returns a CUDA gradient for it. A commenter: "You can avoid this error by
#      changing the code in cluster_loss3.py ... The author somehow commented the .cuda()". No upstream fix
#      (the repository still has the comment); the accumulator's factory line is marked (DL202).
#      Reductions: model2.Lanenet becomes a two-head conv net returning (binary logits, instance embedding);
#      TUSIMPLE_AUG and its DataLoader become random batches of the same shapes; the notebook's (Train_aug.ipynb)
#      loop is kept without the lr scheduler, printing and checkpointing. torch_scatter is imported as upstream
#      (absent here), so the file does not run on this machine.
import torch
import torch.nn as nn
from torch_scatter import scatter


class cluster_loss_helper(nn.Module):
    def __init__(self):
        super(cluster_loss_helper, self).__init__()

    def forward(self, prediction, correct_label, delta_v, delta_d):
        prediction_reshape = prediction.view(prediction.shape[0], prediction.shape[1],
                                             prediction.shape[2] * prediction.shape[3])
        correct_label_reshape = correct_label.view(correct_label.shape[0], 1,
                                                   correct_label.shape[1] * correct_label.shape[2])

        output, inverse_indices, counts = torch.unique(correct_label_reshape, return_inverse=True,
                                                       return_counts=True)
        counts = counts.float()
        num_instances = len(output)

        muc = scatter(prediction_reshape, inverse_indices, dim=2, reduce="mean")

        dis = torch.index_select(muc, 2, inverse_indices.view(inverse_indices.shape[-1]), out=None)
        dis = dis - prediction_reshape
        dis = torch.norm(dis, dim=1, keepdim=False, out=None, dtype=None)
        dis = dis - delta_v
        dis = torch.clamp(dis, min=0.)
        dis = torch.pow(dis, 2, out=None)

        L_var = scatter(dis, inverse_indices.view(inverse_indices.shape[-1]), dim=1, reduce="mean")
        L_var = torch.sum(L_var) / num_instances

        L_dist = torch.tensor(0, dtype=torch.float)
        for A in range(num_instances):
            for B in range(num_instances):
                if A != B:
                    dis = muc[:, :, A] - muc[:, :, B]
                    dis = torch.norm(dis, dim=1, keepdim=False, out=None, dtype=None)
                    dis = delta_d - dis
                    dis = torch.clamp(dis, min=0.)
                    dis = torch.pow(dis, 2, out=None)
                    L_dist = L_dist + dis
        L_dist = L_dist / (num_instances * (num_instances - 1))
        L_dist = L_dist.view([])
        total_loss = L_var + L_dist
        return total_loss


class cluster_loss(nn.Module):
    def __init__(self):
        super(cluster_loss, self).__init__()

    def forward(self, binary_logits, binary_labels,
                instance_logits, instance_labels, delta_v=0.5, delta_d=3):
        # bounded inverse class weighting for the unbalanced lane/background classes
        output, counts = torch.unique(binary_labels, return_inverse=False, return_counts=True)
        counts = counts.float()
        inverse_weights = torch.div(1.0, torch.log(
            torch.add(torch.div(counts, torch.sum(counts)), torch.tensor(1.02, dtype=torch.float))))

        binary_loss = torch.nn.CrossEntropyLoss(weight=inverse_weights)
        binary_segmenatation_loss = binary_loss(binary_logits, binary_labels)

        batch_size = instance_logits.shape[0]
        loss_set = []
        for dimen in range(batch_size):
            loss_set.append(cluster_loss_helper())

        instance_segmenatation_loss = torch.tensor(0.)#.cuda()  # expect: DL202

        for dimen in range(batch_size):
            instance_loss = loss_set[dimen]
            prediction = torch.unsqueeze(instance_logits[dimen], 0) # .cuda()
            correct_label = torch.unsqueeze(instance_labels[dimen], 0)# .cuda()
            instance_segmenatation_loss += instance_loss(prediction, correct_label, delta_v, delta_d)

        instance_segmenatation_loss = instance_segmenatation_loss / batch_size
        return binary_segmenatation_loss, instance_segmenatation_loss


# --- Lanenet/model2.py (stand-in: two heads on a small encoder) ---
class Lanenet(nn.Module):
    def __init__(self, num_classes, embedding_dim):
        super(Lanenet, self).__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU())
        self.binary_head = nn.Conv2d(16, num_classes, 1)
        self.instance_head = nn.Conv2d(16, embedding_dim, 1)

    def forward(self, x):
        features = self.encoder(x)
        return self.binary_head(features), self.instance_head(features)


# --- Train_aug.ipynb ---
batch_size = 8
learning_rate = 5e-4

device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')

LaneNet_model = Lanenet(2, 4)
LaneNet_model.to(device)

params = [p for p in LaneNet_model.parameters() if p.requires_grad]
optimizer = torch.optim.Adam(params, lr=learning_rate, weight_decay=0.0002)

criterion = cluster_loss()

loss_all = []
for iter in range(2):
    images = torch.rand(batch_size, 3, 32, 64)
    binary = torch.randint(0, 2, (batch_size, 32, 64))
    instance = binary * torch.randint(1, 4, (batch_size, 1, 1)) * 50
    input_image = images.to(device)
    binary_labels = binary.to(device)
    instance_labels = instance.to(device)

    binary_final_logits, instance_embedding = LaneNet_model(input_image)
    binary_segmenatation_loss, instance_segmenatation_loss = criterion(binary_logits=binary_final_logits, binary_labels=binary_labels,
                                   instance_logits=instance_embedding, instance_labels=instance_labels, delta_v=0.5, delta_d=3)

    loss = 1*binary_segmenatation_loss + 1*instance_segmenatation_loss
    optimizer.zero_grad()
    loss_all.append(loss.item())
    loss.backward()
    optimizer.step()
