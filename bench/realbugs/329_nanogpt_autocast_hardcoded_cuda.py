# source: https://github.com/karpathy/nanoGPT/pull/27
# error: none raised: with device='cpu' (a laptop dry run) autocast warns that CUDA is not available and is disabled
# bug: train.py takes its device from the config (overridable on the command line) and moves the
#      model and every batch there, but builds the autocast context with device_type='cuda'
#      hard-coded, so any non-CUDA run gets no mixed precision.
import os
import time

import numpy as np
import torch

from model import GPT, GPTConfig

# default config values, overridden by configurator.py from the command line
out_dir = 'out'
batch_size = 12
block_size = 1024
max_iters = 600000
learning_rate = 6e-4
device = 'cuda'
dtype = 'bfloat16'
exec(open('configurator.py').read())

ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = torch.amp.autocast(device_type='cuda', dtype=ptdtype)  # expect: DL308

data_dir = os.path.join('data', 'openwebtext')
train_data = np.memmap(os.path.join(data_dir, 'train.bin'), dtype=np.uint16, mode='r')


def get_batch():
    ix = torch.randint(len(train_data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy(train_data[i:i + block_size].astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy(train_data[i + 1:i + 1 + block_size].astype(np.int64)) for i in ix])
    return x.to(device), y.to(device)


model = GPT(GPTConfig(block_size=block_size))
model.to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)

iter_num = 0
while iter_num < max_iters:
    t0 = time.time()
    X, Y = get_batch()
    with ctx:
        logits, loss = model(X, Y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    iter_num += 1
