# source: https://github.com/YuanxunLu/LiveSpeechPortraits/pull/89
# error: RuntimeError: ... If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu')
# bug: the demo accepts --device cpu and only moves the APC encoder to cuda when asked, but loads the
#      encoder's GPU-saved checkpoint with a bare torch.load, which fails on a CPU-only machine.
import argparse

import numpy as np
import torch
import yaml

from models.networks import APC_encoder

if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--id', default='May')
    parser.add_argument('--driving_audio', default='./data/Input/00083.wav')
    parser.add_argument('--device', type=str, default='cuda')
    opt = parser.parse_args()

    with open(f'./config/{opt.id}.yaml') as f:
        config = yaml.safe_load(f)
    device = torch.device(opt.device)

    APC_model = APC_encoder(config['model_params']['APC']['mel_dim'],
                            config['model_params']['APC']['hidden_size'],
                            config['model_params']['APC']['num_layers'],
                            config['model_params']['APC']['residual'])
    APC_model.load_state_dict(torch.load(config['model_params']['APC']['ckp_path']), strict=False)  # expect: DL301
    if opt.device == 'cuda':
        APC_model.cuda()
    APC_model.eval()

    mel = np.load(opt.driving_audio.replace('.wav', '_mel.npy')).astype(np.float32)
    mel_nframe = mel.shape[0]
    with torch.no_grad():
        length = torch.Tensor([mel_nframe])
        mel_features = torch.from_numpy(mel).unsqueeze(0).to(device)
        hidden_reps = APC_model.forward(mel_features, length)[0]
        hidden_reps = hidden_reps.cpu().numpy()
    print(hidden_reps.shape)
