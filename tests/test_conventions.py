"""The project's conventions files agree with its package metadata: version, licence, the papers cited."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _project(field: str) -> str:
    """A ``[project]`` string field of pyproject.toml (no tomllib: Python 3.10 is supported)."""
    match = re.search(rf'^{field} = (?:{{ text = )?"([^"]+)"', (ROOT / "pyproject.toml").read_text(), flags=re.M)
    assert match, field
    return match.group(1)


def test_citation_names_this_version_the_licence_and_the_four_papers() -> None:
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0"
    assert citation["version"] == _project("version")
    assert citation["license"] == "MIT" and _project("license").startswith("MIT for the code")
    titles = [reference["title"].lower() for reference in citation["references"]]
    for words in ("hesrpt", "task assignment with unknown duration", "multiserver-job", "hrf"):
        assert sum(words in title for title in titles) == 1, words
    for reference in citation["references"]:
        assert reference["authors"] and reference["year"] >= 2002


def test_licence_is_mit_and_excludes_the_alibaba_trace() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License")
    assert "schedenv/data/" in text and "schedenv/data/README.md" in text


def test_changelog_has_a_section_for_this_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    versions = re.findall(r"^## \[([^\]]+)\]", text, flags=re.M)
    assert versions[0] == "Unreleased" and _project("version") in versions


OUTSIDE_DOCUMENTS = re.compile(r"\b(?:DESIGN|STYLE|ONE-ENGINE-SKETCH)(?:\.md|\s*§)")
"""Citations of the founders' planning documents, which are not in the repository: no user can follow them."""


def test_nothing_cites_a_document_outside_the_repository() -> None:
    """Code, tests, configs and docs cite docs/ pages or paper sections only (docs/architecture.md)."""
    suffixes = {".py", ".md", ".yaml", ".yml", ".toml", ".cfg", ".txt"}
    folders = ("schedenv", "baselines", "agents", "benchmarks", "tests", "docs", "examples")
    files = [ROOT / name for name in ("README.md", "CHANGELOG.md", "Makefile", "pyproject.toml", "mkdocs.yml")]
    files += [path for folder in folders for path in (ROOT / folder).rglob("*") if path.suffix in suffixes]
    citing = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in files
        if path.is_file() and path != Path(__file__)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE_DOCUMENTS.search(line)
    ]
    assert len(files) > 300 and not citing, citing
