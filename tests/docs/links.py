#!/usr/bin/python3
"""Every link in README.md and docs/*.md resolves inside the repository.

usage: links.py [REPO]

A link to a file must name one that exists, without leaving the repository;
a link with an anchor (#section) must name a heading of its target (GitHub's
slugs: lower case, punctuation dropped, spaces to hyphens). Web links are not
followed (CI has no network) but must be https. Prints each broken link with
its file and line; exits 1 if there is one."""
import os
import re
import sys

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def slugs(path):
    """The anchors of a Markdown file's headings."""
    out, fence = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        if fence or not line.startswith("#"):
            continue
        title = line.lstrip("#").strip().lower()
        title = re.sub(r"[^\w\- ]", "", title)
        out.add(title.replace(" ", "-"))
    return out


def check(repo):
    files = [os.path.join(repo, "README.md")]
    docs = os.path.join(repo, "docs")
    files += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    bad = 0
    for path in files:
        fence = False
        for number, line in enumerate(open(path, encoding="utf-8"), 1):
            if line.startswith("```"):
                fence = not fence
            if fence:
                continue
            for m in LINK.finditer(line):
                target = m.group(1) or m.group(2)
                where = f"{os.path.relpath(path, repo)}:{number}: {target}"
                if re.match(r"[a-z]+:", target):
                    if not target.startswith("https://"):
                        print(f"{where}: a web link that is not https")
                        bad += 1
                    continue
                name, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), name)) if name else path
                if os.path.commonpath([dest, repo]) != repo:
                    print(f"{where}: outside the repository")
                    bad += 1
                elif not os.path.exists(dest):
                    print(f"{where}: no such file")
                    bad += 1
                elif anchor and dest.endswith(".md") and anchor not in slugs(dest):
                    print(f"{where}: no heading #{anchor} there")
                    bad += 1
    print(f"links: {len(files)} files, {bad} broken")
    return bad


if __name__ == "__main__":
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    sys.exit(1 if check(root) else 0)
