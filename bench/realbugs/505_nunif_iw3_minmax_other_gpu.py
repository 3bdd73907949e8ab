# source: https://github.com/nagadomi/nunif/pull/427
# error: RuntimeError: Expected all tensors to be on the same device (iw3 with multiple GPUs)
# bug: with one depth model per GPU, depth frames come back on cuda:0 and cuda:1 alternately; the
#      post-processing stacks them as they are and normalizes each frame with min/max values kept
#      from the device of the first frame. The fix moves the min/max to the frame's device and every
#      depth to the output device before stacking.
import torch


def minmax_normalize(frame, min_value, max_value):
    frame = 1.0 - ((frame - min_value) / (max_value - min_value))  # expect: DL201
    return frame.clamp(0.0, 1.0).nan_to_num()


class EMAMinMaxScaler:
    def __init__(self, decay=0.75):
        self.decay = decay
        self.min_value = None
        self.max_value = None

    def update(self, frame):
        min_value, max_value = frame.amin(), frame.amax()
        if self.min_value is None:
            self.min_value, self.max_value = min_value, max_value
        else:
            self.min_value = self.decay * self.min_value + (1 - self.decay) * min_value.to(self.min_value.device)
            self.max_value = self.decay * self.max_value + (1 - self.decay) * max_value.to(self.max_value.device)
        return minmax_normalize(frame, self.min_value, self.max_value)


def postprocess(depth_list, scaler, batch_size=4):
    results = []
    for i in range(0, len(depth_list), batch_size):
        depths = torch.stack(depth_list[i:i + batch_size])  # expect: DL201
        results.append(torch.stack([scaler.update(d) for d in depths]))
    return results


if __name__ == "__main__":
    n = torch.cuda.device_count()
    devices = [torch.device("cuda", i) for i in range(n)] if n > 1 else [torch.device("cpu")]
    depth_models = [torch.nn.Conv2d(3, 1, 3, padding=1).to(d) for d in devices]
    frames = [torch.rand(3, 64, 64) for _ in range(8)]
    depth_list = []
    for k, frame in enumerate(frames):
        model = depth_models[k % len(depth_models)]
        d = next(model.parameters()).device
        with torch.no_grad():
            depth_list.append(model(frame.unsqueeze(0).to(d))[0])
    print(len(postprocess(depth_list, EMAMinMaxScaler())))
