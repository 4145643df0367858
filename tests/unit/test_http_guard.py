"""Host/Origin guard helpers: which names count as this machine."""

from __future__ import annotations

import pytest

from server.adapters.http_guard import _hostname, _origin_hostname, allowed_hosts_for


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("localhost:3333", "localhost"),
        ("127.0.0.1", "127.0.0.1"),
        ("[::1]:3333", "::1"),
        ("LocalHost", "localhost"),
        ("evil.example:80", "evil.example"),
    ],
)
def test_hostname_strips_port_and_brackets(header: str, name: str) -> None:
    assert _hostname(header) == name


@pytest.mark.parametrize(
    "header",
    [
        "127.0.0.1:3471@evil.com",
        "127.0.0.1@evil.com",
        "127.0.0.1:3471, evil.com",
        "127.0.0.1 evil.com",
        "127.0.0.1:3471/path",
        "localhost:port",
        "::1",
        "",
    ],
)
def test_a_malformed_host_names_nothing(header: str) -> None:
    assert _hostname(header) == ""


@pytest.mark.parametrize(
    ("origin", "name"),
    [
        ("http://localhost:3333", "localhost"),
        ("https://127.0.0.1", "127.0.0.1"),
        ("http://[::1]:3333", "::1"),
        ("http://127.0.0.1:3471 http://evil.com", ""),
        ("http://127.0.0.1:3471/", ""),
        ("http://user@127.0.0.1", ""),
        ("null", ""),
        ("file://", ""),
    ],
)
def test_origin_hostname_reads_only_one_well_formed_origin(origin: str, name: str) -> None:
    assert _origin_hostname(origin) == name


def test_loopback_names_are_always_allowed() -> None:
    assert {"127.0.0.1", "localhost", "::1"} <= allowed_hosts_for("127.0.0.1")


def test_concrete_bind_address_is_allowed_but_wildcard_is_not() -> None:
    assert "192.168.1.20" in allowed_hosts_for("192.168.1.20")
    assert "0.0.0.0" not in allowed_hosts_for("0.0.0.0")


def test_extra_names_are_allowed_lower_cased() -> None:
    allowed = allowed_hosts_for("0.0.0.0", ("MyBox.lan", "server"))

    assert {"mybox.lan", "server", "localhost"} <= allowed
    assert "0.0.0.0" not in allowed
