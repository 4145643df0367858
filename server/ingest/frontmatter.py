"""Read the YAML front matter of a note with a small parser of our own.

Notes carry a few flat fields (`title`, `tags`, `date`); a full YAML library would be a
dependency for that alone. Supported: `key: value` scalars, quoted strings, `[a, b]` lists,
`- item` lists, `|` / `>` blocks and indented continuation lines. Anything else is read as text
or ignored, never an error: a note with odd metadata is still a note.
"""

from __future__ import annotations

import re

FrontMatter = dict[str, str | list[str]]

_DELIMITERS = ("---", "...")
_KEY_VALUE = re.compile(r"^([^\s:#\-][^:]*?)\s*:(?:\s+(.*))?$")
_LIST_ITEM = re.compile(r"^-(?:\s+(.*))?$")
_INLINE_COMMENT = re.compile(r"\s+#.*$")


def split_front_matter(text: str) -> tuple[FrontMatter, str]:
    """(metadata, body) of a note; no metadata unless it opens with a closed `---` block."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return {}, text
    for index in range(1, len(lines)):
        if lines[index].rstrip() in _DELIMITERS:
            return parse_front_matter(lines[1:index]), "\n".join(lines[index + 1 :])
    return {}, text


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return _INLINE_COMMENT.sub("", value).strip()


def _split_items(inner: str) -> list[str]:
    """The items of an inline `[a, "b, c"]` list: commas inside quotes do not split."""
    items: list[str] = []
    current: list[str] = []
    quote: str | None = None
    for char in inner:
        if quote is None and char == ",":
            items.append("".join(current))
            current = []
            continue
        if quote is None and char in "\"'":
            quote = char
        elif char == quote:
            quote = None
        current.append(char)
    items.append("".join(current))
    return items


def _scalar(value: str) -> str | list[str]:
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        items = (_unquote(item) for item in _split_items(value[1:-1]))
        return [item for item in items if item]
    return _unquote(value)


def parse_front_matter(lines: list[str]) -> FrontMatter:
    """The fields of a front matter block (without its `---` lines); keys in lower case."""
    fields: FrontMatter = {}
    key: str | None = None
    block: str | None = None  # "|" or ">" while reading a block scalar
    block_lines: list[str] = []

    def finish_block() -> None:
        if key is not None and block is not None:
            joiner = "\n" if block == "|" else " "
            fields[key] = joiner.join(line.strip() for line in block_lines).strip()

    for line in lines:
        stripped = line.strip()
        indented = line[:1] in (" ", "\t")
        if block is not None and (indented or not stripped):
            block_lines.append(line)
            continue
        finish_block()
        block, block_lines = None, []
        if not stripped or stripped.startswith("#"):
            continue
        item = _LIST_ITEM.match(stripped)
        # A list may sit at its key's indent (`tags:` then `- a`, `- b`, as PyYAML writes it).
        if (
            item
            and key is not None
            and (indented or fields.get(key) == "" or isinstance(fields.get(key), list))
        ):
            current = fields.get(key)
            values = current if isinstance(current, list) else []
            value = _unquote(item.group(1) or "")
            fields[key] = [*values, value] if value else values
            continue
        pair = None if indented else _KEY_VALUE.match(stripped)
        if pair:
            key = pair.group(1).strip().lower()
            raw = (pair.group(2) or "").strip()
            if raw[:1] in ("|", ">"):
                block = raw[0]
                fields[key] = ""
            else:
                fields[key] = _scalar(raw)
        elif key is not None and isinstance(fields.get(key), str):
            # A plain scalar continued on the next (indented) line.
            fields[key] = f"{fields[key]} {_unquote(stripped)}".strip()
    finish_block()
    return fields
