# source: https://github.com/pytorch/pytorch/issues/122757
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: model outputs and labels are on the GPU, but the class weights given to
#      CrossEntropyLoss were built on the CPU and the criterion is never moved.
import torch
import torch.nn as nn

device = torch.device("cuda")
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 5)).to(device)
weights = torch.tensor([1.0, 2.0, 1.0, 0.5, 3.0])
loss_fn = torch.nn.CrossEntropyLoss(weight=weights)  # expect: DL104

inputs = torch.randn(10, 16).to(device)
labels = torch.randint(0, 5, (10,)).to(device)
model_output = model(inputs)
loss = loss_fn(input=model_output, target=labels)
loss.backward()
