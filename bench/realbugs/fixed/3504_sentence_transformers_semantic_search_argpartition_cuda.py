# source: https://github.com/huggingface/sentence-transformers/issues/360
# fixed twin: commit 7c83441 ("Move cos_scores to gpu") inserts cos_scores = cos_scores.cpu() after the similarity.
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
    cos_scores = cos_scores.cpu()

    top_results = np.argpartition(-cos_scores, range(top_k))[0:top_k]

    print("Query:", query)

    for idx in top_results[0:top_k]:
        print(corpus[idx].strip(), "(Score: %.4f)" % (cos_scores[idx]))
