# source: https://github.com/suragnair/alpha-zero-general/pull/98
# fixed twin: PR #98 (merged as b9f9348) loads with map_location = None if args.cuda else 'cpu'.
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class dotdict(dict):
    def __getattr__(self, name):
        return self[name]


# --- othello/pytorch/OthelloNNet.py ---
class OthelloNNet(nn.Module):
    def __init__(self, game, args):
        self.board_x, self.board_y = game.getBoardSize()
        self.action_size = game.getActionSize()
        self.args = args
        super(OthelloNNet, self).__init__()
        self.conv1 = nn.Conv2d(1, args.num_channels, 3, stride=1, padding=1)
        self.bn1 = nn.BatchNorm2d(args.num_channels)
        self.fc3 = nn.Linear(args.num_channels * self.board_x * self.board_y, self.action_size)
        self.fc4 = nn.Linear(args.num_channels * self.board_x * self.board_y, 1)

    def forward(self, s):
        s = s.view(-1, 1, self.board_x, self.board_y)
        s = F.relu(self.bn1(self.conv1(s)))
        s = s.view(-1, self.args.num_channels * self.board_x * self.board_y)
        pi = self.fc3(s)
        v = self.fc4(s)
        return F.log_softmax(pi, dim=1), torch.tanh(v)


# --- othello/pytorch/NNet.py ---
args = dotdict({
    'lr': 0.001,
    'dropout': 0.3,
    'epochs': 10,
    'batch_size': 64,
    'cuda': torch.cuda.is_available(),
    'num_channels': 32,
})


class NNetWrapper:
    def __init__(self, game):
        self.nnet = OthelloNNet(game, args)
        self.board_x, self.board_y = game.getBoardSize()
        self.action_size = game.getActionSize()

        if args.cuda:
            self.nnet.cuda()

    def predict(self, board):
        board = torch.FloatTensor(board.astype(np.float64))
        if args.cuda: board = board.contiguous().cuda()
        board = board.view(1, self.board_x, self.board_y)
        self.nnet.eval()
        with torch.no_grad():
            pi, v = self.nnet(board)
        return torch.exp(pi).data.cpu().numpy()[0], v.data.cpu().numpy()[0]

    def save_checkpoint(self, folder='checkpoint', filename='checkpoint.pth.tar'):
        filepath = os.path.join(folder, filename)
        if not os.path.exists(folder):
            print("Checkpoint Directory does not exist! Making directory {}".format(folder))
            os.mkdir(folder)
        else:
            print("Checkpoint Directory exists! ")
        torch.save({
            'state_dict': self.nnet.state_dict(),
        }, filepath)

    def load_checkpoint(self, folder='checkpoint', filename='checkpoint.pth.tar'):
        filepath = os.path.join(folder, filename)
        if not os.path.exists(filepath):
            raise("No model in path {}".format(filepath))
        map_location = None if args.cuda else 'cpu'
        checkpoint = torch.load(filepath, map_location=map_location)
        self.nnet.load_state_dict(checkpoint['state_dict'])


# --- othello/OthelloGame.py (stub) ---
class OthelloGame:
    def __init__(self, n):
        self.n = n

    def getBoardSize(self):
        return (self.n, self.n)

    def getActionSize(self):
        return self.n * self.n + 1


# --- pit.py (the pretrained checkpoint is written first, as on the GPU machine that trained it) ---
if __name__ == "__main__":
    g = OthelloGame(6)
    folder = os.path.join(tempfile.mkdtemp(), 'pytorch')
    NNetWrapper(g).save_checkpoint(folder, '6x100x25_best.pth.tar')

    n1 = NNetWrapper(g)
    n1.load_checkpoint(folder, '6x100x25_best.pth.tar')
    pi, v = n1.predict(np.zeros((6, 6)))
    print(pi.shape, v)
