# source: https://github.com/allenai/OpenBookQA/pull/5
# error: RuntimeError: Expected object of backend CUDA but got backend CPU (model on --cuda_device, batch tensors on the CPU)
# bug: evaluate_from_args loads the archived model onto args.cuda_device, but the evaluate() helper
#      it hands the model to feeds every batch from the data iterator to the model without moving it.
import argparse
import logging
from contextlib import ExitStack
from typing import Any, Dict, Iterable

from allennlp.common.tqdm import Tqdm
from allennlp.data import DatasetReader, Instance
from allennlp.data.iterators import DataIterator
from allennlp.models.archival import load_archive
from allennlp.models.model import Model
from allennlp.nn.util import move_to_device

logger = logging.getLogger(__name__)


def evaluate(model: Model,
             instances: Iterable[Instance],
             data_iterator: DataIterator,
             cuda_device: int,
             output_file: str = None) -> Dict[str, Any]:
    model.eval()
    iterator = data_iterator(instances, num_epochs=1)
    generator_tqdm = Tqdm.tqdm(iterator, total=data_iterator.get_num_batches(instances))
    with ExitStack() as stack:
        file_handle = None if output_file is None else stack.enter_context(open(output_file, 'w'))
        for batch in generator_tqdm:
            batch = move_to_device(batch, cuda_device)
            model_output = model(**batch)
            metrics = model.get_metrics()
            if file_handle:
                file_handle.write(str(model_output.get("label_probs")) + "\n")
            generator_tqdm.set_description(', '.join("%s: %.2f" % (k, v) for k, v in metrics.items()))
    return model.get_metrics(reset=True)


def evaluate_from_args(args: argparse.Namespace) -> Dict[str, Any]:
    archive = load_archive(args.archive_file, args.cuda_device, args.overrides)
    config = archive.config
    model = archive.model
    model.eval()

    dataset_reader = DatasetReader.from_params(config.pop('dataset_reader'))
    iterator = DataIterator.from_params(config.pop("iterator"))
    iterator.index_with(model.vocab)

    dataset = dataset_reader.read(args.evaluation_data_file)
    metrics = evaluate(model, dataset, iterator, args.cuda_device, args.output_file)
    for key, metric in metrics.items():
        logger.info("%s: %s", key, metric)
    return metrics


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument('archive_file')
    parser.add_argument('--evaluation_data_file')
    parser.add_argument('--output_file')
    parser.add_argument('--cuda_device', type=int, default=-1)
    parser.add_argument('-o', '--overrides', default="")
    evaluate_from_args(parser.parse_args())
