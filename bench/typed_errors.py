"""How far the typed answers can be trusted (issue 27): per half of the LoCoMo dev split, the token F1 overall and per
category, the answers asserted with F1 0, the answers that say "not sure", and, beside an earlier run, the not-sure
answers that were right before (F1 > 0 then: lost).

    ripple eval locomo shared/data/locomo-dev.json --modes ripple --answer typed --out OUT
    python bench/typed_errors.py OUT/partial-ripple.jsonl [--before EARLIER/partial-ripple.jsonl] [--list]

The rules are chosen on the tuning half (conv-26, -30, -41); the held-out half (conv-42, -43) is only reported.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from ripplecli.eval.locomo import ASKED_CATEGORIES, CATEGORIES
from ripplecli.eval.metrics import is_abstention, mean

HALVES = {
    "tuning": ("conv-26", "conv-30", "conv-41"),
    "held-out": ("conv-42", "conv-43"),
    "whole": ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43"),
}
Record = dict[str, Any]


def records(path: Path) -> dict[tuple[str, int], Record]:
    """(conversation, question index) → the answered result of a `partial-<mode>.jsonl` file."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {(r["conversation"], r["index"]): r for r in rows if "f1" in r}


def unsure(r: Record) -> bool:
    """An answer that says "not sure" (a run from before the field existed has none)."""
    return r.get("answer_sure") is False


def asserted_wrong(r: Record) -> bool:
    """An answer given as the answer (found, not "not sure") that shares no token with the gold answer."""
    return r["answer_found"] and not unsure(r) and r["f1"] == 0


def half_row(rows: list[Record], before: dict[tuple[str, int], Record] | None) -> dict[str, Any]:
    """F1 overall and per category (1-4), abstention on category 5, and the trust counts of one half."""
    asked = [r for r in rows if r["category"] in ASKED_CATEGORIES]
    adversarial = [r for r in rows if r["category"] == 5]
    row: dict[str, Any] = {"questions": len(asked), "F1": mean([r["f1"] for r in asked])}
    for category in ASKED_CATEGORIES:
        row[CATEGORIES[category]] = mean([r["f1"] for r in asked if r["category"] == category])
    row["abstain (cat 5)"] = mean([float(is_abstention(r["answer"])) for r in adversarial])
    row["asserted F1 0"] = sum(asserted_wrong(r) for r in asked)
    row["not sure"] = sum(unsure(r) for r in asked)
    row["not found"] = sum(not r["answer_found"] for r in asked)
    if before is not None:
        earlier = [before.get((r["conversation"], r["index"])) for r in asked if unsure(r)]
        row["lost right"] = sum(1 for b in earlier if b is not None and b["f1"] > 0)
    return row


def table(found: dict[tuple[str, int], Record], before: dict[tuple[str, int], Record] | None) -> list[str]:
    """The markdown table: one row per half."""
    rows = {name: half_row([r for k, r in found.items() if k[0] in convs], before) for name, convs in HALVES.items()}
    header = list(next(iter(rows.values())))
    lines = ["| half | " + " | ".join(header) + " |", "|---" * (len(header) + 1) + "|"]
    for name, row in rows.items():
        cells = [f"{v:.3f}" if isinstance(v, float) else str(v) for v in row.values()]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def listing(found: dict[tuple[str, int], Record], convs: tuple[str, ...]) -> list[str]:
    """Every asserted-but-wrong answer of a half, by type: question, gold, the answer's span."""
    wrong = [r for k, r in found.items() if k[0] in convs and r["category"] in ASKED_CATEGORIES and asserted_wrong(r)]
    lines = [f"by type: {dict(Counter(r['answer_type'] for r in wrong).most_common())}"]
    for r in sorted(wrong, key=lambda r: (r["answer_type"], r["conversation"], r["index"])):
        lines.append(f"[{r['answer_type']}] {r['conversation']}#{r['index']} {r['question']}")
        lines.append(f"    gold: {r['gold_answer']} → {r['answer']}")
    return lines


def main() -> None:
    """Print the table (and, with --list, the asserted-but-wrong answers of the tuning half)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("partial", type=Path, help="partial-ripple.jsonl of a `--answer typed` run")
    parser.add_argument("--before", type=Path, help="the same file of an earlier run: counts the right answers lost")
    parser.add_argument("--list", choices=list(HALVES), help="list the asserted-but-wrong answers of this half")
    args = parser.parse_args()
    found = records(args.partial)
    before = records(args.before) if args.before else None
    print("\n".join(table(found, before)))
    if args.list:
        print("\n".join(listing(found, HALVES[args.list])))


if __name__ == "__main__":
    main()
