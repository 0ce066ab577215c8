"""The MCP server of the tools15 evaluation (hierplan/eval/data/tools15.jsonl): a made-up shop's stock, shipping
rates and suppliers, facts no model can know. FastMCP over stdio, as examples/mcp_server.py.

hierplan starts it from tools15_mcp.json (``python hierplan/eval/data/tools15_server.py``, from the repository's
root, with the venv's ``python`` first on PATH). tests/test_eval_tools.py calls the tool functions directly to
check the tasks' expected answers against these tables.
"""

from __future__ import annotations

from mcp.server.fastmcp import FastMCP

# Made up: product codes without digits, so that an answer's last number is the answer's.
STOCK_UNITS = {"VELK-LAMP": 238, "ORRIN-MUG": 1174, "DASK-CHAIR": 57, "TOLLY-SHELF": 0}
SHIPPING_EUR_PER_KG = {"valmora": 3.40, "ostrel": 2.75, "brisk harbor": 5.15, "quenby": 4.10}
SUPPLIERS = {  # product code: (supplier, lead time in days)
    "VELK-LAMP": ("Corvane Lighting", 9),
    "ORRIN-MUG": ("Halloway Parts", 12),
    "DASK-CHAIR": ("Tamberlin Works", 21),
    "TOLLY-SHELF": ("Brask & Sons", 16),
}

# log_level WARNING: a stdio server's stderr goes to hierplan's terminal; keep it quiet.
server = FastMCP("tools15-shop", log_level="WARNING")


def _sku(sku: str) -> str:
    code = "-".join(sku.upper().replace("_", "-").split())
    if code not in STOCK_UNITS:
        raise ValueError(f"no product {sku!r}; products: {', '.join(sorted(STOCK_UNITS))}")
    return code


@server.tool()
def stock_level(sku: str) -> str:
    """How many units of a product we have in stock now, by its product code (SKU), e.g. VELK-LAMP."""
    code = _sku(sku)
    return f"{code}: {STOCK_UNITS[code]} units in stock"


@server.tool()
def shipping_rate(city: str) -> str:
    """Our shipping rate to a city, in euros per kg (cities: Valmora, Ostrel, Brisk Harbor, Quenby)."""
    key = " ".join(city.lower().split())
    if key not in SHIPPING_EUR_PER_KG:
        raise ValueError(f"we do not ship to {city!r}; cities: {', '.join(c.title() for c in SHIPPING_EUR_PER_KG)}")
    return f"Shipping to {key.title()}: {SHIPPING_EUR_PER_KG[key]:.2f} EUR per kg"


@server.tool()
def supplier(sku: str) -> str:
    """Who supplies a product, by its product code (SKU), and their lead time in days."""
    code = _sku(sku)
    name, days = SUPPLIERS[code]
    return f"{code} is supplied by {name}; lead time {days} days"


if __name__ == "__main__":
    server.run()  # stdio: the client (hierplan) talks to it on stdin/stdout
