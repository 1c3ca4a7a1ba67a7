"""Where raylake wins and loses, per question type (analysis of a results file; not retrieval).

Groups questions by the number of gold tables and by ``has_union_shards`` (read from the
questions file when present — the harness itself never reads it), and compares methods
on the questions *every* method answered (so a subset run of raylake is compared with
the baselines on the same questions). For each baseline it counts the questions where the
baseline is sufficient and raylake is not, and lists a few of them with both answers.

``python -m bench.retrieval.breakdown RESULTS.json --questions Q.jsonl [--budget 10] [--examples 3]``
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict

from bench.retrieval.metrics import score


def group_of(q: dict) -> tuple[str, str]:
    n = len(q["gold_tables"])
    ng = str(n) if n < 4 else "4+"
    u = q.get("has_union_shards")
    return ng, ("union" if u else "no-union") if u is not None else "?"


def analyse(results: dict, questions: list[dict], budget: int, against: str = "raylake", examples: int = 3,
            headers: dict[str, str] | None = None, only: list[str] | None = None) -> str:
    b = str(budget)
    methods = [m for m in results["predictions"] if b in results["predictions"][m] and (not only or m in only)]
    qmap = {str(q["id"]): q for q in questions}
    common = set.intersection(*(set(results["predictions"][m][b]) for m in methods)) & set(qmap)
    per = defaultdict(lambda: defaultdict(lambda: [0.0, 0.0, 0]))  # group -> method -> [f1, suf, n]
    sc = {m: {} for m in methods}
    for qid in sorted(common):
        q = qmap[qid]
        g = group_of(q)
        for m in methods:
            s = score(q["gold_tables"], results["predictions"][m][b][qid])
            sc[m][qid] = s
            for key in (g, ("all", "all"), (g[0], "*"), ("*", g[1])):
                acc = per[key][m]
                acc[0] += s["f1"]
                acc[1] += s["sufficiency"]
                acc[2] += 1
    lines = [f"Per question type at L={budget}, on the {len(common)} questions every method answered (F1 / Sufficiency):", ""]
    lines.append("| gold tables | shards | n | " + " | ".join(methods) + " |")
    lines.append("|---|---|---:|" + "---:|" * len(methods))
    order = sorted(per, key=lambda k: (k[0] == "all", k[0] == "*", k[0], k[1] == "*", k[1]))
    for key in order:
        row = per[key]
        n = row[methods[0]][2]
        cells = [f"{row[m][0] / n:.2f} / {row[m][1] / n:.2f}" for m in methods]
        lines.append(f"| {key[0]} | {key[1]} | {n} | " + " | ".join(cells) + " |")
    if against in methods:
        lines += ["", f"Questions where a baseline is sufficient and {against} is not (L={budget}), by type:", ""]
        lines.append("| baseline | " + " | ".join(f"{k[0]}/{k[1]}" for k in order if k[0] not in ("*",) and k[1] != "*") + " |")
        lines.append("|---|" + "---:|" * sum(1 for k in order if k[0] != "*" and k[1] != "*"))
        for m in methods:
            if m == against:
                continue
            cnt = defaultdict(int)
            for qid in common:
                if sc[m][qid]["sufficiency"] == 1 and sc[against][qid]["sufficiency"] == 0:
                    cnt[group_of(qmap[qid])] += 1
                    cnt[("all", "all")] += 1
            lines.append(f"| {m} | " + " | ".join(str(cnt[k]) for k in order if k[0] != "*" and k[1] != "*") + " |")
        lines += ["", f"Examples ({against} insufficient, best baseline sufficient):", ""]
        shown = defaultdict(int)
        for qid in sorted(common):
            q = qmap[qid]
            g = group_of(q)
            if sc[against][qid]["sufficiency"] == 1 or shown[g] >= examples:
                continue
            winners = [m for m in methods if m != against and sc[m][qid]["sufficiency"] == 1]
            if not winners:
                continue
            shown[g] += 1
            w = winners[0]
            lines.append(f"- [{g[0]} gold, {g[1]}] {qid}: {q['question']}")
            lines.append(f"  gold {sorted(q['gold_tables'])}; {against} {results['predictions'][against][b][qid]}; "
                         f"{w} {results['predictions'][w][b][qid]}")
            if headers:
                mine = results["predictions"][against][b][qid]
                for t in sorted(set(q["gold_tables"]) | set(mine)):
                    tag = "gold+found" if t in mine and t in q["gold_tables"] else "MISSED" if t not in mine else "extra"
                    lines.append(f"    {tag:10s} {t}: {headers.get(t, '?')}")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.retrieval.breakdown")
    p.add_argument("results")
    p.add_argument("--questions", required=True)
    p.add_argument("--budget", type=int, default=10)
    p.add_argument("--against", default="raylake")
    p.add_argument("--examples", type=int, default=3)
    p.add_argument("--out", default=None)
    p.add_argument("--methods", nargs="+", default=None, help="compare only these (the common question set shrinks to the smallest run)")
    p.add_argument("--index-dir", default=None, help="print the headers of the tables in each example")
    args = p.parse_args(argv)
    try:
        with open(args.results, encoding="utf-8") as fh:
            res = json.load(fh)
        with open(args.questions, encoding="utf-8") as fh:
            qs = [json.loads(line) for line in fh if line.strip()]
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    headers = None
    if args.index_dir:
        from raylake.index.reader import LakeIndex

        ix = LakeIndex.load(args.index_dir)
        headers = {p: ", ".join(ix.columns["name"][c] for c in ix.table_columns[t]) for t, p in enumerate(ix.paths)}
    text = analyse(res, qs, args.budget, args.against, args.examples, headers, args.methods)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
