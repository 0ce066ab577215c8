"""The application layer, between the entry points (cli/, ui/, server/, eval/) and the graph:

- fields.py: RunOptions (hierplan.options) as command-line flags, the web form and a server's configurable;
- agent.py: the model a run's options name;
- service.py: the run service, a run's lifecycle (start, resume, decide, fork, execute) over a run database;
- events.py: what a run reports while it works (the reporter the service calls, and the events it sends);
- runs.py: reading a run back (its state, its checkpoints).

Importing it imports nothing heavy: LangGraph and the model load inside the calls that need them.
"""
