"""Real model servers for tests (launch.py) and the opt-in tests that need a server built outside the venv."""
