"""Model profiles: the prefixes retrieval models were trained with, found by the model's name."""

from __future__ import annotations

import pytest

from server.core.config import load_settings
from server.core.errors import ConfigError
from server.service.embedding_profiles import SEARCH_INSTRUCTION, base_name, profile_for


@pytest.mark.parametrize(
    ("model", "query", "document"),
    [
        ("nomic-embed-text", "search_query: ", "search_document: "),
        ("nomic-embed-text:v1.5", "search_query: ", "search_document: "),
        ("nomic-ai/nomic-embed-text-v1.5", "search_query: ", "search_document: "),
        ("intfloat/e5-large-v2", "query: ", "passage: "),
        ("intfloat/multilingual-e5-base", "query: ", "passage: "),
        ("BAAI/bge-small-en-v1.5", SEARCH_INSTRUCTION, ""),
        ("mxbai-embed-large:latest", SEARCH_INSTRUCTION, ""),
        ("snowflake-arctic-embed:335m", SEARCH_INSTRUCTION, ""),
        ("snowflake-arctic-embed2", "", ""),
        ("bge-m3", "", ""),
        ("text-embedding-3-small", "", ""),
        ("all-MiniLM-L6-v2", "", ""),
    ],
)
def test_each_model_gets_the_prefixes_it_was_trained_with(
    model: str, query: str, document: str
) -> None:
    profile = profile_for(model)
    assert (profile.query_prefix, profile.document_prefix) == (query, document)


def test_settings_override_the_table_and_none_means_no_prefix() -> None:
    settings = load_settings(
        {
            "CLAUDE_MEMORY_EMBEDDING_PROVIDER": "openai",
            "CLAUDE_MEMORY_EMBEDDING_MODEL": "nomic-embed-text",
            "CLAUDE_MEMORY_EMBEDDING_QUERY_PREFIX": "Query: ",
            "CLAUDE_MEMORY_EMBEDDING_DOCUMENT_PREFIX": "none",
        },
        config_file=None,
    )
    profile = profile_for(
        settings.embedding_model,
        query_prefix=settings.embedding_query_prefix,
        document_prefix=settings.embedding_document_prefix,
    )
    assert (profile.query_prefix, profile.document_prefix) == ("Query: ", "")
    assert base_name("Org/Model-X:Q4") == "model-x"


def test_the_provider_setting_is_checked_and_the_url_falls_back_to_ollamas() -> None:
    with pytest.raises(
        ConfigError, match="CLAUDE_MEMORY_EMBEDDING_PROVIDER must be one of local, openai"
    ):
        load_settings({"CLAUDE_MEMORY_EMBEDDING_PROVIDER": "cohere"}, config_file=None)
    settings = load_settings(
        {
            "CLAUDE_MEMORY_EMBEDDING_PROVIDER": "OpenAI",
            "CLAUDE_MEMORY_OLLAMA_URL": "http://gpu-box:11434/v1/",
        },
        config_file=None,
    )
    assert settings.embedding_provider == "openai"
    assert settings.embeddings_url == "http://gpu-box:11434/v1"
    with pytest.raises(ConfigError, match="CLAUDE_MEMORY_EMBEDDING_BASE_URL must be an http"):
        load_settings({"CLAUDE_MEMORY_EMBEDDING_BASE_URL": "gpu-box:11434"}, config_file=None)
