"""transformers through langchain-huggingface's HuggingFacePipeline: loading (engine.py, device.py), the chat model
(chat.py), and grammar-constrained plans (constrained.py over json_grammar.py)."""
