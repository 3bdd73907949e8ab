# source: https://github.com/ondyari/FaceForensics/issues/25
# error: (issue) detect_from_video.py, line 95, in predict_with_model: output = model(preprocessed_image) -> network/
#        models.py, line 113, in forward -> xception conv1 - "RuntimeError: Expected object of backend CPU but got backend
#        CUDA for argument #2 'weight'"
# bug: detect_from_video.py's --cuda flag is off by default; test_full_image_network then keeps the frames on the CPU
#      (preprocess_image only calls .cuda() when cuda is set) and skips model.cuda(). But the model comes from a bare
#      torch.load(model_path) of a whole pickled TransferModel, which restores its weights to the GPU they were saved
#      from whenever CUDA is available, so the CPU face crop meets CUDA weights in the first convolution. The issue is
#      open and the script unchanged, so there is no twin; the program's own traceback line (the model call in
#      predict_with_model) is marked (DL203: the model sits on the GPU, the input was never moved there); the
#      torch.load without map_location is the DL301 candidate. Reductions: pretrainedmodels' Xception inside
#      TransferModel is a small conv net with the same last_linear replacement; cv2.VideoCapture, dlib's face detector
#      and the cv2 drawing/writing are a few random NumPy frames with a fixed face box; preprocess_image's cv2/PIL/
#      torchvision transform is a NumPy-to-tensor conversion with the same normalisation; the driver pickles the model
#      from the GPU when there is one, as the released models were. Upstream's bare torch.load is kept: since
#      PyTorch 2.6 it refuses this whole-model pickle unless weights_only=False is passed (the default flip announced
#      in pytorch/torchchat#1356, found with a docs search), so the script stops there on current PyTorch before
#      reaching the bug. Needs NumPy (the frames; cv2 and dlib upstream).
import argparse
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn


# --- network/models.py ---
class TransferModel(nn.Module):
    def __init__(self, modelchoice, num_out_classes=2, dropout=0.0):
        super(TransferModel, self).__init__()
        self.modelchoice = modelchoice
        self.model = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        num_ftrs = 16
        if not dropout:
            self.model.last_linear = nn.Linear(num_ftrs, num_out_classes)
        else:
            self.model.last_linear = nn.Sequential(nn.Dropout(p=dropout), nn.Linear(num_ftrs, num_out_classes))

    def forward(self, x):
        x = self.model(x)
        return x


def model_selection(modelname, num_out_classes, dropout=None):
    if modelname == 'xception':
        return TransferModel(modelchoice='xception', num_out_classes=num_out_classes), 299, True, ['image'], None
    raise NotImplementedError(modelname)


# --- classification/detect_from_video.py ---
def preprocess_image(image, cuda=True):
    image = image[:, :, ::-1].copy()
    preprocessed_image = (torch.from_numpy(image).permute(2, 0, 1).float() / 255. - 0.5) / 0.5
    preprocessed_image = preprocessed_image.unsqueeze(0)
    if cuda:
        preprocessed_image = preprocessed_image.cuda()
    return preprocessed_image


def predict_with_model(image, model, post_function=nn.Softmax(dim=1), cuda=True):
    preprocessed_image = preprocess_image(image, cuda)
    output = model(preprocessed_image)  # expect: DL203
    output = post_function(output)
    _, prediction = torch.max(output, 1)
    prediction = float(prediction.cpu().numpy())
    return int(prediction), output


def test_full_image_network(video_path, model_path, output_path, start_frame=0, end_frame=None, cuda=True):
    print('Starting: {}'.format(video_path))
    frames = [np.random.randint(0, 255, (120, 160, 3), dtype=np.uint8) for _ in range(4)]
    num_frames = len(frames)

    model, *_ = model_selection(modelname='xception', num_out_classes=2)
    if model_path is not None:
        model = torch.load(model_path)
        print('Model found in {}'.format(model_path))
    else:
        print('No model found, initializing random model.')
    if cuda:
        model = model.cuda()

    frame_num = 0
    end_frame = end_frame if end_frame else num_frames
    for image in frames:
        frame_num += 1
        if frame_num < start_frame:
            continue
        x, y, size = 40, 20, 64
        cropped_face = image[y:y + size, x:x + size]
        prediction, output = predict_with_model(cropped_face, model, cuda=cuda)
        label = 'fake' if prediction == 1 else 'real'
        output_list = ['{0:.2f}'.format(float(x)) for x in output.detach().cpu().numpy()[0]]
        print(frame_num, str(output_list) + '=>' + label)
        if frame_num >= end_frame:
            break


if __name__ == '__main__':
    p = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument('--video_path', '-i', type=str, default='video.mp4')
    p.add_argument('--model_path', '-mi', type=str, default=None)
    p.add_argument('--output_path', '-o', type=str, default='.')
    p.add_argument('--start_frame', type=int, default=0)
    p.add_argument('--end_frame', type=int, default=None)
    p.add_argument('--cuda', action='store_true')
    args = p.parse_args()
    if args.model_path is None:
        args.model_path = os.path.join(tempfile.mkdtemp(), 'full_c23.p')
        released, *_ = model_selection(modelname='xception', num_out_classes=2)
        torch.save(released.cuda() if torch.cuda.is_available() else released, args.model_path)
    test_full_image_network(**vars(args))
