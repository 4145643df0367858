"""What one large save costs everyone else: a small save and a search sent while it embeds.

A save of close to the documented limit (CLAUDE_MEMORY_MAX_CONTENT_CHARS, 100,000 chars)
is embedded as
about 170 overlapping passage windows, which takes the bundled model on 2 cores tens of
seconds. The model encodes one batch at a time, so before #34 a small save or a search query
sent meanwhile waited for the whole document (a small save was held 22 s). Now the model works
in turns of at most ENCODE_TURN_CHARS characters (about 16 windows), granted in order, so they
wait for one turn.

What the script does: starts a real server (`python -m server.cli serve`) on an empty embedded
database in a temp dir, warms it up, then `--rounds` times: sends a save of `--chars`
characters of varied prose (drawn from the fixtures and LoCoMo) and, `--delay` seconds later,
from two other threads at once, a small save and a hybrid search; it records each one's
duration. It
prints JSON: the large save's seconds, and the small save's and the search's, alone (no large
save running) and during the large save.

Usage: .venv/bin/python bench/large_save.py [--chars 99990] [--rounds 3] [--delay 1.0]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.hook_latency import free_port, post, sentences, start_server  # noqa: E402


def timed(call: Any) -> float:
    started = time.monotonic()
    call()
    return time.monotonic() - started


def large_text(chars: int, rng: random.Random) -> str:
    pool = sentences()
    parts: list[str] = []
    while sum(len(p) + 1 for p in parts) < chars:
        parts.append(rng.choice(pool))
    return " ".join(parts)[:chars]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=99_990)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--delay", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    with tempfile.TemporaryDirectory(prefix="claude-memory-large-save-") as home:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        server = start_server(Path(home), port)
        try:
            counter = iter(range(1_000_000))

            def small_save() -> None:
                post(f"{url}/api/memories", {"content": f"small note {next(counter)}: ok"})

            def search() -> None:
                post(f"{url}/api/search", {"query": f"what did we decide {next(counter)}?"})

            for _ in range(3):
                small_save()
                search()
            alone = {
                "small_save": [timed(small_save) for _ in range(5)],
                "search": [timed(search) for _ in range(5)],
            }
            during: dict[str, list[float]] = {"small_save": [], "search": []}
            large: list[float] = []
            for _ in range(args.rounds):
                text = large_text(args.chars, rng)
                big = threading.Thread(
                    target=lambda t=text: large.append(
                        timed(lambda: post(f"{url}/api/memories", {"content": t}, timeout=600))
                    )
                )
                big.start()
                time.sleep(args.delay)
                others = [
                    threading.Thread(target=lambda n=name, c=call: during[n].append(timed(c)))
                    for name, call in (("small_save", small_save), ("search", search))
                ]
                for thread in others:
                    thread.start()
                for thread in (*others, big):
                    thread.join()
        finally:
            server.terminate()
            server.wait(timeout=60)

    def figures(values: list[float]) -> dict[str, float]:
        return {"median_s": round(statistics.median(values), 3), "max_s": round(max(values), 3)}

    print(  # noqa: T201
        json.dumps(
            {
                "chars": args.chars,
                "rounds": args.rounds,
                "large_save": figures(large),
                "small_save_alone": figures(alone["small_save"]),
                "small_save_during_large": figures(during["small_save"]),
                "search_alone": figures(alone["search"]),
                "search_during_large": figures(during["search"]),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
