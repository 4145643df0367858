"""What a model wants around its inputs: the query and document prefixes some models need.

Retrieval models trained with instructions embed a question and a passage differently, and
score worse when given bare text: nomic-embed-text wants `search_query: ` / `search_document: `,
the e5 family `query: ` / `passage: `, bge English v1.5, mxbai-embed-large and
snowflake-arctic-embed (v1.x) an instruction before queries only (each model card says so).
Models without a row (all-MiniLM-L6-v2, bge-m3, OpenAI's text-embedding-3) take text as is.
`CLAUDE_MEMORY_EMBEDDING_QUERY_PREFIX` / `CLAUDE_MEMORY_EMBEDDING_DOCUMENT_PREFIX` override the
table.
"""

from __future__ import annotations

from dataclasses import dataclass

SEARCH_INSTRUCTION = "Represent this sentence for searching relevant passages: "


@dataclass(frozen=True, slots=True)
class EmbeddingProfile:
    query_prefix: str = ""
    document_prefix: str = ""


PLAIN = EmbeddingProfile()

# Keyed by the model's base name: lower case, without an owner (`nomic-ai/`) or a tag (`:v1.5`).
# A key ending in `*` covers every name that starts with it.
PROFILES: dict[str, EmbeddingProfile] = {
    "nomic-embed-text*": EmbeddingProfile("search_query: ", "search_document: "),
    "e5-*": EmbeddingProfile("query: ", "passage: "),
    "multilingual-e5-*": EmbeddingProfile("query: ", "passage: "),
    "bge-small-en*": EmbeddingProfile(SEARCH_INSTRUCTION),
    "bge-base-en*": EmbeddingProfile(SEARCH_INSTRUCTION),
    "bge-large-en*": EmbeddingProfile(SEARCH_INSTRUCTION),
    "mxbai-embed-large*": EmbeddingProfile(SEARCH_INSTRUCTION),
    "snowflake-arctic-embed2*": PLAIN,  # v2 changed its prompt; bare text is its fallback
    "snowflake-arctic-embed*": EmbeddingProfile(SEARCH_INSTRUCTION),
}


def base_name(model: str) -> str:
    """`nomic-ai/nomic-embed-text-v1.5` and `nomic-embed-text:latest` → their bare names."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    return name.split(":", 1)[0]


def profile_for(
    model: str, *, query_prefix: str | None = None, document_prefix: str | None = None
) -> EmbeddingProfile:
    """The table's profile for `model` (the longest matching key), with any overrides."""
    name = base_name(model)
    found = PLAIN
    best = -1
    for key, profile in PROFILES.items():
        stem = key.rstrip("*")
        matches = name.startswith(stem) if key.endswith("*") else name == stem
        if matches and len(stem) > best:
            found, best = profile, len(stem)
    return EmbeddingProfile(
        found.query_prefix if query_prefix is None else query_prefix,
        found.document_prefix if document_prefix is None else document_prefix,
    )
