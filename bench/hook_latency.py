"""Latency of the UserPromptSubmit hook and the PostToolUse capture, process start to exit.

Claude Code waits for this hook before the prompt goes to the model, on every prompt, so its
whole cost counts: starting the interpreter, reading the payload, asking the server (embed the
prompt, hybrid search, format) and printing. The floor is what any Python hook pays: a bare
`python -c pass`, measured in the same run on the same machine.

What the script does:

1. Starts a real server (`claude-memory serve`) on a free port with an empty embedded database
   in a temp dir, and fills it through `POST /api/memories/bulk` (batches of 1,000, force=true)
   with `--memories` synthetic memories: one or two sentences each, drawn from the LoCoMo
   dialogues and the fixture transcripts and notes, spread over projects, kinds and tags.
2. Runs the command `install-hooks` registers for UserPromptSubmit (through `/bin/sh -c`, as
   Claude Code does) `--runs` times, each with a realistic payload: the fixture's fields, a new
   session id and a distinct prompt (so the server's read cache never answers) drawn from the
   same sentences as the memories (so most runs find something to inject: the costlier path).
   It counts how many runs injected context.
3. Runs `python -c pass` (executed directly) as many times, and, for the record, the two other
   ways to start the client: `python -I -m server.hooks` and `claude-memory hook`. It splits
   the hook's time in two: the client alone (the same command against a port nobody listens
   on) and the server's share (`POST /api/hooks/prompt` from this process). All of these run
   in interleaved rounds, after warming the server up, so background load hits them alike.

4. Adds `--lessons` active lessons (1,000 by default; Bash patterns drawn from the same
   sentences, a few for every tool) and times the PreToolUse hook the same way, with Bash
   calls of which about one in five matches a lesson. Claude Code waits for this hook before
   every tool call, so it has the same target as the prompt hook.
5. Times the PostToolUse capture the same way: the registered `post-tool-use` command with a
   Bash call whose output is 50 KB (the client sends the first 2,000 characters of it), and
   the server's share (`POST /api/hooks/tool`), interleaved. Claude Code runs this hook in the
   background (`"async": true`), so it never delays the agent; the figure says what each tool
   call costs the machine.
6. Times the SessionStart hook the same way (the registered `session-start` command and the
   server's share, interleaved), each start right after a prompt, whose receipt is a commit:
   a session starts in the middle of a working day, when the read cache holds nothing. Claude
   Code waits for it once per session; a third of the bench's memories are preference-like
   kinds, far more than a real store, so this is its worst case.

Targets (issue): p95 <= 150 ms, and p50 within 3x of the bare interpreter's p50.

Usage: .venv/bin/python bench/hook_latency.py [--memories 10000] [--runs 60] [--lessons 1000]
       [--seed 7]
       [--home DIR]   (keep the filled database in DIR and reuse it on the next run)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from server.jobs.hook_install import hook_command  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "bench" / "data" / "locomo10.json"
FIXTURES = ROOT.parent / "shared" / "fixtures"
PAYLOAD = json.loads((FIXTURES / "hooks" / "UserPromptSubmit.json").read_text())
TOOL_PAYLOAD = json.loads((FIXTURES / "hooks" / "PostToolUse.json").read_text())
PRE_TOOL_PAYLOAD = json.loads((FIXTURES / "hooks" / "PreToolUse.json").read_text())
START_PAYLOAD = json.loads((FIXTURES / "hooks" / "SessionStart.json").read_text())
PROJECTS = [f"project-{i:02d}" for i in range(20)]
KINDS = ["raw", "distilled", "preference", "pattern", "manual", "note"]
TAGS = ["decision", "bug", "fix", "preference", "pattern", "api", "db", "ui", "ci", "infra"]
BATCH = 1_000
WARMUP = 5


def sentences() -> list[str]:
    """Vocabulary: LoCoMo turns and fixture prose, split into sentences of 30-200 chars."""
    pool: list[str] = []
    if LOCOMO.is_file():
        for sample in json.loads(LOCOMO.read_text()):
            for key, turns in sample["conversation"].items():
                if re.fullmatch(r"session_\d+", key):
                    pool.extend(turn["text"] for turn in turns)
    for path in FIXTURES.rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            pool.extend(re.findall(r'"text":\s*"((?:[^"\\]|\\.){40,600})"', line))
    for path in FIXTURES.rglob("*.md"):
        pool.extend(p.strip() for p in path.read_text().split("\n\n"))
    split = (s.strip() for text in pool for s in re.split(r"(?<=[.!?])\s+", text))
    return sorted({s for s in split if 30 <= len(s) <= 200})


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def post(url: str, body: dict[str, Any], timeout: float = 900) -> dict[str, Any]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        answer = json.loads(response.read())
    assert isinstance(answer, dict)
    return answer


def get(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=5) as response:
        answer = json.loads(response.read())
    assert isinstance(answer, dict)
    return answer


def start_server(home: Path, port: int) -> subprocess.Popen[bytes]:
    unwanted = ("CLAUDE_MEMORY_DATABASE_URL", "CLAUDE_MEMORY_TOKEN")
    env = {k: v for k, v in os.environ.items() if k not in unwanted}
    env.update(
        CLAUDE_MEMORY_HOME=str(home),
        CLAUDE_MEMORY_HOST="127.0.0.1",
        CLAUDE_MEMORY_PORT=str(port),
        CLAUDE_MEMORY_LOG_LEVEL="WARNING",
    )
    server = subprocess.Popen(
        [sys.executable, "-m", "server.cli", "serve"],
        cwd=home,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if server.poll() is not None:
            stderr = server.stderr.read().decode() if server.stderr else ""
            raise SystemExit(f"server exited early: {stderr[-2000:]}")
        try:
            if get(f"http://127.0.0.1:{port}/health")["status"] == "ok":
                return server
        except OSError:
            pass
        time.sleep(0.25)
    server.kill()
    raise SystemExit("server did not become healthy")


def fill(url: str, count: int, rng: random.Random) -> tuple[int, float]:
    """Bulk-insert distinct memories up to `count` live ones; (memories live, seconds)."""
    pool = sentences()
    started = time.monotonic()
    stored = int(get(f"{url}/api/stats")["active"])
    for offset in range(stored, count, BATCH):
        memories = [
            {
                "content": " ".join(rng.sample(pool, rng.choice((1, 2, 2)))) + f" (#{index})",
                "project": rng.choice(PROJECTS),
                "kind": rng.choice(KINDS),
                "tags": rng.sample(TAGS, rng.randint(0, 3)),
                "source": "bench",
            }
            for index in range(offset, min(count, offset + BATCH))
        ]
        result = post(f"{url}/api/memories/bulk", {"memories": memories, "force": True})
        stored += int(result.get("saved", 0))
    return stored, time.monotonic() - started


def time_command(argv: list[str] | str, stdin: bytes, *, shell: bool = False) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, shell=shell, check=False)
    elapsed = (time.perf_counter() - started) * 1000.0
    if done.returncode != 0:
        raise SystemExit(f"{argv!r} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed, done.stdout.decode()


def payloads(prompts: list[str]) -> list[bytes]:
    return [
        json.dumps({**PAYLOAD, "session_id": str(uuid.uuid4()), "prompt": prompt}).encode()
        for prompt in prompts
    ]


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 1)


Command = tuple[list[str] | str, bool]  # argv or shell line, and whether it needs the shell


def measure(
    commands: dict[str, Command], url: str, prompts: list[str], runs: int
) -> dict[str, dict[str, Any]]:
    """Interleaved rounds: in each, every command once and one direct request to the server.

    Interleaving spreads the machine's background noise evenly over the variants. Each run gets
    its own session id and prompt, so nothing is answered from the server's read cache.
    """
    names = [*commands, "server"]
    inputs = iter(payloads(prompts))
    for _ in range(WARMUP * len(names)):  # warm the model, the pool and the index pages
        post(f"{url}/api/hooks/prompt", json.loads(next(inputs)))
    samples: dict[str, list[float]] = {name: [] for name in names}
    injected = dict.fromkeys(names, 0)
    for _ in range(runs):
        for name in names:
            data = next(inputs)
            if name == "server":
                started = time.perf_counter()
                answer = post(f"{url}/api/hooks/prompt", json.loads(data))
                samples[name].append((time.perf_counter() - started) * 1000.0)
                out = str(answer["additionalContext"])
            else:
                command, shell = commands[name]
                elapsed, out = time_command(command, data, shell=shell)
                samples[name].append(elapsed)
                if out.strip():
                    json.loads(out)  # always the JSON shape, never a traceback
            injected[name] += bool(out.strip())
    return {
        name: {
            "p50_ms": percentile(samples[name], 0.50),
            "p95_ms": percentile(samples[name], 0.95),
            "injected_runs": injected[name],
        }
        for name in names
    }


def tool_payload(rng: random.Random) -> dict[str, Any]:
    """A Bash call with a long output, as PostToolUse sends it; a new id each time."""
    output = "\n".join(rng.sample(sentences(), 400))[:50_000]
    return {
        **TOOL_PAYLOAD,
        "session_id": str(uuid.uuid4()),
        "tool_name": "Bash",
        "tool_use_id": f"toolu_bench_{uuid.uuid4().hex}",
        "tool_input": {"command": "pnpm test -- --reporter=verbose"},
        "tool_response": {"stdout": output, "stderr": "", "interrupted": False},
    }


def add_lessons(url: str, count: int, rng: random.Random) -> list[str]:
    """`count` active lessons on distinct words; returns the words, to build matching calls."""
    words = sorted({w.strip(".,!?'\"").lower() for s in sentences() for w in s.split()})
    words = [w for w in words if len(w) >= 6 and w.isalpha()]
    chosen = rng.sample(words, min(count, len(words)))
    for index, word in enumerate(chosen):
        lesson = {
            "pattern": rf"\b{word}\b",
            "message": f"Lesson {index}: check before running commands about {word}.",
            "tool": "" if index % 10 == 0 else "Bash",
            "strictness": "ask" if index % 7 == 0 else "warn",
        }
        post(f"{url}/api/lessons", lesson)
    return chosen


def measure_pre_tool(url: str, runs: int, words: list[str], rng: random.Random) -> dict[str, Any]:
    """The registered PreToolUse command on Bash calls, one in five naming a lesson's word."""
    command = hook_command("pre-tool-use", url)
    samples: list[float] = []
    answered = 0
    for run in range(runs + WARMUP):
        word = rng.choice(words) if run % 5 == 0 else "unrelated"
        call = {
            **PRE_TOOL_PAYLOAD,
            "session_id": str(uuid.uuid4()),
            "tool_use_id": f"toolu_bench_{uuid.uuid4().hex}",
            "tool_input": {"command": f"pnpm run check -- --{word} --verbose"},
        }
        elapsed, out = time_command(command, json.dumps(call).encode(), shell=True)
        if run >= WARMUP:
            samples.append(elapsed)
            answered += bool(out.strip())
    return {
        "p50_ms": percentile(samples, 0.50),
        "p95_ms": percentile(samples, 0.95),
        "answered_runs": answered,
    }


def measure_capture(url: str, runs: int, rng: random.Random) -> dict[str, dict[str, float]]:
    """The registered PostToolUse command and the server's share, in interleaved rounds."""
    command = hook_command("post-tool-use", url)
    samples: dict[str, list[float]] = {"hook": [], "server": []}
    for _ in range(WARMUP):
        post(f"{url}/api/hooks/tool", tool_payload(rng))
    for _ in range(runs):
        elapsed, out = time_command(command, json.dumps(tool_payload(rng)).encode(), shell=True)
        if out.strip():
            raise SystemExit(f"the capture hook printed {out[:200]!r}")
        samples["hook"].append(elapsed)
        started = time.perf_counter()
        post(f"{url}/api/hooks/tool", tool_payload(rng))
        samples["server"].append((time.perf_counter() - started) * 1000.0)
    return {
        name: {"p50_ms": percentile(values, 0.50), "p95_ms": percentile(values, 0.95)}
        for name, values in samples.items()
    }


def measure_session_start(url: str, runs: int, rng: random.Random) -> dict[str, dict[str, float]]:
    """The registered SessionStart command and the server's share, each the first read after
    a commit (a prompt's receipt), as in a working day: the read cache holds nothing then."""
    command = hook_command("session-start", url)
    prompts = iter(payloads(rng.sample(sentences(), 2 * runs + WARMUP)))
    samples: dict[str, list[float]] = {"hook": [], "server": []}

    def start() -> dict[str, Any]:
        return {**START_PAYLOAD, "session_id": str(uuid.uuid4()), "source": "startup"}

    for _ in range(WARMUP):
        post(f"{url}/api/hooks/session-start", start())
    for _ in range(runs):
        post(f"{url}/api/hooks/prompt", json.loads(next(prompts)))
        elapsed, out = time_command(command, json.dumps(start()).encode(), shell=True)
        if out.strip():
            json.loads(out)  # always the JSON shape, never a traceback
        samples["hook"].append(elapsed)
        post(f"{url}/api/hooks/prompt", json.loads(next(prompts)))
        started = time.perf_counter()
        post(f"{url}/api/hooks/session-start", start())
        samples["server"].append((time.perf_counter() - started) * 1000.0)
    return {
        name: {"p50_ms": percentile(values, 0.50), "p95_ms": percentile(values, 0.95)}
        for name, values in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--lessons", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--home", metavar="DIR", help="keep the data here and reuse it (default: a temp dir)"
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)

    with tempfile.TemporaryDirectory(prefix="hook-bench-") as folder:
        home = Path(args.home).expanduser() if args.home else Path(folder)
        home.mkdir(parents=True, exist_ok=True)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        server = start_server(home, port)
        try:
            stored, fill_seconds = fill(url, args.memories, rng)
            event = "user-prompt-submit"
            registered = hook_command(event, url)
            nobody = f"http://127.0.0.1:{free_port()}"
            claude_memory = str(Path(sys.executable).with_name("claude-memory"))
            commands: dict[str, Command] = {
                "hook": (registered, True),
                "module": (
                    [
                        sys.executable,
                        "-I",
                        "-m",
                        "server.hooks",
                        "user-prompt-submit",
                        "--url",
                        url,
                    ],
                    False,
                ),
                "cli": ([claude_memory, "hook", event, "--url", url], False),
                # The registered command with nobody listening: the client's own cost.
                "client": (hook_command(event, nobody), True),
                "bare": ([sys.executable, "-c", "pass"], False),
            }
            needed = (len(commands) + 1) * (args.runs + WARMUP)
            timings = measure(commands, url, rng.sample(sentences(), needed), args.runs)
            words = add_lessons(url, args.lessons, rng)
            pre_tool = measure_pre_tool(url, args.runs, words, rng)
            capture = measure_capture(url, args.runs, rng)
            session_start = measure_session_start(url, args.runs, rng)
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()

    hook, bare = timings["hook"], timings["bare"]
    ratio = round(hook["p50_ms"] / bare["p50_ms"], 2)
    result = {
        "memories": stored,
        "fill_seconds": round(fill_seconds, 1),
        "runs": args.runs,
        "command": registered,
        "p50_ms": hook["p50_ms"],
        "p95_ms": hook["p95_ms"],
        "injected_runs": hook["injected_runs"],
        "bare_python_p50_ms": bare["p50_ms"],
        "bare_python_p95_ms": bare["p95_ms"],
        "ratio": ratio,
        "targets": {"p95_ms": 150, "ratio": 3.0},
        "targets_met": hook["p95_ms"] <= 150 and ratio <= 3.0,
        "client_only_p50_ms": timings["client"]["p50_ms"],
        "server_p50_ms": timings["server"]["p50_ms"],
        "server_p95_ms": timings["server"]["p95_ms"],
        "pre_tool_use": {
            "lessons": len(words),
            **pre_tool,
            "targets_met": pre_tool["p95_ms"] <= 150,
        },
        "post_tool_use": _hook_and_server(hook_command("post-tool-use", url), capture),
        "session_start": _hook_and_server(hook_command("session-start", url), session_start),
        "other_entry_points": {
            "python -I -m server.hooks": _figures(timings["module"]),
            "claude-memory hook": _figures(timings["cli"]),
        },
    }
    print(json.dumps(result))  # noqa: T201


def _hook_and_server(command: str, timing: dict[str, dict[str, float]]) -> dict[str, Any]:
    """A hook's command, its own percentiles and the server's share."""
    return {
        "command": command,
        "p50_ms": timing["hook"]["p50_ms"],
        "p95_ms": timing["hook"]["p95_ms"],
        "server_p50_ms": timing["server"]["p50_ms"],
        "server_p95_ms": timing["server"]["p95_ms"],
    }


def _figures(timing: dict[str, Any]) -> dict[str, float]:
    return {"p50_ms": timing["p50_ms"], "p95_ms": timing["p95_ms"]}


if __name__ == "__main__":
    main()
