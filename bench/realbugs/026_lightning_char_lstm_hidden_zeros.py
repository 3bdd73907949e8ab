# source: https://github.com/Lightning-AI/pytorch-lightning/issues/3738
# error: RuntimeError: Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden tensor at cpu
# bug: the character-level LSTM's hidden and cell states are initialised with torch.zeros in the
#      training step; Lightning puts the model and batch on the GPU but these stay on the CPU.
import pytorch_lightning as pl
import torch
import torch.nn as nn


class RNN(pl.LightningModule):
    lr = 0.0005

    def __init__(self, input_size, hidden_size, embeding_size, n_categories, n_layers, output_size, p):
        super().__init__()
        self.criterion = nn.CrossEntropyLoss()
        self.n_layers = n_layers
        self.hidden_size = hidden_size
        self.embeding = nn.Embedding(input_size + n_categories, embeding_size)
        self.lstm = nn.LSTM(embeding_size + n_categories, hidden_size, n_layers, dropout=p)
        self.out_fc = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(p)

    def forward(self, batch_of_category, batch_of_letter, hidden, cell):
        embeding = self.dropout(self.embeding(batch_of_letter))
        category_plus_letter = torch.cat((batch_of_category, embeding), 1)
        sequence = category_plus_letter.unsqueeze(0)
        out, (hidden, cell) = self.lstm(sequence, (hidden, cell))
        return self.out_fc(self.dropout(out.squeeze(0))), hidden, cell

    def training_step(self, batch, batch_idx):
        categories, letters, targets = batch
        batch_size = letters.size(1)
        hidden = torch.zeros(self.n_layers, batch_size, self.hidden_size)  # expect: DL202
        cell = torch.zeros(self.n_layers, batch_size, self.hidden_size)  # expect: DL202
        loss = 0
        for i in range(letters.size(0)):
            output, hidden, cell = self(categories, letters[i], hidden, cell)
            loss += self.criterion(output, targets[i])
        return loss / letters.size(0)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)
