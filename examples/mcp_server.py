"""A tiny MCP server (FastMCP from the ``mcp`` package, over stdio): a staff directory and the sales regions' revenue
targets, facts the model cannot know.

hierplan starts it itself, as examples/mcp_servers.json says (``python examples/mcp_server.py``, from the
repository's root), once when a run starts: it lists its tools and keeps the session for every call of the run,
then ends it. Started by hand, it waits for an MCP client on its stdin.

Each ``@server.tool()`` function is a tool: its name, its docstring (what the planner reads) and its typed
arguments (the JSON schema the model's arguments are checked against) come from the function. An exception is
an MCP tool error, which hierplan records as a failed step.
"""

from __future__ import annotations

from mcp.server.fastmcp import FastMCP

STAFF = {
    "ada ferreira": {"team": "data", "room": "4.12", "extension": 3317},
    "bruno costa": {"team": "data", "room": "4.14", "extension": 3320},
    "carla mendes": {"team": "platform", "room": "2.03", "extension": 2104},
}

# This year's revenue target of each sales region (examples/data/sales.csv holds the revenue so far).
REVENUE_TARGETS = {"north": 3000, "south": 2500, "east": 2200, "west": 2600}

# log_level WARNING: a stdio server's stderr goes to hierplan's terminal; keep it quiet.
server = FastMCP("staff-directory", log_level="WARNING")


@server.tool()
def find_colleague(name: str) -> str:
    """Find a colleague in the staff directory by full name: their team, office room and phone extension."""
    person = STAFF.get(" ".join(name.lower().split()))
    if person is None:
        raise ValueError(f"nobody called {name!r} in the directory")
    return f"{name.strip()}: team {person['team']}, room {person['room']}, extension {person['extension']}"


@server.tool()
def team_members(team: str) -> list[str]:
    """The full names of the members of a team (data, platform)."""
    members = [n.title() for n, p in STAFF.items() if p["team"] == team.strip().lower()]
    if not members:
        raise ValueError(f"no team {team!r}; teams: {', '.join(sorted({p['team'] for p in STAFF.values()}))}")
    return members


@server.tool()
def revenue_target(region: str) -> str:
    """This year's revenue target of a sales region (north, south, east, west)."""
    key = region.strip().lower()
    if key not in REVENUE_TARGETS:
        raise ValueError(f"no region {region!r}; regions: {', '.join(REVENUE_TARGETS)}")
    return f"The {key} region's revenue target this year: {REVENUE_TARGETS[key]}"


if __name__ == "__main__":
    server.run()  # stdio: the client (hierplan) talks to it on stdin/stdout
