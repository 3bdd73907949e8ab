# source: https://github.com/kitzeslab/opensoundscape/pull/201
# error: RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same
# bug: predict() moves the model to cuda when available but feeds it the CPU batch from the DataLoader,
#      and without softmax it converts the raw predictions with .numpy() without .cpu().
import pandas as pd
import torch
from torch.nn.functional import softmax


def predict(model, prediction_dataset, batch_size=1, num_workers=0, apply_softmax=False, label_dict=None):
    if torch.cuda.is_available():
        device = torch.device("cuda")
    else:
        device = torch.device("cpu")
    model.eval()
    model.to(device)

    dataloader = torch.utils.data.DataLoader(
        prediction_dataset, batch_size=batch_size, shuffle=False, num_workers=num_workers,
    )

    all_predictions = []
    for i, inputs in enumerate(dataloader):
        predictions = model(inputs["X"].to(device))
        if apply_softmax:
            softmax_val = softmax(predictions, 1).detach().cpu().numpy()
            for x in softmax_val:
                all_predictions.append(x)
        else:
            for x in predictions.detach().cpu().numpy():
                all_predictions.append(list(x))

    img_paths = prediction_dataset.df[prediction_dataset.filename_column].values
    pred_df = pd.DataFrame(index=img_paths, data=all_predictions)
    if label_dict is not None:
        pred_df = pred_df.rename(columns=label_dict)
    return pred_df
