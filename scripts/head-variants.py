"""Level-2 head variants compared offline, on features a fit reads (scripts/head-variants-dump.ts).

Chooses nothing on test: every figure is 5-fold cross-validation inside a training subset of dev
(N examples per question, seeds 1-3; all of dev with seed 1), the head's own lambda chosen by an
inner 5-fold CV as the service does. Needs numpy and torch (the vLLM venv of scripts/vllm.sh has
both):
  PY=$(ls -d ~/.cache/typed-judgment-service/vllm/venv-*/bin/python | head -1)
  $PY scripts/head-variants.py DUMP.jsonl [SIZES=100,all] [QUESTIONS=domain,positive,valence]
Variants: the service's head (standardised features, lambda in 1000..1, one-standard-error rule);
a weaker grid down to 0.03 chosen by the best mean; the label log-probabilities appended to the
features; for scores, an ordinal (proportional-odds) head on the same features.
"""
import json
import math
import sys

import numpy as np
import torch

torch.set_num_threads(1)
GRID = [1000, 300, 100, 30, 10, 3, 1]
WEAKER = GRID + [0.3, 0.1, 0.03]


def fit_multinomial(x, y, k, lam):
    n, d = x.shape
    xt, yt = torch.tensor(x), torch.tensor(y)
    w = torch.zeros(d, k, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(k, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=300, tolerance_grad=1e-6, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(xt @ w + b, yt) + (lam / n) / 2 * (w * w).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return lambda q: torch.softmax(torch.tensor(q) @ w + b, 1).detach().numpy()


def fit_ordinal(x, y, k, lam):
    n, d = x.shape
    xt, yt = torch.tensor(x), torch.tensor(y)
    w = torch.zeros(d, dtype=torch.float64, requires_grad=True)
    first = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    steps = torch.zeros(k - 2, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w, first, steps], max_iter=300, tolerance_grad=1e-6, line_search_fn="strong_wolfe")

    def probs(q):
        s = q @ w
        cuts = torch.cat([first, first + torch.cumsum(torch.exp(steps), 0)])
        below = torch.sigmoid(cuts[None, :] - s[:, None])
        edges = torch.cat([torch.zeros(len(s), 1, dtype=torch.float64), below, torch.ones(len(s), 1, dtype=torch.float64)], 1)
        return (edges[:, 1:] - edges[:, :-1]).clamp_min(1e-15)

    def closure():
        opt.zero_grad()
        loss = -torch.log(probs(xt)[torch.arange(n), yt]).mean() + (lam / n) / 2 * (w * w).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return lambda q: probs(torch.tensor(q)).detach().numpy()


def nll(p, y):
    return float(-np.mean(np.log(np.clip(p[np.arange(len(y)), y], 1e-15, 1))))


def folds_of(n, seed):
    f = np.zeros(n, int)
    f[np.random.RandomState(seed).permutation(n)] = np.arange(n) % 5
    return f


def train(variant, feats, logprobs, y, k, seed):
    """A head fitted on these rows, lambda chosen by 5-fold CV on them alone."""
    name, fitter, grid, one_se = variant
    x = np.hstack([feats, 10 * logprobs]) if name == "features + label log-probs" else feats
    mean, sd = x.mean(0), x.std(0)
    sd[sd < 1e-8] = 1
    z = (x - mean) / sd
    f = folds_of(len(y), seed)
    scores = np.array([[nll(fitter(z[f != j], y[f != j], k, lam)(z[f == j]), y[f == j]) for j in range(5)] for lam in grid])
    means = scores.mean(1)
    chosen = best = int(means.argmin())
    if one_se:
        bound = means[best] + scores[best].std(ddof=1) / math.sqrt(5)
        chosen = min((g for g in range(len(grid)) if means[g] <= bound), key=lambda g: -grid[g])
    head = fitter(z, y, k, grid[chosen])
    prep = (lambda fe, lp: np.hstack([fe, 10 * lp])) if name == "features + label log-probs" else (lambda fe, lp: fe)
    return lambda fe, lp: head((prep(fe, lp) - mean) / sd)


VARIANTS = [
    ("service (lambda 1000..1, 1-SE)", fit_multinomial, GRID, True),
    ("weaker grid (..0.03), best mean", fit_multinomial, WEAKER, False),
    ("features + label log-probs", fit_multinomial, GRID, True),
]
ORDINAL = ("ordinal (scores)", fit_ordinal, GRID, True)


def main():
    rows = [json.loads(line) for line in open(sys.argv[1])]
    sizes = [None if s == "all" else int(s) for s in (sys.argv[2] if len(sys.argv) > 2 else "100,all").split(",")]
    questions = sys.argv[3].split(",") if len(sys.argv) > 3 else sorted({r["q"] for r in rows})
    print("| Question | N/question | Variant | Accuracy | NLL |\n|---|---|---|---|---|")
    for q in questions:
        dev = [r for r in rows if r["q"] == q and r["split"] == "dev"]
        kind = rows[[r["q"] for r in rows].index(q)]["kind"]
        labels = sorted({str(r["gold"]) for r in dev})
        y = np.array([labels.index(str(r["gold"])) for r in dev])
        feats = np.array([r["features"] for r in dev])
        logprobs = np.array([r["logProbs"] for r in dev])
        for size in sizes:
            for variant in VARIANTS + ([ORDINAL] if kind == "score" else []):
                figures = []
                for seed in [1, 2, 3] if size else [1]:
                    subset = np.random.RandomState(seed).permutation(len(y))[: size or len(y)]
                    outer = folds_of(len(subset), seed + 100)
                    p = np.zeros((len(subset), len(labels)))
                    for j in range(5):
                        tr, te = subset[outer != j], subset[outer == j]
                        p[outer == j] = train(variant, feats[tr], logprobs[tr], y[tr], len(labels), seed)(feats[te], logprobs[te])
                    figures.append((np.mean(p.argmax(1) == y[subset]), nll(p, y[subset])))
                acc, loss = np.mean(figures, 0)
                print(f"| {q} | {size or 'all'} | {variant[0]} | {acc:.3f} | {loss:.3f} |", flush=True)


main()
