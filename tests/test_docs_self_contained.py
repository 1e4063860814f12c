"""The repository's documentation stands alone: nothing points outside the repository.

1. No tracked text file cites the project's old outside rules or interface documents, or a path beside the
   repository (a sibling ``shared`` folder): users of a checkout never have those. The rules, the match-record
   format and the public names are documented in docs/ and in the module docstrings.
2. Every relative Markdown link in the tracked Markdown files (README.md, docs/*.md, ...) points to a file that
   exists inside the repository, and an anchor (``rules.md#23-dealing``) to a heading or anchor of that file.
3. Every ``docs/<name>.md`` a tracked file mentions exists, and every section of docs/rules.md that is cited by
   number (``docs/rules.md §2.3``, ``rules.md §4.7``) exists there.

The patterns below are spelled so that this file does not match them itself.
"""
from __future__ import annotations

import re
import subprocess
import unicodedata
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parents[1]

#: Citations that must not appear in any tracked text file.
FORBIDDEN = {
    "the outside rules document": re.compile(r"\bRULES\.md\b"),
    "the outside interface document": re.compile(r"\bINTERFACE\.md\b", re.IGNORECASE),
    "a path beside the repository": re.compile(r"\.\./+shared\b"),
    "the outside seed texts": re.compile(r"\bshared/+seeds\b"),
    "an absolute path outside the repository": re.compile(r"/work/+shared\b"),
}


@cache
def tracked_files() -> tuple[str, ...]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        pytest.skip("not a git checkout (git ls-files failed)")
    return tuple(name for name in out.stdout.decode("utf-8").split("\0") if name)


@cache
def text_of(name: str) -> str | None:
    """The file's text, or None for a binary, non-UTF-8 or missing file."""
    try:
        data = (REPO / name).read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def text_files() -> list[str]:
    return [name for name in tracked_files() if text_of(name) is not None]


def markdown_files() -> list[str]:
    return [name for name in text_files() if name.endswith(".md")]


def test_there_are_docs_to_check():
    names = markdown_files()
    assert "README.md" in names and "docs/rules.md" in names and "docs/records.md" in names


def test_no_tracked_file_points_outside_the_repository():
    problems = []
    for name in text_files():
        for lineno, line in enumerate(text_of(name).splitlines(), start=1):
            for what, pattern in FORBIDDEN.items():
                if pattern.search(line):
                    problems.append(f"{name}:{lineno}: cites {what}: {line.strip()[:120]}")
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------------------------------- Markdown links

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
CODE_SPAN = re.compile(r"`+[^`]*`+")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"", re.IGNORECASE)


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    out, fenced = [], False
    for lineno, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append((lineno, line))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: inline markup dropped, lower case, punctuation removed, spaces to dashes."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "")
    text = unicodedata.normalize("NFC", text).strip().lower()
    text = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LNM")
    return text.replace(" ", "-")


@cache
def anchors_of(name: str) -> frozenset[str]:
    text = text_of(name) or ""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in prose_lines(text):
        found.update(HTML_ANCHOR.findall(line))
        match = HEADING.match(line)
        if match:
            base = slug(match.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def links_of(text: str) -> list[tuple[int, str]]:
    out = []
    for lineno, line in prose_lines(text):
        ref = REFERENCE_LINK.match(line)
        if ref:
            out.append((lineno, ref.group(1)))
            continue
        for target in INLINE_LINK.findall(CODE_SPAN.sub("", line)):
            out.append((lineno, target))
    return out


def is_external(target: str) -> bool:
    return bool(re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target)) or target.startswith("//")


def check_link(source: str, target: str) -> str | None:
    """None if ``target`` (a link in the tracked file ``source``) resolves inside the repository, else why not."""
    path_part, _, anchor = target.partition("#")
    path_part = unquote(path_part)
    if path_part:
        if path_part.startswith("/"):
            return "absolute path"
        resolved = (REPO / source).parent.joinpath(path_part).resolve()
        try:
            relative = resolved.relative_to(REPO).as_posix()
        except ValueError:
            return "points outside the repository"
        if not resolved.exists():
            return "no such file"
        tracked = tracked_files()
        if resolved.is_file() and relative not in tracked:
            return "file exists but is not tracked by git"
        if resolved.is_dir() and not any(t.startswith(relative + "/") for t in tracked):
            return "folder holds no tracked file"
    else:
        relative = source
    if anchor and relative.endswith(".md") and unquote(anchor).lower() not in anchors_of(relative):
        return f"no heading or anchor #{anchor} in {relative}"
    return None


@pytest.mark.parametrize("name", ["README.md", "docs/*.md", "other Markdown files"])
def test_relative_markdown_links_resolve(name):
    files = markdown_files()
    if name == "README.md":
        chosen = [f for f in files if f == "README.md"]
    elif name == "docs/*.md":
        chosen = [f for f in files if re.fullmatch(r"docs/[^/]+\.md", f)]
    else:
        chosen = [f for f in files if f != "README.md" and not re.fullmatch(r"docs/[^/]+\.md", f)]
    problems = []
    for source in chosen:
        for lineno, target in links_of(text_of(source)):
            if is_external(target):
                continue
            why = check_link(source, target)
            if why:
                problems.append(f"{source}:{lineno}: ({target}) {why}")
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------------------------------- citations

DOC_PATH = re.compile(r"(?<![\w./-])docs/[\w./-]+?\.md\b")
RULES_SECTION = re.compile(r"rules\.md,? (?:§ ?|section )(\d+(?:\.\d+)?(?:, \d+(?:\.\d+)?)*)")
NUMBERED_HEADING = re.compile(r"^#{2,4} (\d+(?:\.\d+)?)[. ]")


def rules_sections() -> set[str]:
    return {m.group(1) for _, line in prose_lines(text_of("docs/rules.md") or "")
            if (m := NUMBERED_HEADING.match(line))}


def test_cited_doc_files_exist():
    tracked = set(tracked_files())
    problems = [f"{name}:{lineno}: {path}"
                for name in text_files()
                for lineno, line in enumerate(text_of(name).splitlines(), start=1)
                for path in DOC_PATH.findall(line)
                if path not in tracked]
    assert not problems, "cited docs that do not exist:\n" + "\n".join(problems)


def test_cited_rules_sections_exist():
    sections = rules_sections()
    assert {"2.3", "3.8", "4.7", "5", "5.1", "6"} <= sections
    problems = []
    for name in text_files():
        for lineno, line in enumerate(text_of(name).splitlines(), start=1):
            cited = [n for group in RULES_SECTION.findall(line) for n in group.split(", ")]
            if name == "docs/rules.md":  # the page cites its own sections as a bare §N.N
                cited += re.findall(r"§(\d+(?:\.\d+)?)", line)
            problems += [f"{name}:{lineno}: §{n}" for n in cited if n not in sections]
    assert not problems, "cited sections missing from docs/rules.md:\n" + "\n".join(problems)
