"""Learning from imported sessions: what the user decided, fixed, prefers and habitually does.

Distillation sends transcripts to a local LLM at an OpenAI-compatible endpoint (`llm`), whose
prompts and reply checks live apart from the database and settings (`distill_core`), so tests
can drive them against a scripted local server.
"""
