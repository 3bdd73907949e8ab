# source: https://github.com/sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning/pull/93
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.
# bug: the captioning script picks cuda-or-cpu for `device`, but loads the whole pickled encoder/decoder
#      checkpoint (saved during GPU training) without map_location, so it cannot run on a CPU-only machine.
import argparse
import json

import numpy as np
import torch
import torch.nn.functional as F
import torchvision.transforms as transforms
from PIL import Image

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def caption_image(encoder, decoder, image_path, word_map, max_len=50):
    img = np.asarray(Image.open(image_path).convert("RGB").resize((256, 256)))
    img = img.transpose(2, 0, 1) / 255.
    img = torch.FloatTensor(img).to(device)
    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    image = normalize(img).unsqueeze(0)

    encoder_out = encoder(image)
    encoder_out = encoder_out.view(1, -1, encoder_out.size(3))
    prev_word = torch.LongTensor([[word_map['<start>']]]).to(device)
    h, c = decoder.init_hidden_state(encoder_out)
    seq = []
    for _ in range(max_len):
        embeddings = decoder.embedding(prev_word).squeeze(1)
        awe, alpha = decoder.attention(encoder_out, h)
        gate = decoder.sigmoid(decoder.f_beta(h))
        h, c = decoder.decode_step(torch.cat([embeddings, gate * awe], dim=1), (h, c))
        scores = F.log_softmax(decoder.fc(h), dim=1)
        next_word = scores.argmax(dim=1)
        seq.append(next_word.item())
        if next_word.item() == word_map['<end>']:
            break
        prev_word = next_word.unsqueeze(1)
    return seq


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--img', '-i')
    parser.add_argument('--model', '-m')
    parser.add_argument('--word_map', '-wm')
    args = parser.parse_args()

    checkpoint = torch.load(args.model)  # expect: DL301
    decoder = checkpoint['decoder']
    decoder = decoder.to(device)
    decoder.eval()
    encoder = checkpoint['encoder']
    encoder = encoder.to(device)
    encoder.eval()

    with open(args.word_map, 'r') as j:
        word_map = json.load(j)
    rev_word_map = {v: k for k, v in word_map.items()}
    seq = caption_image(encoder, decoder, args.img, word_map)
    print(' '.join(rev_word_map[i] for i in seq))
