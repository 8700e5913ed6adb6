"""MkDocs hooks of the documentation site (``hooks:`` in ``mkdocs.yml``).

- The committed figures of ``benchmarks/results/`` join the site under ``results/``, beside the pages
  that include their Markdown (``docs/results/*.md``), so the figures' own relative image links
  resolve and the site always shows the files the benchmarks last wrote (nothing is copied into docs/).
- The ``>>>`` examples of the docstrings become ``pycon`` code blocks: plain Markdown would read
  ``>>>`` as three nested block quotes.
"""

from __future__ import annotations

import re
from pathlib import Path

from markdown import Markdown
from markdown.extensions import Extension
from markdown.preprocessors import Preprocessor
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

RESULTS = "benchmarks/results"
"""The folder of committed benchmark outputs, relative to the repository root (mkdocs.yml's folder)."""

_FENCE = re.compile(r"^\s*(```|~~~)")
_PROMPT = re.compile(r"^(\s*)>>>( |$)")


class DoctestBlocks(Preprocessor):
    """Wrap each run of lines that starts with a ``>>>`` prompt (up to the next blank line) in a code fence."""

    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        in_fence = False
        i = 0
        while i < len(lines):
            line = lines[i]
            if _FENCE.match(line):
                in_fence = not in_fence
            prompt = None if in_fence else _PROMPT.match(line)
            if prompt is None or (out and out[-1].strip()):
                out.append(line)
                i += 1
                continue
            indent = prompt.group(1)
            out.append(f"{indent}```pycon")
            while i < len(lines) and lines[i].strip():
                out.append(lines[i])
                i += 1
            out.append(f"{indent}```")
        return out


class DoctestExtension(Extension):
    """The Markdown extension that registers ``DoctestBlocks`` before the fenced-code preprocessor."""

    def extendMarkdown(self, md: Markdown) -> None:
        md.preprocessors.register(DoctestBlocks(md), "schedenv_doctest_blocks", 27)


@event_priority(100)  # before mkdocstrings builds its Markdown from the same extension list
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    config.markdown_extensions.append(DoctestExtension())
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    root = Path(config.config_file_path).parent
    for image in sorted((root / RESULTS).rglob("*.png")):
        src_uri = f"results/{image.relative_to(root / RESULTS).as_posix()}"
        files.append(File.generated(config, src_uri, abs_src_path=str(image)))
    return files
