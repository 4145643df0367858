"""`claude-memory adapt`: fit the search model to the user's own sessions; `--rollback` undoes it.

Registered by server/cli/main.py. Prints the summary as JSON (or text with `--plain`); too few
pairs to train on, or nothing to roll back, prints one line on stderr and exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from server.core.config import Settings
from server.core.errors import StartupError

# What `import` says after importing at least this many memories while no adapted model is
# in use: adapting is offered, never run unasked.
OFFER_AFTER_MEMORIES = 2_000


def add_adapt_command(commands: Any) -> None:
    """Add `adapt` to `commands` (an argparse subparsers object)."""
    from server.domain.adaptation import AdaptOptions

    defaults = AdaptOptions()
    adapt = commands.add_parser(
        "adapt",
        help="fit the local embedding model to your own sessions, then re-embed every memory",
        description="Trains the local embedding model on pairs taken from your memories (a "
        "prompt and its reply, a statement and its text, a title and its body, a correction "
        "and what it corrected), saves it under $CLAUDE_MEMORY_HOME/models/adapted-<n>/ and "
        "re-embeds every memory with it. The model it replaces is kept: --rollback goes "
        "back to it. Restart a running server afterwards.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    adapt.add_argument(
        "--rollback", action="store_true", help="go back to the model the adapted one replaced"
    )
    adapt.add_argument("--epochs", type=int, default=defaults.epochs, help="passes over the pairs")
    adapt.add_argument("--rate", type=float, default=defaults.rate, help="learning rate")
    adapt.add_argument("--batch-size", type=int, default=defaults.batch_size, help="pairs per step")
    adapt.add_argument(
        "--max-pairs", type=int, default=defaults.max_pairs, help="pairs sampled at most"
    )
    adapt.add_argument(
        "--min-pairs", type=int, default=defaults.min_pairs, help="fewer pairs: refuse to train"
    )
    adapt.add_argument(
        "--freeze-layers",
        type=int,
        default=defaults.freeze_layers,
        help="lower transformer layers left as they are",
    )
    adapt.add_argument("--plain", action="store_true", help="print text instead of JSON")
    adapt.set_defaults(run=cmd_adapt)


def cmd_adapt(args: argparse.Namespace, settings: Settings) -> int:
    from server.domain.adaptation import AdaptOptions
    from server.jobs.adapt import adapt, rollback
    from server.jobs.progress import ProgressLine
    from server.service.runtime import open_service

    if args.epochs < 1 or args.batch_size < 2 or args.max_pairs < 2 or not args.rate > 0:
        raise StartupError(
            "--epochs must be 1 or more, --batch-size and --max-pairs 2 or more, --rate above 0"
        )
    options = AdaptOptions(
        epochs=args.epochs,
        rate=args.rate,
        batch_size=args.batch_size,
        max_pairs=args.max_pairs,
        min_pairs=args.min_pairs,
        freeze_layers=max(0, args.freeze_layers),
    )

    async def run() -> dict[str, Any]:
        async with open_service(settings, needs_model=False) as service:
            with ProgressLine("re-embedding", sys.stderr) as reembedding:
                if args.rollback:
                    return await rollback(
                        settings, service.pool, reembed_progress=reembedding.update
                    )
                with ProgressLine("training steps", sys.stderr) as training:
                    return await adapt(
                        settings,
                        service.pool,
                        options,
                        training_progress=training.update,
                        reembed_progress=reembedding.update,
                    )

    summary = asyncio.run(run())
    if args.plain:
        for key, value in summary.items():
            print(f"  {key}: {value}")  # noqa: T201
    else:
        print(json.dumps(summary))  # noqa: T201
    print(  # noqa: T201
        "claude-memory: restart a running server to search with the new vectors", file=sys.stderr
    )
    return 0


def adapt_offer(imported: int, settings: Settings) -> str | None:
    """The line `import` prints after a large import while no adapted model is in use."""
    from server.service.adapted_models import active_name

    if imported < OFFER_AFTER_MEMORIES or settings.embedding_provider != "local":
        return None
    if active_name(settings.claude_memory_home) is not None:
        return None
    return (
        f"claude-memory: {imported:,} memories imported; `claude-memory adapt` can fit the "
        "search model to your own sessions (minutes on CPU; `adapt --rollback` undoes it)"
    )
