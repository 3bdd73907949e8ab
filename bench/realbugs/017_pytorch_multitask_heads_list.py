# source: https://github.com/pytorch/pytorch/issues/15005
# error: model.cuda() does not convert the layers initialized in a list; their CPU weights meet the CUDA batch
# bug: the per-task output layers are appended to a plain Python list, so model.cuda() does not
#      move them (nor does parameters() see them) and the CUDA batch meets CPU weights.
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable

num_classes = [5, 2, 10, 3]


class test(nn.Module):
    def __init__(self, input_features):
        super(test, self).__init__()
        self.softmaxes = []  # expect: DL105
        for i in range(4):
            self.softmaxes.append(nn.Linear(input_features, num_classes[i]))

    def forward(self, batch_in):
        batch_in = Variable(torch.FloatTensor(batch_in).cuda())
        classify = []
        for i in range(4):
            classify.append(self.softmaxes[i](batch_in))
        return classify


if __name__ == "__main__":
    input_features = 100
    X_train = np.random.rand(5000, input_features)
    model = test(input_features)
    model.cuda()
    outputs = model(X_train[:32])
