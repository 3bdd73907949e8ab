# source: https://github.com/m-bain/frozen-in-time/issues/4
# fixed twin: commit 51325de ("add video to gpu") moves data['video'] (each tensor of a list, or the tensor) with
#             .cuda() at the top of _valid_epoch's loop.
import torch
import torch.nn as nn
import torch.nn.functional as F


def sim_matrix(a, b, eps=1e-8):
    a_n, b_n = a.norm(dim=1)[:, None], b.norm(dim=1)[:, None]
    a_norm = a / torch.max(a_n, eps * torch.ones_like(a_n))
    b_norm = b / torch.max(b_n, eps * torch.ones_like(b_n))
    return torch.mm(a_norm, b_norm.transpose(0, 1))


# --- model/model.py ---
class TextModel(nn.Module):
    def __init__(self, vocab=100, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)

    def forward(self, input_ids, attention_mask=None):
        return {'pooler_output': (self.emb(input_ids) * attention_mask.unsqueeze(-1)).mean(1)}


class FrozenInTime(nn.Module):
    def __init__(self, text_params, projection_dim=16):
        super().__init__()
        self.text_params = text_params
        self.text_model = TextModel()
        self.video_model = nn.Sequential(nn.Conv3d(3, 8, 3, padding=1), nn.AdaptiveAvgPool3d(1), nn.Flatten())
        self.txt_proj = nn.Linear(32, projection_dim)
        self.vid_proj = nn.Linear(8, projection_dim)

    def forward(self, data, return_embeds=True):
        text_data = data['text']
        video_data = data['video']
        text_embeddings = self.compute_text(text_data)
        video_embeddings = self.compute_video(video_data)
        if return_embeds:
            return text_embeddings, video_embeddings
        return sim_matrix(text_embeddings, video_embeddings)

    def compute_text(self, text_data):
        if self.text_params['model'].startswith('bert'):
            text_embeddings = self.text_model(text_data['input_ids'], attention_mask=text_data['attention_mask'])[
                'pooler_output']
        else:
            raise NotImplementedError
        text_embeddings = self.txt_proj(text_embeddings)
        return text_embeddings

    def compute_video(self, video_data):
        video_embeddings = self.video_model(video_data)
        video_embeddings = self.vid_proj(video_embeddings)
        return video_embeddings


class NormSoftmaxLoss(nn.Module):
    def __init__(self, temperature=0.05):
        super().__init__()
        self.temperature = temperature

    def forward(self, x):
        i_logsm = F.log_softmax(x / self.temperature, dim=1)
        j_logsm = F.log_softmax(x.t() / self.temperature, dim=1)
        return - i_logsm.diag().mean() - j_logsm.diag().mean()


# --- base/base_trainer.py ---
class BaseTrainer:
    def __init__(self, model, loss, metrics, optimizer, config, writer=None, init_val=False):
        self.config = config
        self.init_val = init_val
        self.device, device_ids = self._prepare_device(config['n_gpu'])
        self.model = model.to(self.device)
        self.model.device = self.device
        if len(device_ids) > 1:
            self.model = torch.nn.DataParallel(model, device_ids=device_ids)
        self.loss = loss
        self.metrics = metrics
        self.optimizer = optimizer

        cfg_trainer = config['trainer']
        self.epochs = cfg_trainer['epochs']
        self.start_epoch = 1
        self.writer = writer

    def train(self):
        """
        Full training logic
        """
        if self.init_val:
            _ = self._valid_epoch(-1)

        for epoch in range(self.start_epoch, self.epochs + 1):
            result = self._train_epoch(epoch)

            # save logged informations into log dict
            log = {'epoch': epoch}
            for key, value in result.items():
                log[key] = value

            # print logged informations to the screen
            for key, value in log.items():
                print('    {:15s}: {}'.format(str(key), value))

    def _prepare_device(self, n_gpu_use):
        n_gpu = torch.cuda.device_count()
        if n_gpu_use > 0 and n_gpu == 0:
            n_gpu_use = 0
        if n_gpu_use > n_gpu:
            n_gpu_use = n_gpu
        device = torch.device('cuda:0' if n_gpu_use > 0 else 'cpu')
        list_ids = list(range(n_gpu_use))
        return device, list_ids


# --- trainer/trainer.py ---
class Trainer(BaseTrainer):
    def __init__(self, model, loss, metrics, optimizer, config, data_loader, valid_data_loader=None, writer=None,
                 tokenizer=None, init_val=False):
        super().__init__(model, loss, metrics, optimizer, config, writer, init_val=init_val)
        self.init_val = True
        self.config = config
        self.data_loader = data_loader
        self.valid_data_loader = valid_data_loader
        self.do_validation = self.valid_data_loader is not None
        self.tokenizer = tokenizer

    def _train_epoch(self, epoch):
        self.model.train()
        total_loss = 0
        for batch_idx, data in enumerate(self.data_loader):
            if isinstance(data['video'], list):
                data['video'] = [x.to(self.device) for x in data['video']]
            else:
                data['video'] = data['video'].to(self.device)
            if self.tokenizer is not None:
                data['text'] = self.tokenizer(data['text'], return_tensors='pt', padding=True, truncation=True)
            data['text'] = {key: val.cuda() for key, val in data['text'].items()}

            self.optimizer.zero_grad()
            text_embeds, video_embeds = self.model(data)
            output = sim_matrix(text_embeds, video_embeds)
            loss = self.loss(output)
            loss.backward()
            self.optimizer.step()
            total_loss += loss.detach().item()

        log = {'loss': total_loss / len(self.data_loader)}

        if self.do_validation:
            val_log = self._valid_epoch(epoch)
            log.update(val_log)

        return log

    def _valid_epoch(self, epoch):
        self.model.eval()
        total_val_loss = 0
        text_embed_arr = []
        vid_embed_arr = []
        with torch.no_grad():
            for batch_idx, data in enumerate(self.valid_data_loader):
                if isinstance(data['video'], list):
                    data['video'] = [x.cuda() for x in data['video']]
                else:
                    data['video'] = data['video'].cuda()
                if self.tokenizer is not None:
                    data['text'] = self.tokenizer(data['text'], return_tensors='pt', padding=True, truncation=True)
                data['text'] = {key: val.cuda() for key, val in data['text'].items()}
                text_embed, vid_embed = self.model(data, return_embeds=True)
                text_embed_arr.append(text_embed.cpu())
                vid_embed_arr.append(vid_embed.cpu())
                sims_batch = sim_matrix(text_embed, vid_embed)
                loss = self.loss(sims_batch)
                total_val_loss += loss.item()
        return {'val_loss': total_val_loss / len(self.valid_data_loader)}


# --- train.py ---
if __name__ == "__main__":
    def batches(n):
        return [{'video': torch.randn(4, 3, 4, 16, 16),
                 'text': {'input_ids': torch.randint(0, 100, (4, 8)), 'attention_mask': torch.ones(4, 8)}}
                for _ in range(n)]

    model = FrozenInTime({'model': 'bert-base-uncased'})
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    config = {'n_gpu': 1, 'trainer': {'epochs': 1}}
    trainer = Trainer(model, NormSoftmaxLoss(), [], optimizer,
                      config=config,
                      data_loader=batches(2),
                      valid_data_loader=batches(2))
    trainer.train()
