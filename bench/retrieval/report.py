"""The markdown table and the plot of a results object (``bench/results/`` by default)."""
from __future__ import annotations

import os


def markdown(results: dict) -> str:
    meta = results.get("meta", {})
    lines = [
        "| method | L | n | Recall | Precision | F1 | Sufficiency | p50 ms | p95 ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, m in results["methods"].items():
        for b, r in sorted(m["L"].items(), key=lambda kv: int(kv[0])):
            lines.append(
                f"| {name} | {b} | {r['n']} | {r['recall']:.3f} | {r['precision']:.3f} | {r['f1']:.3f} | "
                f"{r['sufficiency']:.3f} | {r['latency_p50_ms']:.0f} | {r['latency_p95_ms']:.0f} |"
            )
    notes = []
    for name, info in meta.get("method", {}).items():
        if info.get("subset"):
            how = "the run was stopped at its time budget after these" if info.get("partial") else "chosen with --subset"
            notes.append(f"- `{name}`: {info['subset']} — the first questions of the seeded order, a uniform random sample ({how}); "
                         f"wall {info.get('wall_s')} s.")
    head = (
        f"Retrieval benchmark: {meta.get('n_questions', '?')} questions, index {meta.get('index_dir', '?')} "
        f"({meta.get('n_tables', '?')} tables), raylake {meta.get('git_commit', '?')}, started {meta.get('started', '?')}, "
        f"wall {meta.get('wall_s', '?')} s.\n"
    )
    return head + "\n" + "\n".join(lines) + "\n" + ("\n" + "\n".join(notes) + "\n" if notes else "")


def plot(results: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    names = list(results["methods"])
    for name in names:
        Ls = sorted(results["methods"][name]["L"], key=int)
        xs = [int(b) for b in Ls]
        axes[0].plot(xs, [results["methods"][name]["L"][b]["f1"] for b in Ls], marker="o", label=name)
        axes[1].plot(xs, [results["methods"][name]["L"][b]["sufficiency"] for b in Ls], marker="o", label=name)
    ticks = sorted({int(b) for m in results["methods"].values() for b in m["L"]})
    for ax in axes[:2]:
        ax.set_xticks(ticks)
    axes[0].set(title="F1 vs budget L", xlabel="L", ylabel="F1")
    axes[1].set(title="Sufficiency vs budget L", xlabel="L", ylabel="Sufficiency")
    budgets = sorted({b for m in results["methods"].values() for b in m["L"]}, key=int)
    width = 0.8 / max(1, len(budgets))
    for k, b in enumerate(budgets):
        p50 = [results["methods"][n]["L"].get(b, {}).get("latency_p50_ms", 0) for n in names]
        p95 = [results["methods"][n]["L"].get(b, {}).get("latency_p95_ms", 0) for n in names]
        xs = [i + (k - (len(budgets) - 1) / 2) * width for i in range(len(names))]
        bars = axes[2].bar(xs, p50, width, label=f"L={b} p50")
        axes[2].errorbar(xs, p50, yerr=[[0] * len(p50), [max(0, h - l) for h, l in zip(p95, p50)]], fmt="none",
                         ecolor=bars.patches[0].get_facecolor(), capsize=2, alpha=0.6)
    axes[2].set_xticks(range(len(names)), names, rotation=30)
    axes[2].set_yscale("log")
    axes[2].set(title="latency per question (p50, bar to p95)", ylabel="ms")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(results: dict, report_dir: str, stem: str) -> tuple[str, str]:
    os.makedirs(report_dir, exist_ok=True)
    md = os.path.join(report_dir, f"{stem}.md")
    png = os.path.join(report_dir, f"{stem}.png")
    with open(md, "w", encoding="utf-8") as fh:
        fh.write(markdown(results))
    plot(results, png)
    return md, png
