# source: https://github.com/ry-takashima/python_asr/issues/1
# error: TypeError: can't convert cuda:0 device type tensor to numpy (raised from plt.plot -> np.atleast_1d)
# bug: the frame error count is accumulated as a CUDA tensor, so each epoch's error rate appended to
#      error_history is a GPU tensor; plotting the history at the end makes matplotlib call numpy on it.
import os

import matplotlib.pyplot as plt
import torch
import torch.nn as nn
import torch.optim as optim

from my_model import MyDNN


def train(train_loader, dev_loader, dim_in, dim_out, output_dir, max_num_epoch=60, pad_index=0):
    model = MyDNN(dim_in=dim_in, dim_hidden=256, dim_out=dim_out, num_layers=4)
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.99)
    criterion = nn.CrossEntropyLoss(ignore_index=pad_index)
    if torch.cuda.is_available():
        device = torch.device('cuda')
    else:
        device = torch.device('cpu')
    model = model.to(device)
    model.train()

    dataset_loader = {'train': train_loader, 'validation': dev_loader}
    loss_history = {'train': [], 'validation': []}
    error_history = {'train': [], 'validation': []}

    for epoch in range(max_num_epoch):
        for phase in ['train', 'validation']:
            total_loss = 0
            total_utt = 0
            total_error = 0
            total_frames = 0
            for (features, labels, feat_len, label_len, utt_ids) in dataset_loader[phase]:
                features, labels = features.to(device), labels.to(device)
                optimizer.zero_grad()
                outputs = model(features)
                b_size, f_size, _ = outputs.size()
                outputs = outputs.view(b_size * f_size, dim_out)
                labels = labels.view(-1)
                loss = criterion(outputs, labels)
                if phase == 'train':
                    loss.backward()
                    optimizer.step()
                total_loss += loss.item()
                total_utt += b_size

                _, hyp = torch.max(outputs, 1)
                hyp = hyp[labels != pad_index]
                ref = labels[labels != pad_index]
                error = (hyp != ref).sum()
                total_error += error
                total_frames += len(ref)

            epoch_loss = total_loss / total_utt
            loss_history[phase].append(epoch_loss)
            epoch_error = 100.0 * total_error / total_frames
            print('    %s error rate: %f %%' % (phase, epoch_error))
            error_history[phase].append(epoch_error.cpu())

    fig2 = plt.figure()
    for phase in ['train', 'validation']:
        plt.plot(error_history[phase], label=phase + ' error')
    plt.xlabel('Epoch')
    plt.ylabel('Error [%]')
    plt.legend()
    fig2.savefig(os.path.join(output_dir, 'error.png'))
