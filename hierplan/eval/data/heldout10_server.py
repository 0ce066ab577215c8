"""The MCP server of the held-out evaluation (hierplan/eval/data/heldout10.jsonl): a made-up town library's
members, late-fee rules and branch contacts, facts no model can know. FastMCP over stdio, as tools15_server.py.

The held-out set checks whether what was tuned on tools15 carries over to another domain, other wording and
other tools; keep it apart from that tuning. hierplan starts it from heldout10_mcp.json (``python
hierplan/eval/data/heldout10_server.py``, from the repository's root, with the venv's ``python`` first on PATH).
tests/test_eval_heldout.py calls the tool functions directly to check the tasks' expected answers against these
tables.
"""

from __future__ import annotations

from mcp.server.fastmcp import FastMCP

# Made up: card codes without digits, so that an answer's last number is the answer's.
MEMBERS = {  # card code: (holder, membership tier, home branch, most items on loan at once)
    "FENNEL-MOSS": ("Odile Parrish", "standard", "Harrowgate", 12),
    "HOLLY-BRIDGE": ("Caspar Nwosu", "student", "Millbrook", 8),
    "AMBER-WICK": ("Greta Lindqvist", "senior", "Eastwick", 15),
    "SLATE-ROOK": ("Ferris Okafor", "standard", "Quillon Cross", 10),
}
LATE_FEE_EUR_PER_DAY = {  # item type: {membership tier: euros per day late}
    "book": {"standard": 0.25, "student": 0.10, "senior": 0.10},
    "dvd": {"standard": 0.50, "student": 0.35, "senior": 0.30},
    "audiobook": {"standard": 0.40, "student": 0.20, "senior": 0.15},
    "magazine": {"standard": 0.05, "student": 0.05, "senior": 0.00},
}
BRANCHES = {  # branch: (head librarian, weekday it is closed)
    "millbrook": ("Hattie Penhallow", "Monday"),
    "harrowgate": ("Joaquin Abernethy", "Sunday"),
    "eastwick": ("Ilse Marchetti", "Wednesday"),
    "quillon cross": ("Bram Tolliver", "Sunday"),
}

# log_level WARNING: a stdio server's stderr goes to hierplan's terminal; keep it quiet.
server = FastMCP("heldout10-library", log_level="WARNING")


def _choice(given: str, table: dict, what: str, shown: list[str]) -> str:
    """The table's key for ``given`` (case, spacing, a plural 's' and a trailing "card" or "branch" ignored);
    else a ValueError that lists the valid choices (``shown``)."""
    key = " ".join(given.lower().split()).removesuffix(" card").removesuffix(" branch")
    if key not in table and key.endswith("s") and key[:-1] in table:
        key = key[:-1]
    if key not in table:
        raise ValueError(f"unknown {what} {given!r}; choose one of: {', '.join(shown)}")
    return key


@server.tool()
def member_lookup(card: str) -> str:
    """Look up a library card by its code (e.g. FENNEL-MOSS): holder, tier, home branch, borrowing limit."""
    code = "-".join(card.upper().replace("_", "-").split())
    if code not in MEMBERS:
        raise ValueError(f"no library card {card!r}; cards: {', '.join(sorted(MEMBERS))}")
    holder, tier, branch, limit = MEMBERS[code]
    return (f"Card {code}: {holder}, {tier} tier, home branch {branch}; "
            f"may have up to {limit} items on loan at once")


@server.tool()
def late_fee_rule(item_type: str, tier: str) -> str:
    """Daily late fee in euros by item type (book, dvd, audiobook, magazine) and tier (standard, student, senior)."""
    item = _choice(item_type, LATE_FEE_EUR_PER_DAY, "item type", list(LATE_FEE_EUR_PER_DAY))
    level = _choice(tier, LATE_FEE_EUR_PER_DAY[item], "tier", list(LATE_FEE_EUR_PER_DAY[item]))
    return f"Late fee, {item} on a {level} card: EUR {LATE_FEE_EUR_PER_DAY[item][level]:.2f} per day late"


@server.tool()
def branch_contact(branch: str) -> str:
    """Name the head librarian of a branch (Millbrook, Harrowgate, Eastwick, Quillon Cross) and its closing day."""
    key = _choice(branch, BRANCHES, "branch", [b.title() for b in BRANCHES])
    head, closed = BRANCHES[key]
    return f"{key.title()} branch: head librarian {head}; closed on {closed}s"


if __name__ == "__main__":
    server.run()  # stdio: the client (hierplan) talks to it on stdin/stdout
