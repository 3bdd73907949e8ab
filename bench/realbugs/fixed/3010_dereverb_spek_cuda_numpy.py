# source: https://github.com/BrasD99/HeyGenClone/issues/3
# fixed twin: commit 9ea0c72 hands the ONNX session -spek.cpu().numpy() and spek.cpu().numpy(); commit da80c4d moves
#             the session's output back with torch.tensor(spec_pred).to(self.device) before istft and the result to
#             the host with .cpu(). Needs NumPy, as the bug file does.
import numpy as np
import torch


class Conv_TDF_net_trim:
    def __init__(self, device, model_name, target_name, L, dim_f, dim_t, n_fft, hop=64):
        self.dim_c = 4
        self.dim_f = dim_f
        self.dim_t = 2 ** dim_t
        self.n_fft = n_fft
        self.hop = hop
        self.n_bins = self.n_fft // 2 + 1
        self.chunk_size = hop * (self.dim_t - 1)
        self.window = torch.hann_window(window_length=self.n_fft, periodic=True).to(device)
        self.target_name = target_name
        out_c = self.dim_c * 4 if target_name == "*" else self.dim_c
        self.freq_pad = torch.zeros([1, out_c, self.n_bins - self.dim_f, self.dim_t]).to(device)
        self.n = L // 2

    def stft(self, x):
        x = x.reshape([-1, self.chunk_size])
        x = torch.stft(x, n_fft=self.n_fft, hop_length=self.hop, window=self.window, center=True, return_complex=True)
        x = torch.view_as_real(x)
        x = x.permute([0, 3, 1, 2])
        x = x.reshape([-1, 2, 2, self.n_bins, self.dim_t]).reshape([-1, self.dim_c, self.n_bins, self.dim_t])
        return x[:, :, : self.dim_f]

    def istft(self, x, freq_pad=None):
        freq_pad = self.freq_pad.repeat([x.shape[0], 1, 1, 1]) if freq_pad is None else freq_pad
        x = torch.cat([x, freq_pad], -2)
        c = 4 * 2 if self.target_name == "*" else 2
        x = x.reshape([-1, c, 2, self.n_bins, self.dim_t]).reshape([-1, 2, self.n_bins, self.dim_t])
        x = x.permute([0, 2, 3, 1]).contiguous()
        x = torch.view_as_complex(x)
        x = torch.istft(x, n_fft=self.n_fft, hop_length=self.hop, window=self.window, center=True)
        return x.reshape([-1, c, self.chunk_size])


def get_models(device, dim_f, dim_t, n_fft):
    return Conv_TDF_net_trim(device=device, model_name="Conv-TDF", target_name="vocals", L=11, dim_f=dim_f,
                             dim_t=dim_t, n_fft=n_fft)


class InferenceSession:
    def run(self, output_names, feeds):
        return [feeds["input"] * 0.9]


class Predictor:
    def __init__(self, args):
        device_type = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device_type)
        self.args = args
        self.model_ = get_models(device=self.device, dim_f=args.dim_f, dim_t=args.dim_t, n_fft=args.n_fft)
        self.model = InferenceSession()

    def demix(self, mix):
        samples = mix.shape[-1]
        margin = self.args.margin
        chunk_size = self.args.chunks * 4410
        if margin > chunk_size:
            margin = chunk_size
        segmented_mix = {}
        if self.args.chunks == 0 or samples < chunk_size:
            chunk_size = samples
        counter = -1
        for skip in range(0, samples, chunk_size):
            counter += 1
            s_margin = 0 if counter == 0 else margin
            end = min(skip + chunk_size + margin, samples)
            segmented_mix[skip] = mix[:, skip - s_margin:end].copy()
            if end == samples:
                break
        return self.demix_base(segmented_mix, margin_size=margin)

    def demix_base(self, mixes, margin_size):
        chunked_sources = []
        for mix in mixes:
            cmix = mixes[mix]
            sources = []
            n_sample = cmix.shape[1]
            model = self.model_
            trim = model.n_fft // 2
            gen_size = model.chunk_size - 2 * trim
            pad = gen_size - n_sample % gen_size
            mix_p = np.concatenate((np.zeros((2, trim)), cmix, np.zeros((2, pad)), np.zeros((2, trim))), 1)
            mix_waves = []
            i = 0
            while i < n_sample + pad:
                mix_waves.append(np.array(mix_p[:, i:i + model.chunk_size]))
                i += gen_size
            mix_waves = torch.tensor(np.array(mix_waves), dtype=torch.float32).to(self.device)
            with torch.no_grad():
                _ort = self.model
                spek = model.stft(mix_waves)
                spec_pred = (-_ort.run(None, {"input": -spek.cpu().numpy()})[0] * 0.5
                             + _ort.run(None, {"input": spek.cpu().numpy()})[0] * 0.5)
                tar_waves = model.istft(torch.tensor(spec_pred).to(self.device)).cpu()
                tar_signal = tar_waves[:, :, trim:-trim].transpose(0, 1).reshape(2, -1).numpy()[:, :-pad]
                start = 0 if mix == 0 else margin_size
                end = None if mix == list(mixes.keys())[::-1][0] else -margin_size
                if margin_size == 0:
                    end = None
                sources.append(tar_signal[:, start:end])
            chunked_sources.append(sources)
        return np.concatenate(chunked_sources, axis=-1)

    def prediction(self, mix):
        sources = self.demix(mix)
        opt = sources[0].T
        return mix.T - opt, opt


class MDXNetDereverb:
    def __init__(self, chunks):
        self.chunks = chunks
        self.margin = 441
        self.dim_t = 5
        self.dim_f = 96
        self.n_fft = 256
        self.denoise = True
        self.pred = Predictor(self)

    def split(self, mix):
        return self.pred.prediction(mix)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    mix = rng.standard_normal((2, 9000)).astype(np.float32) * 0.1
    voice, noise = MDXNetDereverb(chunks=1).split(mix)
    print(voice.shape, noise.shape)
