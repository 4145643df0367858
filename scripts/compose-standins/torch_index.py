"""A loopback package index for an image build that cannot reach PyTorch's CPU wheel index.

It serves the torch wheels in one folder (the ones already on this machine) under /simple/torch/
and answers every other name with a redirect to the ordinary index, so pip resolves torch's own
dependencies as usual. scripts/test-compose.sh starts it and passes its URL to the build as
TORCH_INDEX_URL; it prints that URL on its first line and serves until it is stopped.

Usage: python3 torch_index.py WHEEL_DIR [--upstream URL] [--port N]
"""

from __future__ import annotations

import argparse
import hashlib
import html
import re
import shutil
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote

PROJECT = re.compile(r"^/simple/([^/]+)/?$")


def normalized(name: str) -> str:
    """PEP 503's form of a project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def sha256(path: Path) -> str:
    with path.open("rb") as source:
        return hashlib.file_digest(source, "sha256").hexdigest()


def wheel_page(wheels: dict[str, tuple[Path, str]]) -> bytes:
    links = "\n".join(
        f'<a href="/files/{quote(name)}#sha256={digest}">{html.escape(name)}</a><br>'
        for name, (_, digest) in sorted(wheels.items())
    )
    return f"<!DOCTYPE html>\n<html><body>\n{links}\n</body></html>\n".encode()


def make_handler(wheels: dict[str, tuple[Path, str]], upstream: str) -> type:
    page = wheel_page(wheels)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path.startswith("/files/"):
                found = wheels.get(unquote(path.removeprefix("/files/")))
                if found is None:
                    self.send_error(HTTPStatus.NOT_FOUND)
                    return
                wheel = found[0]
                self.send_response(HTTPStatus.OK)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(wheel.stat().st_size))
                self.end_headers()
                with wheel.open("rb") as source:
                    shutil.copyfileobj(source, self.wfile)
                return
            match = PROJECT.match(path)
            if match is None:
                self.send_error(HTTPStatus.NOT_FOUND)
                return
            name = normalized(unquote(match.group(1)))
            if name == "torch":
                self.send_response(HTTPStatus.OK)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)
                return
            self.send_response(HTTPStatus.FOUND)
            self.send_header("Location", f"{upstream}/{name}/")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            sys.stderr.write(f"torch index: {format % args}\n")

    return Handler


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel_dir", type=Path)
    parser.add_argument("--upstream", default="https://pypi.org/simple")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    args = parser.parse_args()
    wheels = {wheel.name: (wheel, sha256(wheel)) for wheel in args.wheel_dir.glob("torch-*.whl")}
    if not wheels:
        sys.stderr.write(f"torch index: no torch wheel in {args.wheel_dir}\n")
        return 1
    server = ThreadingHTTPServer(
        ("127.0.0.1", args.port), make_handler(wheels, args.upstream.rstrip("/"))
    )
    sys.stdout.write(f"http://127.0.0.1:{server.server_address[1]}/simple\n")
    sys.stdout.flush()
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
