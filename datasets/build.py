#!/usr/bin/env python3
"""Builds the dev and test datasets in `judge eval`'s format from the pinned public sources.

Usage: datasets/build.py <uci-sentences-dir> <emobank.csv>   (see datasets/README.md; stdlib only)
The selection is a seeded shuffle, so the same sources always give the same files.
"""
import csv, json, random, sys
from pathlib import Path

UCI_FILES = {"phone": "amazon_cells_labelled.txt", "movie": "imdb_labelled.txt", "restaurant": "yelp_labelled.txt"}
DOMAIN = {"type": "choice", "instructions": "What is the review sentence about?",
          "criteria": {"phone": "a mobile phone or a phone accessory", "movie": "a film",
                       "restaurant": "a restaurant, its food or its service"}}
POSITIVE = {"type": "noul", "instructions": "The sentence expresses a positive opinion."}
VALENCE = {"type": "score", "instructions": "How pleasant is the feeling the sentence expresses?",
           "criteria": ["unpleasant or negative", "neutral", "pleasant or positive"]}


def uci_items(folder):
    rows = []
    for domain, name in UCI_FILES.items():
        for n, line in enumerate((Path(folder) / name).read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            text, _, label = line.rstrip().rpartition("\t")
            text = " ".join(text.split())
            if label not in ("0", "1") or not 20 <= len(text) <= 200:
                continue
            rows.append({"id": f"uci-{domain}-{n}", "state": text,
                         "questions": {"domain": DOMAIN, "positive": POSITIVE},
                         "gold": {"domain": domain, "positive": label == "1"}})
    random.Random(18).shuffle(rows)
    return rows


def valence_level(v):
    if v <= 2.5: return 0
    if 2.9 <= v <= 3.1: return 1
    if v >= 3.5: return 2
    return None  # between the bands: too close to call, left out


def emobank_items(path, splits, per_level):
    chosen = {0: [], 1: [], 2: []}
    with open(path, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["split"] in splits]
    random.Random(18).shuffle(rows)
    for r in rows:
        text = " ".join(r["text"].split())
        level = valence_level(float(r["V"]))
        if level is None or not 25 <= len(text) <= 220 or len(chosen[level]) >= per_level:
            continue
        chosen[level].append({"id": f"emobank-{r['id']}", "state": text, "questions": {"valence": VALENCE},
                              "gold": {"valence": level}})
    items = chosen[0] + chosen[1] + chosen[2]
    random.Random(18).shuffle(items)
    return items


def main():
    uci_dir, emobank = sys.argv[1], sys.argv[2]
    uci = uci_items(uci_dir)
    out = Path(__file__).parent
    splits = {
        # dev: for choosing prompts and fitting; test: only for confirming, never for choosing.
        "dev": uci[:300] + emobank_items(emobank, {"train", "dev"}, 70),
        "test": uci[300:450] + emobank_items(emobank, {"test"}, 35),
    }
    for name, items in splits.items():
        with open(out / f"{name}.jsonl", "w", encoding="utf-8") as f:
            for item in items:
                f.write(json.dumps(item, ensure_ascii=False) + "\n")
        decisions = sum(len(i["questions"]) for i in items)
        print(f"{name}.jsonl: {len(items)} items, {decisions} decisions", file=sys.stderr)
    # Lean subsets for 2-core machines: the first items of each source, in the same proportions.
    lean = {"dev-lean": splits["dev"][:90] + splits["dev"][300:345], "test-lean": splits["test"][:60] + splits["test"][150:180]}
    for name, items in lean.items():
        with open(out / f"{name}.jsonl", "w", encoding="utf-8") as f:
            for item in items:
                f.write(json.dumps(item, ensure_ascii=False) + "\n")
        decisions = sum(len(i["questions"]) for i in items)
        print(f"{name}.jsonl: {len(items)} items, {decisions} decisions", file=sys.stderr)


main()
