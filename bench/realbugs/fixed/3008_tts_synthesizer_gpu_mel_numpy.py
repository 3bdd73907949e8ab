# source: https://github.com/coqui-ai/TTS/pull/742
# fixed twin: commit 8f57f8ad (the PR's change, in the repository's history) copies the mel spectrogram to the host
#             with .detach().cpu().numpy(). Needs NumPy, as the bug file does.
import time
from typing import List

import torch
import torch.nn as nn


class TinyTacotron(nn.Module):
    def __init__(self, num_chars=40, n_mels=16):
        super().__init__()
        self.embedding = nn.Embedding(num_chars, 32)
        self.decoder = nn.Linear(32, n_mels)

    def inference(self, text_inputs, aux_input=None):
        mel = self.decoder(self.embedding(text_inputs)).repeat_interleave(4, dim=1)
        return {"model_outputs": mel, "alignments": None}


class TinyVocoder(nn.Module):
    def __init__(self, n_mels=16, hop=32):
        super().__init__()
        self.proj = nn.Linear(n_mels, hop)

    def inference(self, c):
        return torch.tanh(self.proj(c)).flatten(1)


class AudioProcessor:
    def __init__(self, sample_rate=22050):
        self.sample_rate = sample_rate

    def denormalize(self, s):
        return s * 4.0

    def normalize(self, s):
        return s / 4.0


def text_to_seq(text):
    return [min(ord(c) - 32, 39) if ord(c) >= 32 else 0 for c in text.lower()]


def numpy_to_torch(array, dtype, cuda=False):
    tensor = torch.as_tensor(array, dtype=dtype)
    if cuda:
        return tensor.cuda()
    return tensor


def run_model_torch(model, inputs, speaker_id=None, style_mel=None, d_vector=None):
    return model.inference(inputs, aux_input={"speaker_ids": speaker_id, "d_vectors": d_vector})


def synthesis(model, text, CONFIG, use_cuda, ap, speaker_id=None, use_griffin_lim=False):
    text_inputs = numpy_to_torch(text_to_seq(text), torch.long, cuda=use_cuda).unsqueeze(0)
    outputs = run_model_torch(model, text_inputs, speaker_id)
    model_outputs = outputs["model_outputs"][0].data.cpu()
    wav = None
    if use_griffin_lim:
        wav = model_outputs.mean(dim=1).repeat_interleave(32)
    return {"wav": wav, "outputs": outputs, "model_outputs": model_outputs}


class Synthesizer(object):
    def __init__(self, use_cuda: bool = False, with_vocoder: bool = True):
        self.use_cuda = use_cuda
        self.tts_model = None
        self.vocoder_model = None
        if self.use_cuda:
            assert torch.cuda.is_available(), "CUDA is not availabe on this machine."
        self._load_tts(use_cuda)
        if with_vocoder:
            self._load_vocoder(use_cuda)

    def _load_tts(self, use_cuda: bool) -> None:
        self.tts_config = {"audio": {"sample_rate": 22050}}
        self.ap = AudioProcessor(**self.tts_config["audio"])
        self.tts_model = TinyTacotron().eval()
        if use_cuda:
            self.tts_model.cuda()

    def _load_vocoder(self, use_cuda: bool) -> None:
        self.vocoder_config = {"audio": {"sample_rate": 22050}}
        self.vocoder_ap = AudioProcessor(**self.vocoder_config["audio"])
        self.vocoder_model = TinyVocoder().eval()
        if use_cuda:
            self.vocoder_model.cuda()

    def split_into_sentences(self, text) -> List[str]:
        return [s.strip() + "." for s in text.split(".") if s.strip()]

    @torch.no_grad()
    def tts(self, text: str, speaker_idx: str = "") -> List[float]:
        start_time = time.time()
        wavs = []
        sens = self.split_into_sentences(text)
        use_gl = self.vocoder_model is None
        for sen in sens:
            outputs = synthesis(model=self.tts_model, text=sen, CONFIG=self.tts_config, use_cuda=self.use_cuda,
                                ap=self.ap, speaker_id=None, use_griffin_lim=use_gl)
            waveform = outputs["wav"]
            mel_postnet_spec = outputs["outputs"]["model_outputs"][0].detach().cpu().numpy()
            if not use_gl:
                mel_postnet_spec = self.ap.denormalize(mel_postnet_spec.T).T
                device_type = "cuda" if self.use_cuda else "cpu"
                vocoder_input = self.vocoder_ap.normalize(mel_postnet_spec.T)
                vocoder_input = torch.tensor(vocoder_input).unsqueeze(0)
                waveform = self.vocoder_model.inference(vocoder_input.transpose(1, 2).to(device_type))
            if self.use_cuda and not use_gl:
                waveform = waveform.cpu()
            waveform = waveform.squeeze()
            wavs += waveform.tolist()
            wavs += [0] * 100
        process_time = time.time() - start_time
        print(f" > Processing time: {process_time}")
        return wavs


if __name__ == "__main__":
    synthesizer = Synthesizer(use_cuda=torch.cuda.is_available())
    wav = synthesizer.tts("This is a test. It has two sentences.")
    print(len(wav))
