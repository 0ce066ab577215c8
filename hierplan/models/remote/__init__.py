"""Models on OpenAI-compatible servers: the chat model (chat.py) and server-side structured output (structured.py)."""
