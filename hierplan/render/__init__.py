"""Pictures and text of the agent and its runs: the graph's picture (picture.py), a run's picture
(run_picture.py) and the text `hierplan show`, the live terminal output and the web page print (text.py).

Nothing here runs a model or touches a database: each function takes a run's state values (or a compiled
graph's drawing) and returns text, a Picture or image bytes.
"""
