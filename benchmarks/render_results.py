"""Regenerate the pages of the published RL results from their JSON (docs/rl/index.md, "Published results").

    python benchmarks/render_results.py                   # list the pages that differ from their JSON
    python benchmarks/render_results.py --update-results  # rewrite each rl_<setting>.md and .png from its .json

The published results and their replications (``results/replications/``, with ``outside/`` and ``superseded/``)
alike.

``rl_<setting>.md`` is ``agents.results.render_markdown`` of ``rl_<setting>.json`` and the ``.png`` its
``plot_learning_curves``; when they change, this command brings the committed files up to date
without training anything again.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.results import load_results, plot_learning_curves, render_markdown

RESULTS = Path(__file__).resolve().parent / "results"


def rendered(path: Path) -> str:
    """The page of the results file ``path`` (``rl_<setting>.json``)."""
    return render_markdown(load_results(path), picture=f"{path.stem}.png")


def committed_results() -> list[Path]:
    """Every committed ``rl_<setting>.json``: the published ones and the replications (kept, outside, superseded)."""
    return sorted(RESULTS.rglob("rl_*.json"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--update-results", action="store_true", help="rewrite the committed pages")
    args = parser.parse_args(argv)
    stale = []
    for path in committed_results():
        if args.update_results:
            plot_learning_curves(load_results(path), path.with_suffix(".png"))
        page, text = path.with_suffix(".md"), rendered(path)
        if page.read_text() != text:
            stale.append(str(page.relative_to(RESULTS)))
            if args.update_results:
                page.write_text(text)
    print(("rewritten: " if args.update_results else "differ from their JSON: ") + (", ".join(stale) or "none"))
    return 0 if args.update_results or not stale else 1


if __name__ == "__main__":
    sys.exit(main())
