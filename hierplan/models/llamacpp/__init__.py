"""llama.cpp, in-process through the prebuilt xllamacpp wheel: the engine (engine.py) and its LangChain chat model
(chat.py)."""
