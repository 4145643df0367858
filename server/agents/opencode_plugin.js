// claude-memory: added by `claude-memory connect opencode`; `disconnect` removes it.
//
// Brings memory to OpenCode as our hooks bring it to Claude Code. OpenCode has no command
// hooks; its plugins get its events, so this plugin asks the claude-memory server at SERVER:
// - before each model call: the session's startup context (once) and the memories relevant to
//   the newest prompt (once per prompt), added to that prompt as text OpenCode marks
//   `synthetic`. Only the request sees it: nothing is written into OpenCode's own session;
// - before a tool call: the lessons that apply, appended to the call's result; a strict lesson
//   stops the call, its message the error the model reads (a plugin cannot ask the user);
// - when a session goes idle (the end of a turn): the server imports the session at once.
// Every request gives up after a short timeout and any failure is ignored: memory never gets in
// the way of the session. The token comes from CLAUDE_MEMORY_TOKEN in OpenCode's environment.

const SERVER = "__CLAUDE_MEMORY_URL__";
const TIMEOUT_MS = 2000;
const TOOL_TIMEOUT_MS = 1000;
const MAX_PROMPT_CHARS = 20000;
const MAX_CONTEXT_CHARS = 9999;
const DENIAL =
  " (a strict lesson from claude-memory: the call was stopped because OpenCode's plugins " +
  "cannot ask for approval; tell the user, who can run it themselves or disable the lesson)";

// OpenCode's database: $OPENCODE_DB (absolute, or in the data folder), else opencode.db in
// $XDG_DATA_HOME/opencode (~/.local/share/opencode).
function databasePath() {
  const env = process.env;
  const data = `${env.XDG_DATA_HOME || `${env.HOME}/.local/share`}/opencode`;
  const named = env.OPENCODE_DB;
  if (named) return named.startsWith("/") ? named : `${data}/${named}`;
  return `${data}/opencode.db`;
}

async function post(path, body, timeoutMs = TIMEOUT_MS) {
  const headers = { "content-type": "application/json" };
  const token = (process.env.CLAUDE_MEMORY_TOKEN || "").trim();
  if (token) headers.authorization = `Bearer ${token}`;
  try {
    const reply = await fetch(SERVER + path, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return reply.ok ? await reply.json() : null;
  } catch {
    return null;
  }
}

function promptText(parts) {
  return parts
    .filter((part) => part.type === "text" && !part.synthetic && !part.ignored)
    .map((part) => part.text)
    .join("\n\n");
}

export const ClaudeMemory = async ({ directory }) => {
  const started = new Set(); // sessions that got their startup context
  const memory = new Map(); // user message id -> what memory added to it ("" for nothing)
  const reminders = new Map(); // tool call id -> the lessons for its result

  async function contextFor(message) {
    const sessionID = message.info.sessionID;
    const added = [];
    if (!started.has(sessionID)) {
      started.add(sessionID);
      const start = await post("/api/hooks/session-start", {
        session_id: sessionID,
        cwd: directory,
        source: "startup",
      });
      if (start && start.additionalContext) added.push(start.additionalContext);
    }
    const recall = await post("/api/hooks/prompt", {
      session_id: sessionID,
      cwd: directory,
      prompt: promptText(message.parts).slice(0, MAX_PROMPT_CHARS),
      prompt_id: message.info.id,
    });
    if (recall && recall.additionalContext) added.push(recall.additionalContext);
    return added.join("\n\n").slice(0, MAX_CONTEXT_CHARS);
  }

  return {
    "experimental.chat.messages.transform": async (_input, output) => {
      const prompts = output.messages.filter((message) => message.info.role === "user");
      const newest = prompts[prompts.length - 1];
      if (newest && !memory.has(newest.info.id)) {
        memory.set(newest.info.id, await contextFor(newest));
      }
      for (const message of prompts) {
        const text = memory.get(message.info.id);
        const id = `${message.info.id}-claude-memory`;
        if (!text || message.parts.some((part) => part.id === id)) continue;
        message.parts.push({
          id,
          sessionID: message.info.sessionID,
          messageID: message.info.id,
          type: "text",
          text,
          synthetic: true,
        });
      }
    },
    "tool.execute.before": async (input, output) => {
      const answer = await post(
        "/api/hooks/pre-tool",
        {
          session_id: input.sessionID,
          cwd: directory,
          tool_name: input.tool,
          tool_use_id: input.callID,
          tool_input: (output && output.args) || {},
        },
        TOOL_TIMEOUT_MS,
      );
      if (!answer) return;
      const reason = answer.permissionDecisionReason;
      if (answer.permissionDecision === "ask" && reason) {
        throw new Error(String(reason).slice(0, MAX_CONTEXT_CHARS) + DENIAL);
      }
      if (answer.additionalContext) reminders.set(input.callID, answer.additionalContext);
    },
    "tool.execute.after": async (input, output) => {
      const reminder = reminders.get(input.callID);
      reminders.delete(input.callID);
      if (reminder && output && typeof output.output === "string") {
        output.output = `${output.output}\n\n${reminder}`;
      }
    },
    event: async ({ event }) => {
      const sessionID = event.properties && event.properties.sessionID;
      if (event.type !== "session.idle" || !sessionID) return;
      await post(
        "/api/hooks/session-end",
        {
          agent: "opencode",
          session_id: sessionID,
          cwd: directory,
          transcript_path: `${databasePath()}/${sessionID}`,
        },
        TOOL_TIMEOUT_MS,
      );
    },
  };
};
