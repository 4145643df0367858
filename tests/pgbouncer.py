"""A real PgBouncer (Debian's `pgbouncer`) in transaction mode in front of the test PostgreSQL.

Teams put a pooler between many server processes and a managed database; in transaction mode a
server connection serves other clients between our transactions, so session settings, session
advisory locks and prepared statements break. Tests run the product through this one to show
nothing of ours rests on them (`DB_TRANSACTION_POOLING=true`).

PgBouncer refuses to run as root; as root it is started as the embedded server's own user
(`-u pgserver`), which can reach the server's socket.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

from tests.db_fixtures import free_port

EMBEDDED_USER = "pgserver"


class PgBouncer:
    """PgBouncer on 127.0.0.1, `pool_mode = transaction`, `server_pool` server connections."""

    def __init__(self, socket_dir: Path, *, server_pool: int = 2) -> None:
        sockets = sorted(socket_dir.glob(".s.PGSQL.*"))
        if not sockets or sockets[0].suffix == ".lock":
            raise RuntimeError(f"no PostgreSQL socket in {socket_dir}")
        self.pg_port = int(sockets[0].name.rsplit(".", 1)[1])
        self.socket_dir = socket_dir
        self.server_pool = server_pool
        self.port = free_port()
        self._folder = Path(tempfile.mkdtemp(prefix="pgbouncer-"))
        self._process: subprocess.Popen[bytes] | None = None

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    @property
    def log(self) -> str:
        path = self._folder / "pgbouncer.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def __enter__(self) -> PgBouncer:
        binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
        if not Path(binary).exists():
            raise RuntimeError("pgbouncer is not installed (apt-get install pgbouncer)")
        (self._folder / "users.txt").write_text('"postgres" ""\n')
        (self._folder / "pgbouncer.ini").write_text(
            "[databases]\n"
            f"* = host={self.socket_dir} port={self.pg_port}\n"
            "[pgbouncer]\n"
            "listen_addr = 127.0.0.1\n"
            f"listen_port = {self.port}\n"
            "unix_socket_dir =\n"
            "auth_type = trust\n"
            f"auth_file = {self._folder / 'users.txt'}\n"
            "pool_mode = transaction\n"
            f"default_pool_size = {self.server_pool}\n"
            "max_client_conn = 500\n"
            "ignore_startup_parameters = extra_float_digits,options\n"
            f"logfile = {self._folder / 'pgbouncer.log'}\n"
        )
        command = [binary, str(self._folder / "pgbouncer.ini")]
        if os.geteuid() == 0:
            user = pwd.getpwnam(EMBEDDED_USER)
            os.chmod(self._folder, 0o755)
            for path in (self._folder, *self._folder.iterdir()):
                os.chown(path, user.pw_uid, user.pw_gid)
            command[1:1] = ["-u", EMBEDDED_USER]
        self._process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"pgbouncer exited: {self.log}")
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            time.sleep(0.05)
        raise RuntimeError(f"pgbouncer did not listen on {self.port}: {self.log}")

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
        shutil.rmtree(self._folder, ignore_errors=True)
