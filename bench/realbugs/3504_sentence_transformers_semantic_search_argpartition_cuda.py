# source: https://github.com/huggingface/sentence-transformers/issues/360
# error: TypeError: can't convert CUDA tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
#        (examples/applications/semantic_search.py line 38: top_results = np.argpartition(-cos_scores, ...))
# bug: the semantic-search example encodes the corpus and each query with convert_to_tensor=True; SentenceTransformer
#      runs on CUDA when it is available (SentenceTransformer.py at 7c83441: device = "cuda" if
#      torch.cuda.is_available() else "cpu"), so the embeddings and util.pytorch_cos_sim's scores are CUDA tensors,
#      and np.argpartition converts -cos_scores through NumPy. The fix (commit 7c83441, "Move cos_scores to gpu", the
#      day of the report) inserts cos_scores = cos_scores.cpu() after the similarity; the NumPy call the traceback
#      points to, right below the insertion, is marked (DL204). The program is the example as it was before the fix
#      (commit 7c83441^), with other sentences; sentence_transformers and NumPy are imported as upstream (both absent
#      here), so the file does not run on this machine.
from sentence_transformers import SentenceTransformer, util
import numpy as np

embedder = SentenceTransformer('distilbert-base-nli-stsb-mean-tokens')

# a small corpus to search
corpus = ['A chef slices onions in the kitchen.',
          'Someone is baking bread.',
          'A child carries a puppy.',
          'A rider gallops across the beach.',
          'A violinist plays on stage.',
          'Two hikers walk through a forest.',
          'A horse jumps a fence in a paddock.',
          'A drummer keeps the beat.',
          'A leopard stalks an antelope.'
          ]
corpus_embeddings = embedder.encode(corpus, convert_to_tensor=True)

# queries to look up
queries = ['A cook is preparing dinner.', 'A musician plays percussion.', 'A big cat hunts.']

# the top_k corpus sentences closest to each query by cosine similarity
top_k = 5
for query in queries:
    query_embedding = embedder.encode(query, convert_to_tensor=True)
    cos_scores = util.pytorch_cos_sim(query_embedding, corpus_embeddings)[0]

    top_results = np.argpartition(-cos_scores, range(top_k))[0:top_k]  # expect: DL204

    print("Query:", query)

    for idx in top_results[0:top_k]:
        print(corpus[idx].strip(), "(Score: %.4f)" % (cos_scores[idx]))
