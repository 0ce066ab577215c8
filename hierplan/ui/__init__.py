"""`hierplan ui`: a local web page to start, watch, approve, resume and fork runs (docs/ui.md).

Starlette and uvicorn come with the server extra; nothing here is imported by `hierplan --help`. Pages are
Jinja2 templates rendered from the run database (so a reload always shows the truth); live events of the runs
this server works on reach the browser as server-sent events. Every asset ships in this package.
"""
