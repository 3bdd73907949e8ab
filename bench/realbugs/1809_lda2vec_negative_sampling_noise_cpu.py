# source: https://github.com/TropComplique/lda2vec-pytorch/issues/14
# error: RuntimeError: Expected object of backend CUDA but got backend CPU for argument #3 'index'
# bug: lda2vec's negative-sampling loss draws its negative words from an alias-method sampler that
#      keeps its tables as host tensors and returns host indices; the loss module (with its word
#      embedding) is moved to the GPU with the rest of the model, so embedding the sampled noise
#      words mixes CUDA weights with CPU indices. The fix in the thread (reporter's, the issue was
#      closed with it) inserts noise = noise.to(device) after the draw; the fix only adds a line, so
#      the embedding call it precedes (the failing line) is marked (DL201: an op whose tensor
#      operands sit on different devices).
import torch
import torch.nn as nn

EPSILON = 1e-8


class AliasMultinomial(object):
    def __init__(self, probs):
        K = len(probs)
        self.q = torch.zeros(K)
        self.J = torch.zeros(K, dtype=torch.long)
        smaller, larger = [], []
        for kk, prob in enumerate(probs):
            self.q[kk] = K * prob
            (smaller if self.q[kk] < 1.0 else larger).append(kk)
        while smaller and larger:
            small, large = smaller.pop(), larger.pop()
            self.J[small] = large
            self.q[large] = (self.q[large] - 1.0) + self.q[small]
            (smaller if self.q[large] < 1.0 else larger).append(large)

    def draw(self, N):
        r = torch.randint(0, self.J.size(0), (N,))
        q = self.q.index_select(0, r).clamp(0.0, 1.0)
        j = self.J.index_select(0, r)
        b = torch.bernoulli(q).long()
        return r * b + j * (1 - b)


class NegativeSamplingLoss(nn.Module):
    def __init__(self, word_vectors, word_distribution, num_sampled=5):
        super().__init__()
        vocab_size, self.embedding_dim = word_vectors.size()
        self.embedding = nn.Embedding(vocab_size, self.embedding_dim)
        self.embedding.weight.data = word_vectors
        self.multinomial = AliasMultinomial(word_distribution)
        self.num_sampled = num_sampled

    def forward(self, pivot_words, target_words, doc_vectors):
        batch_size, window_size = target_words.size()
        context = doc_vectors + self.embedding(pivot_words)
        targets = self.embedding(target_words)
        log_targets = (targets * context.unsqueeze(1)).sum(2).sigmoid().clamp(min=EPSILON).log()
        noise = self.multinomial.draw(batch_size * window_size * self.num_sampled)
        noise = noise.view(batch_size, window_size * self.num_sampled)
        noise = self.embedding(noise)  # expect: DL201
        noise = noise.view(batch_size, window_size, self.num_sampled, self.embedding_dim)
        sampled = (noise * context.unsqueeze(1).unsqueeze(1)).sum(3).neg().sigmoid().clamp(min=EPSILON).log().sum(2)
        return (log_targets + sampled).sum(1).mean().neg()


class Lda2vecLoss(nn.Module):
    def __init__(self, n_documents, n_topics, word_vectors, unigram):
        super().__init__()
        self.doc_weights = nn.Embedding(n_documents, n_topics)
        self.topic_vectors = nn.Parameter(torch.randn(n_topics, word_vectors.size(1)))
        self.neg = NegativeSamplingLoss(word_vectors, unigram)

    def forward(self, doc_indices, pivot_words, target_words):
        doc_probs = torch.softmax(self.doc_weights(doc_indices), 1)
        doc_vectors = doc_probs @ self.topic_vectors
        return self.neg(pivot_words, target_words, doc_vectors)


if __name__ == "__main__":
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    unigram = torch.rand(30)
    model = Lda2vecLoss(10, 4, torch.randn(30, 8), unigram / unigram.sum()).to(device)
    doc = torch.randint(0, 10, (6,)).to(device)
    pivot = torch.randint(0, 30, (6,)).to(device)
    window = torch.randint(0, 30, (6, 4)).to(device)
    loss = model(doc, pivot, window)
    loss.backward()
    print(loss.item())
