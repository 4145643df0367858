"""Learning from imported sessions: what the user decided, fixed, prefers and habitually does.

Distillation sends transcripts to a local LLM at an OpenAI-compatible endpoint (`llm`), whose
prompts (`distill_core`) and reply checks (`distill_reply`) live apart from the database and
settings, so tests can drive them against a scripted local server.
"""
