"""What redaction costs per import: `redact()` over every string of the fixture transcripts.

Redaction runs on every text an import, a hook or a save stores, so its cost is paid on every
turn. The script collects every string of the Claude Code and claude.ai fixture transcripts
(shared/fixtures: message texts, tool inputs and outputs, the spilled 48 KB tool result) and
times `redact()` over all of them, `--rounds` times, in CPU seconds of this process, keeping
the fastest round (the least disturbed by other processes). It does the same for three
variants of the same strings:

* `whole_files`: each file as one text (the largest texts `redact()` sees);
* `non_ascii`: each string after a line of Russian, Chinese (with full-width punctuation)
  and emoji, so that the look-alike folding and NFKC path runs on every text;
* `one_big_text`: all strings joined into one text.

It prints one JSON object: characters, texts and seconds per variant, and microseconds per
kilobyte. Run it on two checkouts to compare (PYTHONPATH picks the one timed).

Usage: .venv/bin/python bench/redaction.py [--rounds 7] [--fixtures /work/shared/fixtures]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from server.core.redact import redact

PROSE = "Пароль лежит в хранилище, см. вики。密码在保管库里，请看维基：第３节。👨‍👩‍👧 ok\n"  # noqa: RUF001


def strings_in(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def fixture_files(root: Path) -> list[Path]:
    transcripts = (root / "claude-code" / "projects").rglob("*")
    found = sorted(p for p in transcripts if p.is_file() and p.suffix in (".jsonl", ".txt"))
    return [*found, root / "claude-ai" / "conversations.json"]


def fixture_strings(files: list[Path]) -> list[str]:
    texts: list[str] = []
    for path in files:
        raw = path.read_text(encoding="utf-8")
        if path.suffix == ".txt":
            texts.append(raw)
        elif path.suffix == ".json":
            texts.extend(strings_in(json.loads(raw)))
        else:
            for line in raw.splitlines():
                try:
                    texts.extend(strings_in(json.loads(line)))
                except json.JSONDecodeError:
                    texts.append(line)  # a crash left half a record: still text to redact
    return [t for t in texts if t]


def fastest(texts: list[str], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for text in texts:
            redact(text)
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--fixtures", type=Path, default=Path("/work/shared/fixtures"))
    args = parser.parse_args()

    files = fixture_files(args.fixtures)
    strings = fixture_strings(files)
    variants: dict[str, Callable[[], list[str]]] = {
        "strings": lambda: strings,
        "whole_files": lambda: [p.read_text(encoding="utf-8") for p in files],
        "non_ascii": lambda: [PROSE + s for s in strings],
        "one_big_text": lambda: ["\n".join(strings)],
    }
    result: dict[str, Any] = {"python": sys.version.split()[0], "rounds": args.rounds}
    for name, make in variants.items():
        texts = make()
        chars = sum(len(t) for t in texts)
        seconds = fastest(texts, args.rounds)
        result[name] = {
            "texts": len(texts),
            "chars": chars,
            "seconds": round(seconds, 4),
            "us_per_kb": round(seconds * 1e6 / (chars / 1000), 1),
            "redactions": sum(redact(t).count for t in texts),
        }
    sys.stdout.write(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
