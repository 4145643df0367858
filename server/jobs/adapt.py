"""`claude-memory adapt`: fit the local embedding model to the user's own sessions, and go back.

Pairs come from the store (server/domain/adaptation.py); the model is trained from the
configured base model (never from an earlier adaptation, so each run is the same recipe on the
store as it is) with a contrastive loss with in-batch negatives, sentence-transformers'
MultipleNegativesRankingLoss, on CPU. The loop is ours, a few lines of torch, rather than
sentence-transformers' Trainer: the Trainer needs `datasets` and `accelerate`, two more large
dependencies for what is one optimizer step per batch here.

Order, so that nothing is lost when a run stops anywhere:
1. train into `models/.adapted-<n>.partial/`, renamed to `adapted-<n>/` once saved whole (a
   run stopped before leaves the store and `models/active` as they were, and the partial
   folder is removed);
2. point `models/active` at it, then re-embed every memory through the re-embed path
   (server/service/reembed.py). A re-embed stopped midway is what `claude-memory reembed`
   resumes: the server refuses to start until it has finished.
The similarity cut-offs (semantic search, the prompt hook, duplicates) were measured for the
base model; the adapted one draws the user's texts closer together, so they are carried over
to it by the share of the store's own text pairs each keeps (server/service/cutoffs.py
`carried_over`) and saved in its manifest, where the service reads them.
`rollback` points `models/active` back at the model the active one replaced (or at none: the
configured model) and re-embeds with it. A running server keeps the model it loaded: restart it.
"""

from __future__ import annotations

import json
import logging
import math
import random
import shutil
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import anyio

from server.core.config import Settings
from server.core.errors import StartupError
from server.domain.adaptation import AdaptOptions, Pair, count_by_kind, training_pairs
from server.service.adapted_models import (
    MANIFEST_FILE,
    active_model,
    models_dir,
    next_name,
    read_model,
    set_active,
)
from server.service.cutoffs import carried_over, cutoffs_for
from server.service.embedding_profiles import profile_for
from server.service.embeddings import LocalEmbedder, canonical_model_name, model_source
from server.service.reembed import reembed
from server.store.adaptation import source_texts
from server.store.tx import Pool, transaction

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]

# What the model reads in training: all-MiniLM-L6-v2 was trained on 128 word pieces, and
# longer inputs cost time quadratically for little (the windows it embeds are 192).
TRAIN_TOKENS = 128

# Texts whose pairs carry the similarity cut-offs over to the adapted model: 400 give about
# 80,000 pairs, enough for the rare end where the prompt hook's cut-off lies.
CALIBRATION_TEXTS = 400


def _require_local(settings: Settings) -> None:
    if settings.embedding_provider != "local":
        raise StartupError(
            "adapt trains the local model; CLAUDE_MEMORY_EMBEDDING_PROVIDER is "
            f"{settings.embedding_provider}"
        )


async def adapt(
    settings: Settings,
    pool: Pool,
    options: AdaptOptions,
    *,
    training_progress: Progress | None = None,
    reembed_progress: Progress | None = None,
) -> dict[str, Any]:
    """Train an adapted model on the store's own pairs, save it, make it the model in use and
    re-embed every memory with it. The summary: the model, pairs, training and re-embed time."""
    _require_local(settings)
    async with transaction(pool) as conn:
        texts = await source_texts(conn)
    pairs = training_pairs(texts, options.max_pairs, options.seed)
    if len(pairs) < max(options.min_pairs, 2):
        raise StartupError(
            f"too few training pairs to adapt the model: {len(pairs)} found in {len(texts)} "
            f"memories, at least {max(options.min_pairs, 2)} needed (import more sessions first)"
        )
    home = settings.claude_memory_home
    previous = active_model(home, settings.embedding_model)
    base = canonical_model_name(settings.embedding_model)
    name = next_name(home)
    manifest = {
        "name": name,
        "base": base,
        "previous": previous.name if previous else None,
        "memories": len(texts),
        "pairs": len(pairs),
        "pairs_by_kind": count_by_kind(pairs),
        "epochs": options.epochs,
        "rate": options.rate,
        "batch_size": options.batch_size,
        "freeze_layers": options.freeze_layers,
        "train_tokens": TRAIN_TOKENS,
        "seed": options.seed,
        "loss": "MultipleNegativesRankingLoss",
        "created_at": datetime.now(tz=UTC).isoformat(timespec="seconds"),
    }
    started = time.monotonic()
    path = await anyio.to_thread.run_sync(
        partial(
            train_and_save,
            model_source(base),
            pairs,
            options,
            models_dir(home) / name,
            manifest,
            training_progress,
        )
    )
    training_seconds = round(time.monotonic() - started, 1)
    adapted = read_model(home, name)
    embedder = await anyio.to_thread.run_sync(
        partial(
            LocalEmbedder.load,
            base,
            settings.embedding_batch_size,
            _profile(settings),
            adapted=(adapted.recorded_name, str(path)),
        )
    )
    set_active(home, name)
    result = await reembed(pool, embedder, progress=reembed_progress)
    return {
        "model": adapted.recorded_name,
        "path": str(path),
        "previous": manifest["previous"] or base,
        "pairs": len(pairs),
        "pairs_by_kind": manifest["pairs_by_kind"],
        "epochs": options.epochs,
        "rate": options.rate,
        "seconds_training": training_seconds,
        "cutoffs": adapted.cutoffs,
        "memories_reembedded": result.memories,
        "seconds_reembed": result.seconds,
    }


async def rollback(
    settings: Settings, pool: Pool, *, reembed_progress: Progress | None = None
) -> dict[str, Any]:
    """Go back to the model the active adaptation replaced, and re-embed with it."""
    _require_local(settings)
    home = settings.claude_memory_home
    current = active_model(home, settings.embedding_model)
    if current is None:
        raise StartupError("no adapted model is in use: nothing to roll back")
    back = read_model(home, current.previous) if current.previous else None
    embedder = await anyio.to_thread.run_sync(
        partial(
            LocalEmbedder.load,
            settings.embedding_model,
            settings.embedding_batch_size,
            _profile(settings),
            adapted=None if back is None else (back.recorded_name, str(back.path)),
        )
    )
    set_active(home, None if back is None else back.name)
    result = await reembed(pool, embedder, progress=reembed_progress)
    return {
        "model": embedder.name,
        "replaced": current.recorded_name,
        "kept": str(current.path),
        "memories_reembedded": result.memories,
        "seconds_reembed": result.seconds,
    }


def _profile(settings: Settings) -> Any:
    return profile_for(
        settings.embedding_model,
        query_prefix=settings.embedding_query_prefix,
        document_prefix=settings.embedding_document_prefix,
    )


def train_and_save(
    source: str,
    pairs: Sequence[Pair],
    options: AdaptOptions,
    target: Path,
    manifest: dict[str, Any],
    progress: Progress | None = None,
) -> Path:
    """Train from `source` and save the model whole at `target` (with its manifest), or
    leave nothing there."""
    partial_dir = target.with_name(f".{target.name}.partial")
    shutil.rmtree(partial_dir, ignore_errors=True)
    try:
        started = time.monotonic()
        model, losses = train(source, pairs, options, progress)
        calibration = calibration_texts(pairs, options.seed)
        cutoffs = carried_over(
            cutoffs_for(str(manifest["base"])),
            pair_similarities(source, calibration),
            pair_similarities(model, calibration),
        )
        partial_dir.parent.mkdir(parents=True, exist_ok=True)
        model.save(str(partial_dir))
        manifest = {
            **manifest,
            "cutoffs": cutoffs,
            "calibration_texts": len(calibration),
            "seconds_training": round(time.monotonic() - started, 1),
            "loss_first_epoch": losses[0] if losses else None,
            "loss_last_epoch": losses[-1] if losses else None,
        }
        (partial_dir / MANIFEST_FILE).write_text(
            json.dumps(manifest, indent=2) + "\n", encoding="utf-8"
        )
        partial_dir.rename(target)
    except BaseException:
        shutil.rmtree(partial_dir, ignore_errors=True)
        raise
    return target


def calibration_texts(pairs: Sequence[Pair], seed: int) -> list[str]:
    """Up to CALIBRATION_TEXTS distinct texts of the pairs, the same ones every run: the store's
    own texts, whose pairs (most of them unrelated) place the cut-offs (cutoffs.carried_over)."""
    texts = sorted({text for pair in pairs for text in (pair.anchor, pair.positive)})
    random.Random(seed).shuffle(texts)
    return texts[:CALIBRATION_TEXTS]


def pair_similarities(model: Any, texts: Sequence[str]) -> list[float]:
    """The cosine similarity of every pair of `texts` under `model` (a SentenceTransformer or
    where to load one from)."""
    import torch
    from sentence_transformers import SentenceTransformer

    if isinstance(model, str):
        model = SentenceTransformer(model, device="cpu")
    vectors = model.encode(list(texts), normalize_embeddings=True, convert_to_tensor=True)
    upper = torch.triu_indices(len(texts), len(texts), offset=1)
    similarities = (vectors @ vectors.T)[upper[0], upper[1]]
    return [float(value) for value in similarities.tolist()]


def train(
    source: str, pairs: Sequence[Pair], options: AdaptOptions, progress: Progress | None = None
) -> tuple[Any, list[float]]:
    """The base model trained on `pairs`; and the mean loss of each epoch."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    torch.manual_seed(options.seed)
    model = SentenceTransformer(source, device="cpu")
    reads = model.max_seq_length
    model.max_seq_length = min(reads or TRAIN_TOKENS, TRAIN_TOKENS)
    _freeze(model, options.freeze_layers)
    loss = MultipleNegativesRankingLoss(model)
    weights = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(weights, lr=options.rate)
    batches = [
        list(range(start, min(start + options.batch_size, len(pairs))))
        for start in range(0, len(pairs), options.batch_size)
    ]
    batches = [b for b in batches if len(b) >= 2]  # a batch of one has no negative
    steps = max(1, options.epochs * len(batches))
    warmup = max(1, steps // 10)

    def schedule(step: int) -> float:  # linear warm-up, then linear decay
        return min((step + 1) / warmup, max(0.0, (steps - step) / max(1, steps - warmup)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    order = list(range(len(pairs)))
    shuffle = random.Random(options.seed)
    losses: list[float] = []
    done = 0
    if progress:
        progress(done, steps)
    model.train()
    for _ in range(options.epochs):
        shuffle.shuffle(order)
        total = 0.0
        for batch in batches:
            chosen = [pairs[order[i]] for i in batch]
            anchors = model.preprocess([p.anchor for p in chosen])
            positives = model.preprocess([p.positive for p in chosen])
            value = loss([anchors, positives], torch.empty(0))
            value.backward()
            torch.nn.utils.clip_grad_norm_(weights, 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            total += float(value.detach())
            done += 1
            if progress:
                progress(done, steps)
        losses.append(round(total / max(1, len(batches)), 4))
    model.eval()
    model.max_seq_length = reads
    if not all(math.isfinite(x) for x in losses):
        raise StartupError(f"training diverged (loss {losses}); try a lower --rate")
    return model, losses


def _freeze(model: Any, layers: int) -> None:
    """Keep the token embeddings and the lowest `layers` transformer layers as they are."""
    if layers <= 0:
        return
    encoder = model[0].auto_model
    for weight in encoder.embeddings.parameters():
        weight.requires_grad = False
    for layer in encoder.encoder.layer[:layers]:
        for weight in layer.parameters():
            weight.requires_grad = False
